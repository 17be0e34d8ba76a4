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

  /** Marks `version` and every later migration applied, so that migrate() stops before them;
   *  answers their versions. */
  async function holdBack(schema: string, version: number): Promise<number[]> {
    await pool.query(`create schema "${schema}"`);
    await pool.query(`create table "${schema}".migrations (version integer primary key, name text not null, applied_at timestamptz not null default now())`);
    const later = (await loadMigrations()).map((m) => m.version).filter((v) => v >= version);
    for (const v of later) await pool.query(`insert into "${schema}".migrations (version, name) values ($1, 'held back')`, [v]);
    return later;
  }

  it('0030 keeps every kind of stored step, in order, in job_steps\' one-letter kinds; a new step comes after them', async () => {
    const schema = schemaName();
    const later = await holdBack(schema, 30);
    const store = postgresStore({ pool, schema });
    await store.migrate();
    const { id, token } = (
      await pool.query(`insert into "${schema}".jobs (queue, kind, payload, state, run_at, attempt, max_attempts, created_at, updated_at, worker_id, lease_token, lease_expires_at)
        values ('q', 'k', '{}', 'running', now(), 1, 3, now(), now(), 'w', gen_random_uuid(), now() + interval '1 hour') returning id::text as id, lease_token::text as token`)
    ).rows[0] as { id: string; token: string };
    const at = (ms: number) => new Date(1_700_000_000_000 + ms);
    // The 0027 layout: kind and a wait's status as text; an entry of an unknown kind no build wrote.
    await pool.query(
      `insert into "${schema}".job_steps (job_id, kind, name, at, value, until, signal, status) values
        ($1, 'step', 'charge', $2, '{"chargeId":"ch_1"}', null, null, null),
        ($1, 'sleep', 'nap', $3, null, $4, null, null),
        ($1, 'signal', 'ship', $5, null, '9999-12-31 23:59:59.999+00', 'shipped', 'waiting'),
        ($1, 'signal', 'ship', $6, '{"carrier":"dhl"}', null, 'shipped', 'received'),
        ($1, 'signal', 'review', $7, null, $8, 'reviewed', 'timedOut'),
        ($1, 'mystery', 'x', $7, null, null, null, null)`,
      [id, at(0), at(1), at(86_400_000), at(2), at(3), at(4), at(5)],
    );
    await pool.query(`delete from "${schema}".migrations where version >= 30`);
    expect(await store.migrate()).toEqual(later);

    const expected = [
      { kind: 'step', name: 'charge', at: at(0), result: { chargeId: 'ch_1' } },
      { kind: 'sleep', name: 'nap', at: at(1), until: at(86_400_000) },
      { kind: 'signal', name: 'ship', at: at(2), signal: 'shipped', status: 'waiting', until: null },
      { kind: 'signal', name: 'ship', at: at(3), signal: 'shipped', status: 'received', until: null, payload: { carrier: 'dhl' } },
      { kind: 'signal', name: 'review', at: at(4), signal: 'reviewed', status: 'timedOut', until: at(5) },
    ];
    expect((await store.getJob({ id }))!.steps).toEqual(expected);
    expect(await store.checkpointSteps({ steps: [{ id, leaseToken: token, name: 'email', result: 7 }] })).toEqual([true]);
    const steps = (await store.getJob({ id }))!.steps;
    expect(steps.slice(0, 5)).toEqual(expected);
    expect(steps[5]).toMatchObject({ kind: 'step', name: 'email', result: 7 });
    expect(steps).toHaveLength(6);
    const kinds = await pool.query(`select kind::text from "${schema}".job_steps order by id`);
    expect(kinds.rows.map((r: { kind: string }) => r.kind)).toEqual(['s', 'z', 'w', 'r', 't', 's']);
    await store.close();
  });

  it('0027 moves every job’s stored steps out of its row into job_steps, in order; a deleted job’s steps go with it', async () => {
    const schema = schemaName();
    // Every migration before 0027: the layout of the build before it.
    const later = await holdBack(schema, 27);
    const store = postgresStore({ pool, schema });
    await store.migrate();
    const old = [
      { n: 'charge', k: 'step', a: 1_700_000_000_000, v: { chargeId: 'ch_1' } },
      { n: 'ship', k: 'signal', a: 1_700_000_000_500, s: 'shipped', r: 'waiting', u: 1_700_600_000_000 },
      { n: 'ship', k: 'signal', a: 1_700_000_100_000, s: 'shipped', r: 'received', v: { carrier: 'dhl' } },
    ];
    const insert = `insert into "${schema}".jobs (queue, kind, payload, run_at, max_attempts, created_at, updated_at, steps)
      values ('q', 'k', '{}', now(), 3, now(), now(), $1::jsonb) returning id::text as id`;
    const kept = (await pool.query(insert, [JSON.stringify(old)])).rows[0].id as string;
    const none = (await pool.query(insert, [null])).rows[0].id as string;
    const odd = (await pool.query(insert, [JSON.stringify({ not: 'an array' })])).rows[0].id as string;
    await pool.query(`delete from "${schema}".migrations where version >= 27`);
    expect(await store.migrate()).toEqual(later);

    const job = await store.getJob({ id: kept });
    expect(job!.steps).toEqual([
      { kind: 'step', name: 'charge', at: new Date(old[0]!.a), result: { chargeId: 'ch_1' } },
      { kind: 'signal', name: 'ship', at: new Date(old[1]!.a), signal: 'shipped', status: 'waiting', until: new Date(old[1]!.u!) },
      { kind: 'signal', name: 'ship', at: new Date(old[2]!.a), signal: 'shipped', status: 'received', until: null, payload: { carrier: 'dhl' } },
    ]);
    expect((await store.getJob({ id: none }))!.steps).toEqual([]);
    expect((await store.getJob({ id: odd }))!.steps).toEqual([]);
    const columns = await pool.query(`select 1 from information_schema.columns where table_schema = $1 and table_name = 'jobs' and column_name = 'steps'`, [schema]);
    expect(columns.rows).toEqual([]);

    const stepRows = async () => (await pool.query(`select job_id::text as id from "${schema}".job_steps order by id`)).rows.map((r: { id: string }) => r.id);
    expect(await stepRows()).toEqual([kept, kept, kept]);
    await pool.query(`delete from "${schema}".jobs where id = $1`, [kept]);
    expect(await stepRows()).toEqual([]);
    await store.close();
  });
});
