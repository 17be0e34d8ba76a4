/** The SQL driver over a `pg.Pool`: named (prepared) statements, transactions on one client. */
import type pg from 'pg';
import type { SqlDriver } from '../sql/sql-driver.js';
import { asUnavailable } from './connection-failure.js';

export interface PgDriverOptions {
  /** Names the database in a DatabaseUnavailableError (password hidden). */
  database: string;
  /** The pool's connect timeout, if the store set it, for messages. */
  connectTimeoutMs?: number;
}

export function pgDriver(pool: pg.Pool, options: PgDriverOptions): SqlDriver {
  const unavailable = (error: unknown): never => {
    throw asUnavailable(error, options.database, options.connectTimeoutMs);
  };
  return {
    async query(statement, values) {
      const config = { name: statement.name, text: statement.text, values: [...values] };
      if (statement.indexScansOnly) {
        return inTransaction('begin; set local enable_seqscan = off; set local jit = off', async (client) => (await client.query(config)).rows);
      }
      try {
        // A name makes each pooled connection parse and plan the statement once.
        return (await pool.query(config)).rows;
      } catch (error) {
        return unavailable(error);
      }
    },

    transaction(fn) {
      return inTransaction('begin', (client) =>
        fn({
          query: (text, values) => client.query(text, values),
          exec: async (text) => {
            await client.query(text);
          },
        }),
      );
    },
  };

  /** `begin` (and what goes with it), fn, commit, on one pooled client; rollback if anything throws. */
  async function inTransaction<T>(begin: string, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
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
      await client.query(begin);
      const result = await fn(client);
      await client.query('commit');
      return result;
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
