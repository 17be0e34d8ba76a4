import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../../../src/adapters/postgres/index.js';
import { COUNT_JOB_TRANSITIONS } from '../../../src/adapters/sql/queries/count-job-transitions.js';
import { GET_THROUGHPUT } from '../../../src/adapters/sql/queries/get-throughput.js';
import { GET_QUEUE_BACKLOGS } from '../../../src/adapters/sql/queries/get-queue-backlogs.js';
import { GROUP_DEAD_JOBS } from '../../../src/adapters/sql/queries/group-dead-jobs.js';
import { EVENTS_AFTER, NEWEST_EVENTS } from '../../../src/adapters/sql/queries/list-job-events.js';
import { BY_UNIQUE_KEY, RUNNING, UNHAPPY, WINDOW } from '../../../src/adapters/sql/queries/scan-jobs.js';
import { sqlSchema } from '../../../src/adapters/sql/sql-schema.js';
import { buildStatement, type StatementDefinition } from '../../../src/adapters/sql/statement.js';
import { describePostgres, dropSchema, freshSchema, settleStatistics, testPool } from '../../support/postgres.js';

/** The inspector's reads must stay bounded on a big table: each one goes through its index,
 *  never a scan of jobs or of the history. 50,000 jobs (mostly finished, as in production)
 *  are enough for the planner to show its choice. */
describePostgres('inspector reads: plans', (url) => {
  const schema = freshSchema('jv_inspector_plans');
  let pool: pg.Pool;

  beforeAll(async () => {
    pool = testPool(url);
    const store = postgresStore({ pool, schema });
    await store.migrate();
    await store.close();
    await pool.query(`
      insert into "${schema}".jobs (queue, kind, payload, state, priority, run_at, attempt, max_attempts,
        unique_key, worker_id, lease_expires_at, created_at, updated_at, finished_at)
      select 'q' || (i % 5), 'k' || (i % 3), '{}',
        case when i > 49900 then 'pending' when i % 1000 = 7 then 'dead' when i % 5000 = 3 then 'running'
          else 'completed' end,
        i % 2, now() - make_interval(secs => 50000 - i), 1, 3, case when i % 7 = 0 then 'key-' || i end,
        'w1', case when i % 5000 = 3 then now() + interval '1 minute' end,
        now() - make_interval(secs => 50000 - i), now(), null
      from generate_series(1, 50000) i`);
    await pool.query(`
      insert into "${schema}".job_events (job_id, from_state, to_state, attempt, worker_id, at)
      select j.id, null, j.state, 1, 'w1', j.created_at from "${schema}".jobs j order by j.id`);
    await settleStatistics(pool, schema, ['jobs', 'job_events']);
  });

  afterAll(async () => {
    await dropSchema(pool, schema);
    await pool.end();
  });

  async function plan(definition: StatementDefinition, values: unknown[]): Promise<string> {
    const { text } = buildStatement(definition, sqlSchema(schema));
    const { rows } = await pool.query(`explain (format json) ${text}`, values);
    return JSON.stringify(rows[0]['QUERY PLAN']);
  }

  const recent = () => new Date(Date.now() - 600_000).toISOString();

  it.each([
    ['a window of the list', WINDOW, [null, 'pending', null, null, null, 50, 10_000], 'jobs_pkey'],
    ['running jobs', RUNNING, [null, null, null, null, 50], 'jobs_lease_expiry_idx'],
    // Either index serves a few dead jobs; the planner picks by their sizes (as in inspector-scale.test.ts).
    ['dead jobs, merged over queues', UNHAPPY, ['dead', null, null, null, null, 50], 'jobs_unhappy_idx|jobs_finished_idx'],
    ['dead jobs of one queue', UNHAPPY, ['dead', 'q2', null, null, '40000', 50], 'jobs_unhappy_idx|jobs_finished_idx'],
    ['a unique key', BY_UNIQUE_KEY, ['key-700', null, null, null, null, 50], 'jobs_unique_key_search_idx'],
    ['backlogs', GET_QUEUE_BACKLOGS, [10_000], 'jobs_claim_idx'],
    ['dead jobs of one queue grouped by error', GROUP_DEAD_JOBS, ['q2', 10_000, 50], 'jobs_unhappy_idx'],
    ['the events after an id', EVENTS_AFTER, ['49000', 500], 'job_events_pkey'],
    ['the newest events', NEWEST_EVENTS, [100], 'job_events_pkey'],
  ] as const)('%s: through %s, no sequential scan', async (_, definition, values, index) => {
    const text = await plan(definition, [...values]);
    expect(text, text).toMatch(new RegExp(index));
    expect(text).not.toContain('Seq Scan');
  });

  it('backlogs: the unhappy and running counts through their partial indexes', async () => {
    const text = await plan(GET_QUEUE_BACKLOGS, [10_000]);
    expect(text).toContain('jobs_unhappy_idx');
    expect(text).toContain('jobs_lease_expiry_idx');
  });

  it('throughput: the last minutes of history through the BRIN index, jobs by primary key', async () => {
    const text = await plan(COUNT_JOB_TRANSITIONS, [recent(), 60_000, 100_000]);
    expect(text).toContain('job_events_at_brin');
    expect(text).toContain('jobs_pkey');
    expect(text).not.toContain('Seq Scan');
  });

  it('throughput over time: the window of history through the BRIN index, each attempt\'s start through the job\'s own rows', async () => {
    const text = await plan(GET_THROUGHPUT, [recent(), 60_000, 100_000]);
    expect(text).toContain('job_events_at_brin');
    expect(text).toContain('job_events_job_idx');
    expect(text).toContain('jobs_pkey');
    expect(text).not.toContain('Seq Scan');
  });
});
