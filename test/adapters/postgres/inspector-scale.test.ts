/**
 * The inspector's reads on a production-sized store: SEED_JOBS jobs seeded by SQL (mostly
 * completed, as in production, with a backlog, running jobs, dead ones and one job with an
 * 11.6 MB payload) and a history row per job. Each read's plan must go through an index and
 * read no payload or result: EXPLAIN, not a timing (the timings are in `npm run bench`).
 */
import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { postgresStore } from '../../../src/adapters/postgres/index.js';
import { cancelStatement, countStatement, retryStatement } from '../../../src/adapters/sql/queries/bulk-jobs.js';
import { COUNT_JOB_TRANSITIONS } from '../../../src/adapters/sql/queries/count-job-transitions.js';
import { GET_QUEUE_BACKLOGS } from '../../../src/adapters/sql/queries/get-queue-backlogs.js';
import { GET_THROUGHPUT } from '../../../src/adapters/sql/queries/get-throughput.js';
import { GROUP_DEAD_JOBS } from '../../../src/adapters/sql/queries/group-dead-jobs.js';
import { EVENTS_AFTER } from '../../../src/adapters/sql/queries/list-job-events.js';
import { JOBS_AFTER } from '../../../src/adapters/sql/queries/list-new-jobs.js';
import { BY_UNIQUE_KEY, RUNNING, UNHAPPY, WINDOW } from '../../../src/adapters/sql/queries/scan-jobs.js';
import { sqlSchema } from '../../../src/adapters/sql/sql-schema.js';
import { buildStatement, type StatementDefinition } from '../../../src/adapters/sql/statement.js';
import type { ErrorMatch, JobFilters } from '../../../src/adapters/store.js';
import { describePostgres, dropSchema, freshSchema, settleStatistics, testPool } from '../../support/postgres.js';

const SEED_JOBS = 1_000_000;

describePostgres(`inspector reads at ${SEED_JOBS.toLocaleString('en')} jobs: plans`, (url) => {
  const schema = freshSchema('jv_inspector_scale');
  let pool: pg.Pool;

  beforeAll(async () => {
    pool = testPool(url);
    const store = postgresStore({ pool, schema });
    await store.migrate();
    await store.close();
    // Seeded without the indexes, which are built again afterwards: much faster than kept
    // up to date row by row.
    const { rows: indexes } = await pool.query<{ name: string; definition: string }>(
      `select indexname as name, indexdef as definition from pg_indexes
       where schemaname = $1 and tablename in ('jobs', 'job_events') and indexname not like '%_pkey'`,
      [schema],
    );
    for (const { name } of indexes) await pool.query(`drop index "${schema}"."${name}"`);
    // 2% waiting to run (pending, retrying), 1% dead, 0.2% cancelled, 0.02% running.
    await pool.query(
      `
      insert into "${schema}".jobs (queue, kind, payload, state, priority, run_at, attempt, max_attempts,
        unique_key, worker_id, lease_expires_at, created_at, updated_at, finished_at, error)
      select 'q' || (i % 5), 'k' || (i % 3), '{"n": 1}',
        s.state, i % 2, now() - make_interval(secs => $1 - i), 1, 3, case when i % 7 = 0 then 'key-' || i end,
        case when s.state = 'running' then 'w1' end, case when s.state = 'running' then now() + interval '1 minute' end,
        now() - make_interval(secs => $1 - i), now(), case when s.state in ('completed', 'dead', 'cancelled') then now() end,
        case when s.state = 'dead' then '{"code": "handler_error", "message": "boom"}'::jsonb end
      from generate_series(1, $1) i
      cross join lateral (select case
        when i > $1 - $1 / 50 then (case when i % 10 = 0 then 'retrying' else 'pending' end)
        when i % 100 = 7 then 'dead' when i % 500 = 3 then 'cancelled' when i % 5000 = 11 then 'running'
        else 'completed' end as state) s`,
      [SEED_JOBS],
    );
    await pool.query(
      `insert into "${schema}".jobs (queue, kind, payload, state, run_at, attempt, max_attempts, created_at, updated_at)
       values ('q1', 'big', jsonb_build_object('blob', repeat('x', 11600000)), 'pending', now(), 0, 3, now(), now())`,
    );
    await pool.query(`
      insert into "${schema}".job_events (job_id, from_state, to_state, attempt, worker_id, at)
      select j.id, 'running', j.state, 1, 'w1', j.created_at from "${schema}".jobs j order by j.id`);
    for (const { definition } of indexes) await pool.query(definition);
    await settleStatistics(pool, schema, ['jobs', 'job_events'], 100);
  }, 240_000);

  afterAll(async () => {
    await dropSchema(pool, schema);
    await pool.end();
  });

  /** The plan as JSON text, with each node's output columns. */
  async function plan(definition: StatementDefinition, values: readonly unknown[]): Promise<string> {
    const { text } = buildStatement(definition, sqlSchema(schema));
    const { rows } = await pool.query(`explain (format json, verbose) ${text}`, [...values]);
    return JSON.stringify(rows[0]['QUERY PLAN']);
  }

  /** `index` may be `a|b`: either serves (the planner picks between the unhappy jobs' index
   *  and the finished jobs' one, migration 0026, by their sizes). */
  function expectIndexed(text: string, index: string): void {
    expect(text).toMatch(new RegExp(index));
    expect(text).not.toContain('Seq Scan');
    // No node reads the payload or the result.
    expect(text).not.toMatch(/\.payload\b|\.result\b/);
  }

  const recent = () => new Date(Date.now() - 600_000).toISOString();

  it.each([
    ['a window of the list', WINDOW, [null, 'pending', null, null, null, 50, 10_000], 'jobs_pkey'],
    ['a window of one queue and kind', WINDOW, ['q1', null, 'k1', null, null, 50, 10_000], 'jobs_pkey'],
    ['running jobs', RUNNING, [null, null, null, null, 50], 'jobs_lease_expiry_idx'],
    ['dead jobs, merged over queues', UNHAPPY, ['dead', null, null, null, null, 50], 'jobs_unhappy_idx'],
    ['dead jobs of one queue', UNHAPPY, ['dead', 'q2', null, null, '400000', 50], 'jobs_unhappy_idx'],
    ['a unique key', BY_UNIQUE_KEY, ['key-700', null, null, null, null, 50], 'jobs_unique_key_search_idx'],
    ['backlogs', GET_QUEUE_BACKLOGS, [null, 10_000], 'jobs_claim_idx'],
    ['dead jobs of one queue grouped by error', GROUP_DEAD_JOBS, ['q2', 10_000, 50], 'jobs_unhappy_idx'],
    ['the events after an id', EVENTS_AFTER, ['990000', 500], 'job_events_id_brin'],
    ['the jobs after an id', JOBS_AFTER, ['990000', 500], 'jobs_pkey'],
  ] as const)('%s: through %s', async (_, definition, values, index) => {
    expectIndexed(await plan(definition, values), index);
  });

  it('a read whose estimated cost passes jit_above_cost here runs with JIT off: compiling cost the backlogs read 0.45-0.85 s', async () => {
    const { rows } = await pool.query(`select current_setting('jit_above_cost')::float8 as threshold`);
    for (const definition of [GET_QUEUE_BACKLOGS, WINDOW, RUNNING, UNHAPPY, BY_UNIQUE_KEY, GROUP_DEAD_JOBS, EVENTS_AFTER, COUNT_JOB_TRANSITIONS, GET_THROUGHPUT]) {
      const { text } = buildStatement(definition, sqlSchema(schema));
      const params = (text.match(/\$\d+/g) ?? []).reduce((n, p) => Math.max(n, Number(p.slice(1))), 0);
      const generic = await pool.connect();
      try {
        // The generic plan's estimate (nulls for every parameter), as a prepared statement's.
        await generic.query('set plan_cache_mode = force_generic_plan');
        await generic.query(`prepare jit_probe as ${text}`);
        const { rows: explained } = await generic.query(`explain (format json) execute jit_probe(${Array(params).fill('null').join(', ')})`);
        const cost = explained[0]['QUERY PLAN'][0].Plan['Total Cost'] as number;
        if (cost > rows[0].threshold) expect(definition.indexScansOnly, `${definition.key} costs ${cost}`).toBe(true);
      } finally {
        await generic.query('deallocate all; reset plan_cache_mode');
        generic.release();
      }
    }
  });

  it('throughput: the last minutes of history through the BRIN index, jobs by primary key', async () => {
    for (const [definition, values] of [
      [COUNT_JOB_TRANSITIONS, [recent(), 60_000, 100_000]],
      [GET_THROUGHPUT, [recent(), 60_000, 100_000, null]],
    ] as const) {
      const text = await plan(definition, values);
      expectIndexed(text, 'job_events_at_brin');
      expect(text).toContain('jobs_pkey');
    }
  });

  const counts: Array<[JobFilters, string]> = [
    [{}, 'jobs_pkey'],
    [{ state: 'pending' }, 'jobs_claim_idx'],
    [{ state: 'pending', queue: 'q1' }, 'jobs_claim_idx'],
    [{ state: 'retrying', kind: 'k1' }, 'jobs_claim_idx'],
    [{ state: 'dead' }, 'jobs_unhappy_idx|jobs_finished_idx'],
    [{ state: 'dead', queue: 'q3' }, 'jobs_unhappy_idx|jobs_finished_idx'],
    [{ state: 'cancelled', queue: 'q3', kind: 'k0' }, 'jobs_unhappy_idx|jobs_finished_idx'],
    [{ state: 'running' }, 'jobs_lease_expiry_idx'],
    [{ state: 'waiting', queue: 'q1' }, 'jobs_waiting_idx'],
    [{ state: 'completed' }, 'jobs_pkey'],
    [{ queue: 'q2', kind: 'k1' }, 'jobs_pkey'],
  ];
  it.each(counts)('the count of %j: through %s', async (filters, index) => {
    const values = [10_001, 20_000, ...[filters.queue, filters.kind].filter((v) => v !== undefined)];
    expectIndexed(await plan(countStatement(filters), values), index);
  });

  it.each([
    [{ state: 'dead' }, 'jobs_unhappy_idx|jobs_finished_idx'],
    [{ queue: 'q2' }, 'jobs_unhappy_idx|jobs_finished_idx'],
    [{ state: 'cancelled', queue: 'q2', kind: 'k1' }, 'jobs_unhappy_idx|jobs_finished_idx'],
    [{ state: 'dead', queue: 'q2', error: { code: 'handler_error', message: 'boom' } }, 'jobs_unhappy_idx|jobs_finished_idx'],
  ] as Array<[JobFilters & { error?: ErrorMatch }, string]>)('a bulk retry of %j picks its jobs through %s', async (filters, index) => {
    const error = filters.error === undefined ? [] : [filters.error.code, filters.error.message];
    const values = [null, 10_000, ...[filters.queue, filters.kind].filter((v) => v !== undefined), ...error];
    expectIndexed(await plan(retryStatement(filters), values), index);
  });

  it.each([
    [{ state: 'pending', queue: 'q1' }, 'jobs_claim_idx'],
    [{ state: 'running' }, 'jobs_lease_expiry_idx'],
    [{ queue: 'q2' }, 'jobs_claim_idx'],
  ] as Array<[JobFilters, string]>)('a bulk cancel of %j picks its jobs through %s', async (filters, index) => {
    const values = [null, 10_000, ...[filters.queue, filters.kind].filter((v) => v !== undefined)];
    expectIndexed(await plan(cancelStatement(filters), values), index);
  });
});
