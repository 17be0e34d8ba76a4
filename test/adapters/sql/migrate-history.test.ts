/**
 * Issue 26's promise for a database of the old layout: migrating it (0031: no primary key on
 * the history; 0032: no creation row) keeps every story. Jobs are made on a schema held back
 * before 0031, so the SQL functions of that build write their creation rows, then read through
 * the inspector's API and drawings and the CLI, migrated, and read again.
 */
import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { postgresStore } from '../../../src/adapters/postgres/index.js';
import { loadMigrations } from '../../../src/adapters/sql/migrate.js';
import type { SqlJobStore } from '../../../src/adapters/sql/sql-store.js';
import { startInspector } from '../../../src/inspector/index.js';
import { cli, requireBuiltCli } from '../../support/cli.js';
import { describePostgres, dropSchema, freshSchema, testPool } from '../../support/postgres.js';

requireBuiltCli();

describePostgres('migrating a database that holds jobs keeps their stories (0031, 0032)', (url) => {
  const schema = freshSchema('jv_migrate_history');
  let pool: pg.Pool;
  let store: SqlJobStore;

  beforeAll(() => {
    pool = testPool(url);
  });

  afterAll(async () => {
    await store?.close();
    await dropSchema(pool, schema);
    await pool.end();
  });

  it('the inspector\'s job, machine path and story drawing, and the CLI\'s job, read the same before and after', async () => {
    // Every migration before 0031: the layout of the build before issue 26's.
    await pool.query(`create schema "${schema}"`);
    await pool.query(`create table "${schema}".migrations (version integer primary key, name text not null, applied_at timestamptz not null default now())`);
    const later = (await loadMigrations()).map((m) => m.version).filter((v) => v >= 31);
    expect(later).toEqual([31, 32]);
    for (const v of later) await pool.query(`insert into "${schema}".migrations (version, name) values ($1, 'held back')`, [v]);
    store = postgresStore({ pool, schema });
    await store.migrate();
    const hasPkey = async () =>
      (await pool.query(`select 1 from pg_indexes where schemaname = $1 and indexname = 'job_events_pkey'`, [schema])).rows.length === 1;
    expect(await hasPkey()).toBe(true);

    // The old SQL enqueue writes a creation row; a flow's jobs are created waiting on their parent.
    const enqueue = async () => (await pool.query<{ job_id: string }>(`select job_id::text from "${schema}".enqueue('mig', 'k', '{}', null, 3)`)).rows[0]!.job_id;
    const [completed, retried, dead, running] = [await enqueue(), await enqueue(), await enqueue(), await enqueue()];
    const flow = await store.enqueueFlow({
      name: 'f',
      jobs: [
        { queue: 'mig-flow', kind: 'k', payload: {}, maxAttempts: 3, node: 'a', dependsOn: [] },
        { queue: 'mig-flow', kind: 'k', payload: {}, maxAttempts: 3, node: 'b', dependsOn: [{ name: 'a', onFailure: 'cancel', index: 0 }] },
      ],
    });
    const oldCreations = await pool.query(`select count(*)::int as n from "${schema}".job_events where from_state is null`);
    expect(oldCreations.rows[0].n).toBe(6);

    const claim = async (worker: string) => store.claimJobs({ workerId: worker, leaseMs: 60_000, queues: [{ queue: 'mig', limit: 10 }] });
    const first = new Map((await claim('w1')).map((job) => [job.id, job.leaseToken!]));
    expect(first.size).toBe(4);
    const error = { code: 'handler_error', message: 'boom', name: 'Error' };
    await store.setStatesIfRunning({
      outcomes: [
        { id: completed, leaseToken: first.get(completed)!, state: 'completed', result: { ok: 1 } },
        { id: retried, leaseToken: first.get(retried)!, state: 'retrying', error, delayMs: 0 },
        { id: dead, leaseToken: first.get(dead)!, state: 'dead', error },
      ],
    });
    const second = await claim('w2');
    expect(second.map((job) => job.id)).toEqual([retried]);
    await store.setStatesIfRunning({ outcomes: [{ id: retried, leaseToken: second[0]!.leaseToken!, state: 'completed', result: null }] });

    const [flowA, flowB] = flow.jobs.map((job) => job.id) as [string, string];
    const ids = [completed, retried, dead, running, flowA, flowB];
    const inspector = await startInspector({ store, port: 0, token: 'migrate-history-token' });
    const read = async () => {
      const out: Record<string, unknown> = {};
      for (const id of ids) {
        const get = async (path: string) => {
          const res = await fetch(new URL(path, inspector.url));
          expect(res.status, path).toBe(200);
          return res.text();
        };
        const job = JSON.parse(await get(`/api/jobs/${id}`)) as { events: { toState: string }[] };
        const shown = await cli(['job', id, '--database-url', url, '--schema', schema]);
        expect(shown.code, shown.stderr).toBe(0);
        const json = await cli(['job', id, '--json', '--database-url', url, '--schema', schema]);
        out[id] = {
          job,
          path: job.events.map((e) => e.toState).join('>'),
          machine: await get(`/api/jobs/${id}/machine.svg`),
          story: await get(`/api/jobs/${id}/story.svg`),
          cli: shown.stdout,
          cliJson: JSON.parse(json.stdout),
        };
      }
      return out;
    };
    try {
      const before = await read();
      expect((before[completed] as { path: string }).path).toBe('pending>running>completed');
      expect((before[retried] as { path: string }).path).toBe('pending>running>retrying>running>completed');
      expect((before[dead] as { path: string }).path).toBe('pending>running>dead');
      expect((before[running] as { path: string }).path).toBe('pending>running');
      expect((before[flowB] as { path: string }).path).toBe('waiting');

      await pool.query(`delete from "${schema}".migrations where version >= 31`);
      expect(await store.migrate()).toEqual([31, 32]);
      expect(await hasPkey()).toBe(false);
      expect(await read()).toEqual(before);
    } finally {
      await inspector.close();
    }

    // The held attempt ends after the migration: its story goes on from the old rows, the creation told once.
    const [held] = await store.claimJobs({ workerId: 'w3', leaseMs: 60_000, queues: [{ queue: 'mig-flow', limit: 1 }] });
    expect(held!.id).toBe(flowA);
    await store.setStatesIfRunning({ outcomes: [{ id: running, leaseToken: first.get(running)!, state: 'completed', result: null }] });
    expect((await store.getJobEvents({ id: running })).map((e) => `${e.fromState ?? '-'}>${e.toState}:${e.workerId ?? '-'}`)).toEqual([
      '->pending:-',
      'pending>running:w1',
      'running>completed:w1',
    ]);
  });
});
