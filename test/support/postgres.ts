/**
 * For test files that need the PostgreSQL server found by postgres-server.ts (the global
 * setup): `describePostgres` runs its body against it, fails on CI when there is none, and
 * otherwise skips it loudly. Each file works in schemas of its own (random suffix), dropped
 * afterwards, so files run in parallel on one database.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, inject, it } from 'vitest';
import { postgresStore } from '../../src/adapters/postgres/index.js';

export function describePostgres(title: string, body: (url: string) => void): void {
  const target = inject('postgres');
  if ('url' in target) {
    describe(title, () => body(target.url));
  } else if ('error' in target) {
    describe(title, () => {
      it('reaches the Postgres server', () => {
        throw new Error(target.error);
      });
    });
  } else {
    console.warn(`[jobvisor tests] SKIPPED "${title}": ${target.skipped}`);
    describe.skip(title, () => body(''));
  }
}

/** A schema name no other test file uses: `prefix_<16 hex>`. */
export function freshSchema(prefix: string): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}

/** A pool whose idle connections may be terminated by a test without crashing the run. */
export function testPool(url: string, options: pg.PoolConfig = {}): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, ...options });
  pool.on('error', () => {});
  return pool;
}

export async function dropSchema(pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`drop schema if exists "${schema}" cascade`);
}

/** Vacuums and analyzes a plan test's tables so the planner's choice is the same on every run:
 *  autovacuum kept off them (its own later sample would replace these statistics mid-file) and
 *  a sample of up to 300,000 rows, the whole of a plan test's table (the default, 30,000 rows
 *  picked at random, let a rare state's estimate, and so the chosen index, differ run to run).
 *  A table of a million rows keeps the default target: its sample of 30,000 already holds
 *  enough of each state, and a larger one costs seconds. */
export async function settleStatistics(pool: pg.Pool, schema: string, tables: readonly string[], target = 1000): Promise<void> {
  const names = tables.map((table) => `"${schema}".${table}`).join(', ');
  const client = await pool.connect();
  try {
    for (const table of tables) await client.query(`alter table "${schema}".${table} set (autovacuum_enabled = false)`);
    await client.query(`set default_statistics_target = ${target}`);
    await client.query(`vacuum analyze ${names}`);
  } finally {
    client.release();
  }
}

/**
 * A migrated PostgreSQL store in a schema of the file's own, for the file's tests: opened
 * before them, closed and dropped after. Read `pool`, `store` and `schema` inside tests.
 */
export function usePostgresStore(url: string, prefix: string) {
  const schema = freshSchema(prefix);
  const handle = { schema, pool: undefined as unknown as pg.Pool, store: undefined as unknown as ReturnType<typeof postgresStore> };
  beforeAll(async () => {
    handle.pool = testPool(url);
    handle.store = postgresStore({ pool: handle.pool, schema });
    await handle.store.migrate();
  });
  afterAll(async () => {
    await handle.store.close();
    await dropSchema(handle.pool, schema);
    await handle.pool.end();
  });
  return handle;
}
