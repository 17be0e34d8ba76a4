/**
 * The production store: PostgreSQL through `pg`. Many processes on many machines share one
 * database; claims never block each other (SKIP LOCKED) and every write is fenced.
 */
import pg from 'pg';
import { InvalidOptionError } from '../../errors.js';
import type { Clock, Logger } from '../../types.js';
import { assertPoolSize, assertTimerMs } from '../../validation.js';
import { SqlJobStore } from '../sql/sql-store.js';
import { sqlSchema } from '../sql/sql-schema.js';
import { notifyDebounceOption } from '../sql/wake-hub.js';
import { describePool, redactUrl } from './connection-failure.js';
import { assertPostgresUrl } from './connection-string.js';
import { pgDriver } from './pg-driver.js';
import type { PoolerMode } from './pg-driver.js';
import { pgListen } from './pg-listener.js';

export interface PostgresStoreOptions {
  /** Your pool. The store never closes it; while anyone is subscribed it holds one of its
   *  connections for LISTEN. One of `pool` or `connectionString` is required. */
  pool?: pg.Pool;
  /** Used to open a pool of the store's own (default size), closed by `close()`. A
   *  `postgres://` or `postgresql://` URL, checked at once. */
  connectionString?: string;
  /** The store's own pool: give up on a connection (new, or a free one of the pool) after
   *  this long, with a DatabaseUnavailableError. Default 10,000 ms; the LISTEN connection to
   *  `listenConnectionString` too. For your own `pool`, set its `connectionTimeoutMillis`
   *  instead. */
  connectTimeoutMs?: number;
  /** The store's own pool: at most this many connections (one more is held for LISTEN while
   *  anyone is subscribed, taken from these). Default 10, as `pg`'s. For your own `pool`, set
   *  its `max` instead. */
  poolSize?: number;
  /** Schema of the store's tables, created by `migrate()`. Default `jobvisor`. */
  schema?: string;
  /** Where "now" comes from. Default: the database's `now()`, one clock for every process.
   *  Inject one in tests to drive time. */
  clock?: Clock;
  /** Wake-ups for one queue closer together than this collapse into one (the first is
   *  delivered at once). Default 10 ms; 0 delivers every one. */
  notifyDebounceMs?: number;
  /** What stands between the store and the server. `session` (default): each connection is
   *  a server session of its own, a direct connection or a session-mode pooler; statements are
   *  prepared once per connection and LISTEN runs on one of the pool's. A transaction-mode
   *  pooler found there is refused with a TransactionPoolerError before the first statement.
   *  `transaction`: a transaction-mode pooler (PgBouncer `pool_mode = transaction`, most
   *  managed poolers) may run each transaction on another server connection; statements run
   *  unprepared (parsed and planned on every call), nothing is kept in a session, and
   *  wake-ups need `listenConnectionString`, else workers poll. */
  pooler?: PoolerMode;
  /** A `postgres://` URL for LISTEN, which a transaction-mode pooler cannot carry: a direct
   *  connection to the server (or a session-mode pooler). One connection, held while anyone
   *  is subscribed, besides the pool. Default: LISTEN on a connection of the pool, or, with
   *  `pooler: 'transaction'`, no LISTEN at all (a warning is logged; workers find jobs by
   *  polling, every `pollIntervalMs`). */
  listenConnectionString?: string;
  /** Told when the LISTEN connection drops and comes back. Default: silent. */
  logger?: Logger;
}

export function postgresStore(options: PostgresStoreOptions): SqlJobStore {
  const schema = sqlSchema(options.schema);
  const notifyDebounceMs = notifyDebounceOption(options.notifyDebounceMs);
  if ((options.pool === undefined) === (options.connectionString === undefined)) {
    throw new InvalidOptionError('pool', 'give exactly one of `pool` (your pg.Pool) or `connectionString`');
  }
  if (options.pool !== undefined && options.connectTimeoutMs !== undefined) {
    throw new InvalidOptionError('connectTimeoutMs', "applies to the store's own pool; set connectionTimeoutMillis on your pool instead");
  }
  if (options.pool !== undefined && options.poolSize !== undefined) {
    throw new InvalidOptionError('poolSize', "applies to the store's own pool; set max on your pool instead");
  }
  const pooler = poolerOption(options.pooler);
  if (options.listenConnectionString !== undefined) assertPostgresUrl('listenConnectionString', options.listenConnectionString);
  const { pool, ...named } = options.pool
    ? { pool: options.pool, database: describePool(options.pool) }
    : ownPool(options.connectionString, options);
  const listenPool = listenerPool(options.listenConnectionString, options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS, options.logger);
  if (pooler === 'transaction' && !listenPool) {
    options.logger?.warn(
      { database: named.database },
      "jobvisor: pooler 'transaction' without listenConnectionString: no LISTEN, so no wake-ups; workers find jobs by polling (pollIntervalMs)",
    );
  }
  const listenOn = listenPool ?? (pooler === 'session' ? pool : undefined);
  const driver = pgDriver(pool, { ...named, pooler });
  return new SqlJobStore({
    driver,
    schema,
    clock: options.clock,
    notifyDebounceMs,
    listen: listenOn
      ? async (onQueue, onReconnect) => {
          // LISTEN on the pool through a transaction-mode pooler would hear nothing: refused as
          // the statements are, whichever comes first.
          if (listenOn === pool) await driver.ready();
          return pgListen({ pool: listenOn, channel: schema.channel, onNotify: onQueue, onReconnect, logger: options.logger });
        }
      : undefined,
    release: async () => {
      if (pool !== options.pool) await pool.end();
      await listenPool?.end();
    },
  });
}

const POOLER_MODES: readonly PoolerMode[] = ['session', 'transaction'];

function poolerOption(value: unknown): PoolerMode {
  if (value === undefined) return 'session';
  if (!POOLER_MODES.includes(value as PoolerMode)) {
    throw new InvalidOptionError('pooler', `must be 'session' or 'transaction', got ${JSON.stringify(value)}`);
  }
  return value as PoolerMode;
}

/** The listener's own pool of one connection, when `listenConnectionString` is given. */
function listenerPool(url: string | undefined, connectTimeoutMs: number, logger: Logger | undefined): pg.Pool | undefined {
  if (url === undefined) return undefined;
  const pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: connectTimeoutMs });
  pool.on('error', (error) => logger?.warn({ err: error }, 'jobvisor: an idle LISTEN connection failed'));
  return pool;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const DEFAULT_POOL_SIZE = 10;

/** The store's own pool, its URL and size checked before anything connects. */
function ownPool(
  url: unknown,
  options: Pick<PostgresStoreOptions, 'connectTimeoutMs' | 'poolSize' | 'logger'>,
): { pool: pg.Pool; database: string; connectTimeoutMs: number } {
  const { connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS, poolSize = DEFAULT_POOL_SIZE, logger } = options;
  assertPostgresUrl('connectionString', url);
  assertTimerMs('connectTimeoutMs', connectTimeoutMs);
  assertPoolSize('poolSize', poolSize);
  const pool = new pg.Pool({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs, max: poolSize });
  // An idle connection that the server closes emits 'error' on the pool; unhandled, that
  // would crash the process. The pool replaces it on the next checkout.
  pool.on('error', (error) => logger?.warn({ err: error }, 'jobvisor: an idle database connection failed'));
  return { pool, database: redactUrl(url), connectTimeoutMs };
}
