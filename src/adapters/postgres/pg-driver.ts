/** The SQL driver over a `pg.Pool`: named (prepared) statements, transactions on one client. */
import type pg from 'pg';
import type { SqlDriver } from '../sql/sql-driver.js';

export function pgDriver(pool: pg.Pool): SqlDriver {
  return {
    async query(statement, values) {
      // A name makes each pooled connection parse and plan the statement once.
      const result = await pool.query({ name: statement.name, text: statement.text, values: [...values] });
      return result.rows;
    },

    async transaction(fn) {
      const client = await pool.connect();
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
        throw error;
      } finally {
        client.release(broken);
      }
    },
  };
}
