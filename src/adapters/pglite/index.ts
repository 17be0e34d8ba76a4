export { pgliteStore } from './pglite-store.js';
export type { PgliteDatabase, PgliteStoreOptions, PgliteTransaction } from './pglite-store.js';
export { SqlJobStore } from '../sql/sql-store.js';
export { DataDirLockedError, DataDirUnusableError } from '../../errors.js';
