import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../../../src/adapters/postgres/index.js';
import { loadMigrations } from '../../../src/adapters/sql/migrate.js';
import { describePostgres, dropSchema, freshSchema, testPool } from '../../support/postgres.js';

describe('loadMigrations', () => {
  it('finds the numbered .sql files next to the module, in order, each with the schema placeholder', async () => {
    const migrations = await loadMigrations();
    expect(migrations[0]).toMatchObject({ version: 1, name: '0001-jobs' });
    const versions = migrations.map((m) => m.version);
    expect(versions).toEqual([...new Set(versions)].sort((x, y) => x - y));
    for (const migration of migrations) expect(migration.text).toContain(':JOBVISOR_SCHEMA.');
  });
});

describePostgres('migrate', (url) => {
  const schemas: string[] = [];
  let pool: pg.Pool;

  beforeAll(() => {
    pool = testPool(url, { max: 12 });
  });

  afterAll(async () => {
    for (const schema of schemas) await dropSchema(pool, schema);
    await pool.end();
  });

  function schemaName(): string {
    const schema = freshSchema('jv_migrate');
    schemas.push(schema);
    return schema;
  }

  it('creates the schema, then finds nothing left to do', async () => {
    const schema = schemaName();
    const store = postgresStore({ pool, schema });
    const migrations = await loadMigrations();
    expect(await store.migrate()).toEqual(migrations.map((m) => m.version));
    expect(await store.migrate()).toEqual([]);
    const { rows } = await pool.query(`select version, name from "${schema}".migrations order by version`);
    expect(rows).toEqual(migrations.map(({ version, name }) => ({ version, name })));
    const tables = await pool.query('select tablename from pg_tables where schemaname = $1 order by 1', [schema]);
    expect(tables.rows.map((row: { tablename: string }) => row.tablename)).toEqual(
      expect.arrayContaining(['job_events', 'jobs', 'migrations', 'queue_starts', 'schedules']),
    );
    await store.close();
  });

  it('is applied exactly once when many processes start at once', async () => {
    const schema = schemaName();
    // Separate pools: as separate processes, each with its own connection.
    const pools = Array.from({ length: 8 }, () => testPool(url, { max: 1 }));
    try {
      const results = await Promise.all(pools.map((p) => postgresStore({ pool: p, schema }).migrate()));
      const versions = (await loadMigrations()).map((m) => m.version);
      expect(results.filter((applied) => applied.length > 0)).toEqual([versions]);
      const { rows } = await pool.query(`select count(*)::int as n from "${schema}".migrations`);
      expect(rows[0].n).toBe(versions.length);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });

  it('migrates different schemas side by side', async () => {
    const [a, b] = [schemaName(), schemaName()];
    const results = await Promise.all([a, b].map((schema) => postgresStore({ pool, schema }).migrate()));
    const versions = (await loadMigrations()).map((m) => m.version);
    expect(results).toEqual([versions, versions]);
  });
});
