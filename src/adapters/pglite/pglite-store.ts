/**
 * The embedded store: the same SQL as the Postgres store, run in-process by PGlite (PostgreSQL
 * compiled to WebAssembly). No server: in memory by default, or in a data directory that
 * survives restarts. One session, so claims are serialised; for one process, not many: the
 * store locks its data directory while open (data-dir-lock.ts).
 */
import { PGlite } from '@electric-sql/pglite';
import { InvalidOptionError } from '../../errors.js';
import type { Clock } from '../../types.js';
import { clockSteps } from '../clock-steps.js';
import type { SqlDriver } from '../sql/sql-driver.js';
import { SqlJobStore } from '../sql/sql-store.js';
import { sqlSchema } from '../sql/sql-schema.js';
import { parseTimestamptz } from '../sql/timestamptz.js';
import { notifyDebounceOption } from '../sql/wake-hub.js';
import { lockDataDir } from './data-dir-lock.js';

export interface PgliteStoreOptions {
  /** Your PGlite instance (`new PGlite(…)`). The store never closes it. Excludes `dataDir`. */
  db?: PgliteDatabase;
  /** Where the store's own instance keeps its files, locked while the store is open: a second
   *  opener (another process, the CLI) gets `DataDirLockedError`. Default: in memory (gone
   *  on close). */
  dataDir?: string;
  /** Schema of the store's tables, created by `migrate()`. Default `jobvisor`. */
  schema?: string;
  /** Where "now" comes from. Default: the database's `now()`. Inject one in tests. */
  clock?: Clock;
  /** A monotonic clock: when "now" (PGlite's `now()` follows the process's wall clock) steps
   *  against it, held leases move by the step (clock-steps.ts). Default `monotonicClock`
   *  with the default `clock`; with an injected `clock` and no `elapsed`, that clock's moves
   *  are time passing, never steps. */
  elapsed?: Clock;
  /** As in the Postgres store: wake-ups for one queue closer together than this collapse
   *  into one. Default 10 ms. */
  notifyDebounceMs?: number;
}

/**
 * What the store uses of a PGlite instance; PGlite's `PGlite` fits. A structural type, so that
 * these declarations do not load PGlite's, which need the DOM and Emscripten types a Node
 * project does not have (with `skipLibCheck: false` its build would fail).
 */
export interface PgliteDatabase {
  query<T>(text: string, params?: unknown[], options?: PgliteQueryOptions): Promise<{ rows: T[] }>;
  transaction<T>(fn: (tx: PgliteTransaction) => Promise<T>): Promise<T>;
  listen(channel: string, callback: (payload: string) => void): Promise<unknown>;
  unlisten(channel: string, callback?: (payload: string) => void): Promise<void>;
}

/** What the store uses of a PGlite transaction. */
export interface PgliteTransaction {
  query<T>(text: string, params?: unknown[], options?: PgliteQueryOptions): Promise<{ rows: T[] }>;
  exec(text: string): Promise<unknown>;
}

/** What the store passes of PGlite's query options. */
export interface PgliteQueryOptions {
  parsers?: Record<number, (text: string, typeId: number) => unknown>;
}

/** `timestamptz` (OID 1184) read as `pg` reads it: PGlite's own parser reads the years 1 to
 *  99 as 1950 to 2049, and BC years as an Invalid Date. */
const QUERY_OPTIONS: PgliteQueryOptions = { parsers: { 1184: parseTimestamptz } };

export function pgliteStore(options: PgliteStoreOptions = {}): SqlJobStore {
  const schema = sqlSchema(options.schema);
  const notifyDebounceMs = notifyDebounceOption(options.notifyDebounceMs);
  if (options.db !== undefined && options.dataDir !== undefined) {
    throw new InvalidOptionError('dataDir', 'give either `db` (your PGlite) or `dataDir`, not both');
  }
  // Before PGlite touches the directory; throws DataDirLockedError if another holds it.
  const lock = options.dataDir === undefined ? undefined : lockDataDir(options.dataDir);
  // Starts in the background; queries wait until it is ready.
  const own = options.db === undefined ? new PGlite(options.dataDir) : undefined;
  const db: PgliteDatabase = own ?? options.db!;
  return new SqlJobStore({
    driver: pgliteDriver(db),
    schema,
    clock: options.clock,
    steps: clockSteps(options.clock, options.elapsed),
    notifyDebounceMs,
    listen: async (onQueue) => {
      // PGlite puts the channel into LISTEN as given, so it is quoted here. Not the function
      // listen() resolves with: it unquotes the name before UNLISTEN (PGlite 0.5).
      const channel = `"${schema.channel}"`;
      await db.listen(channel, onQueue);
      return () => db.unlisten(channel, onQueue);
    },
    release: async () => {
      try {
        await own?.close();
      } finally {
        lock?.release();
      }
    },
  });
}

function pgliteDriver(db: PgliteDatabase): SqlDriver {
  return {
    // PGlite plans every statement on each call (nothing is prepared), so `indexScansOnly`,
    // which guards a plan kept across calls, has nothing to do here.
    async query(statement, values) {
      return (await db.query(statement.text, [...values], QUERY_OPTIONS)).rows;
    },
    transaction(fn) {
      return db.transaction((tx) =>
        fn({
          query: (text, values) => tx.query(text, values, QUERY_OPTIONS),
          exec: async (text) => {
            await tx.exec(text);
          },
        }),
      );
    },
  };
}
