/** The SQL driver over a `pg.Pool`: named (prepared) statements, `indexScansOnly` ones in one
 *  round trip of their own transaction, and transactions on one client. Behind a
 *  transaction-mode pooler (`pooler: 'transaction'`) every statement is unnamed instead: the
 *  pooler hands each transaction any server connection, where a statement prepared on
 *  another one does not exist. */
import type pg from 'pg';
import { TransactionPoolerError } from '../../errors.js';
import type { SqlDriver, Statement } from '../sql/sql-driver.js';
import { asUnavailable } from './connection-failure.js';
import { assertSessionPerConnection } from './pooler-probe.js';

/** `session`: each pooled connection is one server session of its own (a direct connection or
 *  a session-mode pooler). `transaction`: a pooler may run each transaction on another. */
export type PoolerMode = 'session' | 'transaction';

export interface PgDriverOptions {
  /** Names the database in a DatabaseUnavailableError (password hidden). */
  database: string;
  /** The pool's connect timeout, if the store set it, for messages. */
  connectTimeoutMs?: number;
  /** Default `session`. */
  pooler?: PoolerMode;
}

/** Per connection, the indexScansOnly statements PREPAREd on it: kept for every driver, as
 *  stores may share a pool (a name carries a hash of its text, so one name is one text). */
const prepared = new WeakMap<pg.PoolClient, Set<string>>();
const DUPLICATE_PREPARED_STATEMENT = '42P05';
const UNDEFINED_PREPARED_STATEMENT = '26000';

export interface PgDriver extends SqlDriver {
  /** Resolves once the pool is known to fit the `pooler` mode (the first statement waits for
   *  it too); rejects with a TransactionPoolerError if it does not. */
  ready(): Promise<void>;
}

export function pgDriver(pool: pg.Pool, options: PgDriverOptions): PgDriver {
  const prepare = (options.pooler ?? 'session') === 'session';
  const unavailable = (error: unknown): never => {
    throw asUnavailable(error, options.database, options.connectTimeoutMs);
  };
  /** A named statement missing on, or already on, the connection it reached: only a pooler
   *  that moved the session between server connections does that. */
  const namedFailure = (error: unknown): never => {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === UNDEFINED_PREPARED_STATEMENT || code === DUPLICATE_PREPARED_STATEMENT) {
      throw new TransactionPoolerError(options.database, `${(error as Error).message} (${code})`, { cause: error });
    }
    return unavailable(error);
  };
  /** Once per driver, before its first statement (again after a failure): a store set for
   *  sessions refuses a transaction-mode pooler at once rather than failing here and there. */
  let checked: Promise<void> | undefined;
  const ready = (): Promise<void> => {
    if (!prepare) return Promise.resolve();
    checked ??= assertSessionPerConnection(pool, options.database).catch((error: unknown) => {
      checked = undefined;
      throw error instanceof TransactionPoolerError ? error : asUnavailable(error, options.database, options.connectTimeoutMs);
    });
    return checked;
  };
  return {
    ready,

    async query(statement, values) {
      await ready();
      if (statement.indexScansOnly) return prepare ? indexScansOnly(statement, values) : unpreparedIndexScansOnly(statement, values);
      // A name makes each pooled connection parse and plan the statement once.
      const config = prepare ? { name: statement.name, text: statement.text, values: [...values] } : { text: statement.text, values: [...values] };
      try {
        return (await pool.query(config)).rows;
      } catch (error) {
        return namedFailure(error);
      }
    },

    async transaction(fn) {
      await ready();
      return withClient(async (client) => {
        await client.query('begin');
        const result = await fn({
          query: (text, values) => client.query(text, values),
          exec: async (text) => {
            await client.query(text);
          },
        });
        await client.query('commit');
        return result;
      });
    },
  };

  /**
   * The statement with sequential scans and JIT off for its own transaction, in one round
   * trip: a simple query of begin, the settings, EXECUTE of the statement, commit. It is
   * prepared with SQL PREPARE, once per connection (parameter types from its casts), so
   * the server keeps its plan as for any named statement; that plan is made under these
   * settings. The values go in as literals, escaped by pg.
   */
  async function indexScansOnly(statement: Statement, values: readonly unknown[]): Promise<any[]> {
    return withClient(async (client) => {
      const names = prepared.get(client) ?? new Set<string>();
      if (!names.has(statement.name)) {
        // Already there (another copy of this module prepared it): the name carries a hash of
        // the text, so it is the same statement.
        await client.query(`prepare ${statement.name} as ${statement.text}`).catch((error: { code?: unknown }) => {
          if (error.code !== DUPLICATE_PREPARED_STATEMENT) throw error;
        });
        names.add(statement.name);
        prepared.set(client, names);
      }
      const args = values.length === 0 ? '' : `(${values.map((value) => literal(client, value)).join(', ')})`;
      const results = (await client.query(
        `begin; set local enable_seqscan = off; set local jit = off; execute ${statement.name}${args}; commit`,
      )) as unknown as pg.QueryResult[];
      // One result per statement of the query: EXECUTE's comes just before COMMIT's.
      return results[results.length - 2]!.rows;
    }).catch(namedFailure);
  }

  /** As indexScansOnly, unprepared: the settings, then the statement (planned for these
   *  values), in a transaction of its own on one server connection. Three round trips. */
  async function unpreparedIndexScansOnly(statement: Statement, values: readonly unknown[]): Promise<any[]> {
    return withClient(async (client) => {
      await client.query('begin; set local enable_seqscan = off; set local jit = off');
      const { rows } = await client.query(statement.text, [...values]);
      await client.query('commit');
      return rows;
    });
  }

  /** fn on one pooled client; if it throws, a rollback of whatever it left open. */
  async function withClient<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await pool.connect().catch(unavailable);
    let broken: Error | undefined;
    // The connection may drop between two of these queries (the server restarts): pg then
    // emits 'error' on the client, which the pool does not listen to while it is checked
    // out, and unheard it would crash the process. The next query fails and says why.
    const onError = (error: Error) => {
      broken = error;
    };
    client.on('error', onError);
    try {
      return await fn(client);
    } catch (error) {
      // A connection that cannot even roll back goes, rather than back to the pool.
      await client.query('rollback').catch((rollbackError: Error) => {
        broken = rollbackError;
      });
      return unavailable(error);
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }
}

/** A value as an SQL literal: null, a finite number, or a string escaped by pg. */
function literal(client: pg.PoolClient, value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'string') return client.escapeLiteral(value);
  throw new TypeError(`cannot send ${typeof value} as an SQL literal`);
}
