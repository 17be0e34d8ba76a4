/**
 * A store refuses a schema that does not fit its build, before any statement of its own runs:
 * never migrated, missing a migration, or holding a newer build's breaking migration. A newer
 * migration that is not breaking (a rolling deploy's) lets it run, and the supervisor says so.
 */
import { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pgliteStore } from '../../../src/adapters/pglite/index.js';
import { postgresStore } from '../../../src/adapters/postgres/index.js';
import { isBreakingMigration, loadMigrations } from '../../../src/adapters/sql/migrate.js';
import { createSupervisor, defineQueue, SchemaVersionError } from '../../../src/index.js';
import type { Logger } from '../../../src/types.js';
import { describePostgres, dropSchema, freshSchema, testPool } from '../../support/postgres.js';

const job = { queue: 'q', kind: 'k', payload: {}, maxAttempts: 1 };

function silent(): Logger & { warn: ReturnType<typeof vi.fn<Logger['warn']>> } {
  return { debug: () => {}, info: () => {}, warn: vi.fn<Logger['warn']>(), error: () => {} };
}

describe('isBreakingMigration', () => {
  it('is marked by the first line only', () => {
    expect(isBreakingMigration('-- jobvisor:breaking\nalter table x drop column y;')).toBe(true);
    expect(isBreakingMigration('-- jobvisor:breaking  \r\n')).toBe(true);
    expect(isBreakingMigration('-- jobvisor schema, version 2\n-- jobvisor:breaking\n')).toBe(false);
    expect(isBreakingMigration('-- jobvisor:breaking-ish\n')).toBe(false);
  });

  it('marks only 0027 and 0030 of this build’s migrations: every other ran beside the build before it', async () => {
    // 0027 moved a durable job's steps out of jobs.steps: a build before it would run stored
    // steps again (docs/operations.md, upgrades). 0030 folded job_steps.status into its kind:
    // a build before it reads a column that is gone.
    expect((await loadMigrations()).filter((m) => m.breaking).map((m) => m.name)).toEqual(['0027-job-steps', '0030-job-steps-compact']);
  });
});

describePostgres('the schema version check (Postgres)', (url) => {
  const schemas: string[] = [];
  let pool: pg.Pool;

  beforeAll(() => {
    pool = testPool(url, { max: 6 });
  });

  afterAll(async () => {
    for (const schema of schemas) await dropSchema(pool, schema);
    await pool.end();
  });

  async function migrated(): Promise<string> {
    const schema = freshSchema('jv_version');
    schemas.push(schema);
    await postgresStore({ pool, schema }).migrate();
    return schema;
  }

  async function refusal(promise: Promise<unknown>): Promise<SchemaVersionError> {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SchemaVersionError);
    return error as SchemaVersionError;
  }

  it('refuses a schema never migrated, on the first call and on start, and creates nothing', async () => {
    const schema = freshSchema('jv_version');
    schemas.push(schema);
    const store = postgresStore({ pool, schema });
    const error = await refusal(store.enqueueJobs({ jobs: [job] }));
    expect(error).toMatchObject({ code: 'schema_version', reason: 'unmigrated', schema });
    expect(error.message).toContain('run `jobvisor migrate`');
    const supervisor = createSupervisor({ store, queues: [defineQueue('q', { handlers: { k: () => {} } })], logger: silent() });
    expect((await refusal(supervisor.start())).reason).toBe('unmigrated');
    const { rows } = await pool.query('select 1 from pg_namespace where nspname = $1', [schema]);
    expect(rows).toEqual([]);
    await supervisor.stop();
  });

  it('refuses a schema that lacks a migration of this build, naming it', async () => {
    const schema = await migrated();
    const [last] = (await loadMigrations()).slice(-1);
    await pool.query(`delete from "${schema}".migrations where version = $1`, [last!.version]);
    const error = await refusal(postgresStore({ pool, schema }).enqueueJobs({ jobs: [job] }));
    expect(error).toMatchObject({ reason: 'outdated', missing: [last!.name] });
    expect(error.message).toContain(last!.name);
  });

  it('runs beside a newer build’s migration that is not breaking, and the supervisor warns', async () => {
    const schema = await migrated();
    await pool.query(`insert into "${schema}".migrations (version, name) values (9999, '9999-a-column')`);
    const store = postgresStore({ pool, schema });
    expect(await store.checkSchema()).toEqual({ newer: ['9999-a-column'] });
    const [enqueued] = await store.enqueueJobs({ jobs: [job] });
    expect(enqueued!.created).toBe(true);
    const logger = silent();
    const supervisor = createSupervisor({ store, queues: [defineQueue('q', { handlers: { k: () => {} } })], logger });
    await supervisor.start();
    expect(logger.warn).toHaveBeenCalledWith({ newer: ['9999-a-column'] }, expect.stringContaining('newer jobvisor'));
    await supervisor.stop();
  });

  it('refuses a newer build’s breaking migration: calls, start and migrate', async () => {
    const schema = await migrated();
    await pool.query(`insert into "${schema}".migrations (version, name, breaking) values (9998, '9998-a-new-claim', true)`);
    const store = postgresStore({ pool, schema });
    const error = await refusal(store.enqueueJobs({ jobs: [job] }));
    expect(error).toMatchObject({ reason: 'newer', breaking: ['9998-a-new-claim'] });
    expect(error.message).toContain('upgrade jobvisor');
    const supervisor = createSupervisor({ store, queues: [defineQueue('q', { handlers: { k: () => {} } })], logger: silent() });
    expect((await refusal(supervisor.start())).reason).toBe('newer');
    expect((await refusal(store.migrate())).reason).toBe('newer');
    const { rows } = await pool.query(`select count(*)::int as n from "${schema}".jobs`);
    expect(rows[0].n).toBe(0);
  });

  it('a supervisor with migrate: true migrates a fresh schema on start, then runs', async () => {
    const schema = freshSchema('jv_version');
    schemas.push(schema);
    const store = postgresStore({ pool, schema });
    const supervisor = createSupervisor({ store, queues: [defineQueue('q', { handlers: { k: () => {} } })], migrate: true, logger: silent() });
    await supervisor.start();
    expect(await store.checkSchema()).toEqual({ newer: [] });
    await supervisor.stop();
    expect(() => createSupervisor({ store, queues: [defineQueue('q', { handlers: { k: () => {} } })], migrate: 'yes' as never })).toThrow(
      /migrate: must be true or false, got "yes"/,
    );
  });

  it('refuses inside the caller’s transaction without aborting it', async () => {
    const schema = freshSchema('jv_version');
    schemas.push(schema);
    const client = await pool.connect();
    try {
      await client.query('begin');
      const error = await refusal(postgresStore({ pool, schema }).enqueueJobs({ jobs: [job], client }));
      expect(error.reason).toBe('unmigrated');
      expect((await client.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
      await client.query('rollback');
    } finally {
      client.release();
    }
  });

  it('a supervisor started while the database cannot be reached starts (and warns); with migrate: true it rejects', async () => {
    const unreachable = () => postgresStore({ connectionString: 'postgres://postgres@127.0.0.1:1/none', connectTimeoutMs: 500 });
    const logger = silent();
    const queues = [defineQueue('q', { handlers: { k: () => {} } })];
    const riding = createSupervisor({ store: unreachable(), queues, logger });
    await riding.start();
    expect(logger.warn).toHaveBeenCalledWith(expect.objectContaining({ err: expect.any(Error) }), expect.stringContaining('cannot reach the database'));
    await riding.stop({ graceMs: 0 });
    const migrating = createSupervisor({ store: unreachable(), queues, logger: silent(), migrate: true });
    await expect(migrating.start()).rejects.toMatchObject({ code: 'database_unavailable' });
  });

  it('checks again after a refusal: a schema migrated meanwhile by another process is used', async () => {
    const schema = freshSchema('jv_version');
    schemas.push(schema);
    const store = postgresStore({ pool, schema });
    await refusal(store.enqueueJobs({ jobs: [job] }));
    await postgresStore({ pool, schema }).migrate();
    expect((await store.enqueueJobs({ jobs: [job] }))[0]!.created).toBe(true);
  });

  it('reads a migrations table made before the breaking column as not breaking', async () => {
    const schema = await migrated();
    await pool.query(`alter table "${schema}".migrations drop column breaking`);
    await pool.query(`insert into "${schema}".migrations (version, name) values (9997, '9997-old-table')`);
    expect(await postgresStore({ pool, schema }).checkSchema()).toEqual({ newer: ['9997-old-table'] });
    // migrate() brings the column back, and records nothing new.
    expect(await postgresStore({ pool, schema }).migrate()).toEqual([]);
    const { rows } = await pool.query(`select bool_or(breaking) as any from "${schema}".migrations`);
    expect(rows[0].any).toBe(false);
  });

  it('checks once per store, not before every statement', async () => {
    const schema = await migrated();
    const store = postgresStore({ pool, schema });
    await store.enqueueJobs({ jobs: [job] });
    // Were the check made again, the next call would find no migrations and refuse.
    await pool.query(`drop table "${schema}".migrations`);
    expect((await store.enqueueJobs({ jobs: [job] }))[0]!.created).toBe(true);
    expect((await refusal(postgresStore({ pool, schema }).enqueueJobs({ jobs: [job] }))).reason).toBe('unmigrated');
  });
});

describe('the schema version check (PGlite)', () => {
  let db: PGlite;

  beforeAll(async () => {
    db = await PGlite.create();
  });

  afterAll(async () => {
    await db.close();
  });

  it('refuses a schema never migrated, then one with a newer breaking migration', async () => {
    const store = pgliteStore({ db, schema: 'jv_version' });
    expect(await store.enqueueJobs({ jobs: [job] }).catch((e: unknown) => e)).toMatchObject({ reason: 'unmigrated' });
    await store.migrate();
    await db.query(`insert into "jv_version".migrations (version, name, breaking) values (9998, '9998-a-new-claim', true)`);
    const later = pgliteStore({ db, schema: 'jv_version' });
    expect(await later.enqueueJobs({ jobs: [job] }).catch((e: unknown) => e)).toMatchObject({ reason: 'newer' });
  });

  it('checks a fresh store’s first call inside the caller’s transaction on the one session', async () => {
    await pgliteStore({ db, schema: 'jv_version_tx' }).migrate();
    const store = pgliteStore({ db, schema: 'jv_version_tx' });
    // A check of its own, outside this transaction, would wait for the session forever.
    const [result] = await db.transaction((tx) => store.enqueueJobs({ jobs: [job], client: tx }));
    expect(result!.created).toBe(true);
  });
});
