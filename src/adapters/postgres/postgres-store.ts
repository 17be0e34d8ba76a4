/**
 * The production store: PostgreSQL through `pg`. Many processes on many machines share one
 * database; claims never block each other (SKIP LOCKED) and every write is fenced.
 */
import pg from 'pg';
import { InvalidOptionError } from '../../errors.js';
import type { Clock, Logger } from '../../types.js';
import { SqlJobStore } from '../sql/sql-store.js';
import { sqlSchema } from '../sql/sql-schema.js';
import { notifyDebounceOption } from '../sql/wake-hub.js';
import { pgDriver } from './pg-driver.js';
import { pgListen } from './pg-listener.js';

export interface PostgresStoreOptions {
  /** Your pool. The store never closes it; while anyone is subscribed it holds one of its
   *  connections for LISTEN. One of `pool` or `connectionString` is required. */
  pool?: pg.Pool;
  /** Used to open a pool of the store's own (default size), closed by `close()`. */
  connectionString?: string;
  /** Schema of the store's tables, created by `migrate()`. Default `jobvisor`. */
  schema?: string;
  /** Where "now" comes from. Default: the database's `now()`, one clock for every process.
   *  Inject one in tests to drive time. */
  clock?: Clock;
  /** Wake-ups for one queue closer together than this collapse into one (the first is
   *  delivered at once). Default 10 ms; 0 delivers every one. */
  notifyDebounceMs?: number;
  /** Told when the LISTEN connection drops and comes back. Default: silent. */
  logger?: Logger;
}

export function postgresStore(options: PostgresStoreOptions): SqlJobStore {
  const schema = sqlSchema(options.schema);
  const notifyDebounceMs = notifyDebounceOption(options.notifyDebounceMs);
  if ((options.pool === undefined) === (options.connectionString === undefined)) {
    throw new InvalidOptionError('pool', 'give exactly one of `pool` (your pg.Pool) or `connectionString`');
  }
  const pool = options.pool ?? ownPool(options.connectionString!, options.logger);
  return new SqlJobStore({
    driver: pgDriver(pool),
    schema,
    clock: options.clock,
    notifyDebounceMs,
    listen: (onQueue) => pgListen({ pool, channel: schema.channel, onNotify: onQueue, logger: options.logger }),
    release: async () => {
      if (pool !== options.pool) await pool.end();
    },
  });
}

function ownPool(connectionString: string, logger: Logger | undefined): pg.Pool {
  const pool = new pg.Pool({ connectionString });
  // An idle connection that the server closes emits 'error' on the pool; unhandled, that
  // would crash the process. The pool replaces it on the next checkout.
  pool.on('error', (error) => logger?.warn({ err: error }, 'jobvisor: an idle database connection failed'));
  return pool;
}
