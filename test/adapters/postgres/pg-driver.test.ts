import pg from 'pg';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { pgDriver } from '../../../src/adapters/postgres/pg-driver.js';
import { DatabaseUnavailableError, TransactionPoolerError } from '../../../src/errors.js';
import { describePostgres, testPool } from '../../support/postgres.js';

const statement = { name: 'jobvisor_test_backend_pid', text: 'select pg_backend_pid() as pid', indexScansOnly: false };

describePostgres('the pg driver', (url) => {
  let admin: pg.Pool;

  beforeAll(() => {
    admin = testPool(url);
  });

  afterAll(async () => {
    await admin.end();
  });

  /** Ends the backend and waits until the server no longer lists it. */
  async function terminate(pid: number): Promise<void> {
    await admin.query('select pg_terminate_backend($1)', [pid]);
    await vi.waitFor(
      async () => {
        const { rows } = await admin.query('select count(*)::int as n from pg_stat_activity where pid = $1', [pid]);
        expect(rows[0].n).toBe(0);
      },
      { timeout: 5_000, interval: 10 },
    );
  }

  it('survives the server dropping a transaction\'s connection between two queries: the transaction fails as unavailable, the pool goes on', async () => {
    // A bare pool, with no 'error' listener of its own: what the driver does not hear crashes the run.
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    const driver = pgDriver(pool, { database: 'test' });
    try {
      const failed = driver.transaction(async (session) => {
        const { rows } = await session.query('select pg_backend_pid() as pid');
        await terminate(rows[0].pid);
        // The connection's end fails this query and comes as an 'error' event on the client.
        await session.query('select 1');
      });
      await expect(failed).rejects.toBeInstanceOf(DatabaseUnavailableError);
      // The broken connection was thrown away, not handed out again.
      const [{ pid }] = await driver.query(statement, []);
      expect(typeof pid).toBe('number');
    } finally {
      await pool.end();
    }
  });

  it('runs an indexScansOnly statement with sequential scans and JIT off for its own transaction only', async () => {
    const pool = testPool(url, { max: 1 });
    const driver = pgDriver(pool, { database: 'test' });
    try {
      const settings = {
        name: 'jobvisor_test_settings',
        text: "select current_setting('enable_seqscan') as seqscan, current_setting('jit') as jit",
        indexScansOnly: true,
      };
      expect(await driver.query(settings, [])).toEqual([{ seqscan: 'off', jit: 'off' }]);
      // SET LOCAL, which holds only inside a transaction: the connection's own settings are
      // untouched afterwards.
      const plain = await driver.query({ ...settings, name: 'jobvisor_test_settings_plain', indexScansOnly: false }, []);
      expect(plain).toEqual([{ seqscan: 'on', jit: expect.any(String) }]);
    } finally {
      await pool.end();
    }
  });

  it('sends an indexScansOnly statement\'s values as literals that come back as they went', async () => {
    const pool = testPool(url, { max: 2 });
    const driver = pgDriver(pool, { database: 'test' });
    try {
      const echo = { name: 'jobvisor_test_echo', text: 'select $1::text as text, $2::float8 as n, $3::jsonb as json, $4::text as none', indexScansOnly: true };
      const hostile = "it's a \\ test'); drop table x; --";
      const rows = await driver.query(echo, [hostile, -1.5e-3, JSON.stringify({ quote: "'", backslash: '\\' }), null]);
      expect(rows).toEqual([{ text: hostile, n: -1.5e-3, json: { quote: "'", backslash: '\\' }, none: null }]);
      // Prepared once per connection, however many stores share the pool.
      const other = pgDriver(pool, { database: 'test' });
      for (let i = 0; i < 4; i++) expect(await other.query(echo, ['again', 1, null, null])).toHaveLength(1);
      await expect(driver.query(echo, [{ not: 'a literal' }, 1, null, null])).rejects.toThrow(TypeError);
      // A connection that has it prepared already, by someone this driver does not know of.
      const solo = testPool(url, { max: 1 });
      try {
        await solo.query(`prepare ${echo.name} as ${echo.text}`);
        expect(await pgDriver(solo, { database: 'test' }).query(echo, ['known', 2, null, null])).toEqual([
          { text: 'known', n: 2, json: null, none: null },
        ]);
      } finally {
        await solo.end();
      }
    } finally {
      await pool.end();
    }
  });

  it('refuses a named statement gone from the connection it reached, as behind a transaction-mode pooler', async () => {
    const pool = testPool(url, { max: 1 });
    const driver = pgDriver(pool, { database: 'test' });
    try {
      await driver.query(statement, []);
      // The one connection forgets it, as another server connection behind a pooler never knew it.
      await pool.query('deallocate all');
      const refused = await driver.query(statement, []).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(TransactionPoolerError);
      expect((refused as Error).message).toMatch(/prepared statement "jobvisor_test_backend_pid" does not exist \(26000\).*pooler: 'transaction'/);
    } finally {
      await pool.end();
    }
  });

  it("with pooler: 'transaction', prepares nothing, and still runs indexScansOnly statements with sequential scans off", async () => {
    const pool = testPool(url, { max: 1 });
    const driver = pgDriver(pool, { database: 'test', pooler: 'transaction' });
    try {
      const settings = { name: 'jobvisor_test_unprepared', text: "select current_setting('enable_seqscan') as seqscan, $1::int as n", indexScansOnly: true };
      expect(await driver.query(settings, [7])).toEqual([{ seqscan: 'off', n: 7 }]);
      expect(await driver.query({ ...settings, indexScansOnly: false }, [8])).toEqual([{ seqscan: 'on', n: 8 }]);
      await driver.transaction((session) => session.query('select 1'));
      const { rows } = await pool.query('select count(*)::int as n from pg_prepared_statements');
      expect(rows).toEqual([{ n: 0 }]);
    } finally {
      await pool.end();
    }
  });
});
