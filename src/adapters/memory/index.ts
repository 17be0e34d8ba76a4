export { MemoryStore, memoryStore } from './memory-store.js';
export type { MemoryStoreOptions } from './memory-store.js';
