/**
 * A migration behind an open transaction (migrate.ts): PostgreSQL queues every later
 * statement on a table behind a waiting ALTER, so a migration that waited without limit
 * stopped every worker and enqueue for as long as the transaction stayed open. It waits a
 * lock timeout at most, gives way, and tries again.
 */
import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pgDriver } from '../../../src/adapters/postgres/pg-driver.js';
import { postgresStore } from '../../../src/adapters/postgres/index.js';
import { loadMigrations, migrate } from '../../../src/adapters/sql/migrate.js';
import { sqlSchema } from '../../../src/adapters/sql/sql-schema.js';
import { MigrationLockError } from '../../../src/errors.js';
import { describePostgres, dropSchema, freshSchema, testPool } from '../../support/postgres.js';

describePostgres('migrate beside an open transaction', (url) => {
  let pool: pg.Pool;
  const schemas: string[] = [];

  beforeAll(() => {
    pool = testPool(url, { max: 6 });
  });

  afterAll(async () => {
    for (const schema of schemas) await dropSchema(pool, schema);
    await pool.end();
  });

  /** A schema migrated up to 0030, a job in it, and the history held open by a transaction
   *  that only read it (as an enqueue in a caller's transaction, or a report, would). */
  async function heldBackBehindAReader() {
    const schema = freshSchema('jv_migrate_lock');
    schemas.push(schema);
    await pool.query(`create schema "${schema}"`);
    await pool.query(`create table "${schema}".migrations (version integer primary key, name text not null, applied_at timestamptz not null default now())`);
    const later = (await loadMigrations()).map((m) => m.version).filter((v) => v >= 31);
    for (const v of later) await pool.query(`insert into "${schema}".migrations (version, name) values ($1, 'held back')`, [v]);
    const store = postgresStore({ pool, schema });
    await store.migrate();
    await pool.query(`delete from "${schema}".migrations where version >= 31`);
    const reader = await pool.connect();
    await reader.query('begin');
    await reader.query(`select count(*) from "${schema}".job_events`);
    const run = (timing: { lockTimeoutMs: number; retryForMs: number; pauseMs: number }) =>
      migrate(pgDriver(pool, { database: 'test' }), sqlSchema(schema), timing);
    return { schema, store, reader, later, run };
  }

  it('a claim made while the migration waits goes through; the migration applies once the transaction ends', async () => {
    const { schema, store, reader, later, run } = await heldBackBehindAReader();
    await store.enqueueJobs({ jobs: [{ queue: 'q', kind: 'k', payload: {}, maxAttempts: 3 }] });
    try {
      const migrating = run({ lockTimeoutMs: 300, retryForMs: 60_000, pauseMs: 100 });
      // The ALTER of 0031 waiting for the reader's lock: a claim (a history row) would queue behind it.
      const { pid } = (await reader.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!;
      for (;;) {
        const { rows } = await pool.query('select 1 from pg_stat_activity where $1 = any(pg_blocking_pids(pid))', [pid]);
        if (rows.length > 0) break;
      }
      const claimed = await store.claimJobs({ workerId: 'w', leaseMs: 30_000, queues: [{ queue: 'q', limit: 1 }] });
      expect(claimed).toHaveLength(1);
      expect((await pool.query(`select version from "${schema}".migrations where version >= 31`)).rows).toEqual([]);
      await reader.query('rollback');
      expect(await migrating).toEqual(later);
    } finally {
      await reader.query('rollback').catch(() => {});
      reader.release();
      await store.close();
    }
  });

  it('gives up with MigrationLockError while the transaction stays open, having applied nothing', async () => {
    const { schema, store, reader, later, run } = await heldBackBehindAReader();
    try {
      const error = await run({ lockTimeoutMs: 100, retryForMs: 700, pauseMs: 100 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(MigrationLockError);
      expect(error).toMatchObject({ code: 'migration_lock_timeout', schema, cause: { code: '55P03' } });
      expect((error as MigrationLockError).tries).toBeGreaterThan(1);
      expect((error as Error).message).toMatch(/nothing was applied/);
      expect((await pool.query(`select version from "${schema}".migrations where version >= 31`)).rows).toEqual([]);
      await reader.query('rollback');
      expect(await run({ lockTimeoutMs: 100, retryForMs: 700, pauseMs: 100 })).toEqual(later);
    } finally {
      await reader.query('rollback').catch(() => {});
      reader.release();
      await store.close();
    }
  });
});
