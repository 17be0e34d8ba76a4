export { postgresStore } from './postgres-store.js';
export type { PostgresStoreOptions } from './postgres-store.js';
export { SqlJobStore } from '../sql/sql-store.js';
