/** The SQL driver over a `pg.Pool`: named (prepared) statements unless a statement asks to be
 *  planned on every call, transactions on one client. */
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
      try {
        // A name makes each pooled connection parse and plan the statement once.
        const config = statement.prepare ? { name: statement.name, text: statement.text } : { text: statement.text };
        const result = await pool.query({ ...config, values: [...values] });
        return result.rows;
      } catch (error) {
        return unavailable(error);
      }
    },

    async transaction(fn) {
      const client = await pool.connect().catch(unavailable);
      let broken: Error | undefined;
      try {
        await client.query('begin');
        const result = await fn({
          query: (text, values) => client.query(text, values),
          exec: async (text) => {
            await client.query(text);
          },
        });
        await client.query('commit');
        return result;
      } catch (error) {
        // A connection that cannot even roll back goes, rather than back to the pool.
        await client.query('rollback').catch((rollbackError: Error) => {
          broken = rollbackError;
        });
        return unavailable(error);
      } finally {
        client.release(broken);
      }
    },
  };
}
