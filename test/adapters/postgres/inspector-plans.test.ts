import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../../../src/adapters/postgres/index.js';
import { COUNT_JOB_TRANSITIONS } from '../../../src/adapters/sql/queries/count-job-transitions.js';
import { GET_THROUGHPUT } from '../../../src/adapters/sql/queries/get-throughput.js';
import { GET_THROUGHPUT_SUMMARY, SAVE_THROUGHPUT_SUMMARY } from '../../../src/adapters/sql/queries/throughput-summary.js';
import { GET_QUEUE_BACKLOGS } from '../../../src/adapters/sql/queries/get-queue-backlogs.js';
import { GET_QUEUE_DEPTHS } from '../../../src/adapters/sql/queries/get-queue-depths.js';
import { GROUP_DEAD_JOBS } from '../../../src/adapters/sql/queries/group-dead-jobs.js';
import { EVENTS_AFTER, NEWEST_EVENTS } from '../../../src/adapters/sql/queries/list-job-events.js';
import { JOBS_AFTER, NEWEST_JOBS } from '../../../src/adapters/sql/queries/list-new-jobs.js';
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
    // Creation rows only (from_state null), as an old history of jobs never run: the worst case
    // for the feed's `from_state is not null` (index scans only keep it on its index).
    await pool.query(`
      insert into "${schema}".job_events (job_id, from_state, to_state, attempt, worker_id, at)
      select j.id, null, j.state, 1, 'w1', j.created_at from "${schema}".jobs j order by j.id`);
    // Two weeks of minutes and of hours in the throughput summary, 5 queues each: far more
    // than saves leave (they prune it to hours of minutes and a day of hours, a few hundred
    // rows, which a scan reads as fast), so that the planner shows its choice.
    await pool.query(`
      insert into "${schema}".throughput_buckets (bucket_ms, bucket_start, queues)
      select w.ms, date_trunc('hour', now()) - make_interval(secs => i * w.ms / 1000.0),
        (select jsonb_agg(jsonb_build_object('queue', 'q' || n, 'completed', i, 'retried', 0, 'dead', 0, 'attempts', i,
          'p50Ms', 40, 'p95Ms', 45, 'runTimes', jsonb_build_array(jsonb_build_array(43, i, 45)))) from generate_series(0, 4) n)
      from (values (60000), (3600000)) w(ms)
      cross join lateral generate_series(0, case when w.ms = 60000 then 20160 else 336 end) i`);
    await settleStatistics(pool, schema, ['jobs', 'job_events', 'throughput_buckets']);
  });

  afterAll(async () => {
    await dropSchema(pool, schema);
    await pool.end();
  });

  /** The plan as the store makes it: an indexScansOnly statement with sequential scans off. */
  async function plan(definition: StatementDefinition, values: unknown[]): Promise<string> {
    const { text } = buildStatement(definition, sqlSchema(schema));
    const client = await pool.connect();
    try {
      await client.query('begin');
      if (definition.indexScansOnly) await client.query('set local enable_seqscan = off');
      const { rows } = await client.query(`explain (format json) ${text}`, values);
      return JSON.stringify(rows[0]['QUERY PLAN']);
    } finally {
      await client.query('rollback');
      client.release();
    }
  }

  const recent = () => new Date(Date.now() - 600_000).toISOString();

  it.each([
    ['a window of the list', WINDOW, [null, 'pending', null, null, null, 50, 10_000], 'jobs_pkey'],
    ['running jobs', RUNNING, [null, null, null, null, 50], 'jobs_lease_expiry_idx'],
    // Either index serves a few dead jobs; the planner picks by their sizes (as in inspector-scale.test.ts).
    ['dead jobs, merged over queues', UNHAPPY, ['dead', null, null, null, null, 50], 'jobs_unhappy_idx|jobs_finished_idx'],
    ['dead jobs of one queue', UNHAPPY, ['dead', 'q2', null, null, '40000', 50], 'jobs_unhappy_idx|jobs_finished_idx'],
    ['a unique key', BY_UNIQUE_KEY, ['key-700', null, null, null, null, 50], 'jobs_unique_key_search_idx'],
    ['backlogs', GET_QUEUE_BACKLOGS, [null, 10_000], 'jobs_claim_idx'],
    ['dead jobs of one queue grouped by error', GROUP_DEAD_JOBS, ['q2', 10_000, 50], 'jobs_unhappy_idx'],
    ['the events after an id', EVENTS_AFTER, ['49000', 500], 'job_events_id_brin'],
    ['the newest events', NEWEST_EVENTS, [100, '256'], 'job_events_id_brin'],
    ['the jobs after an id', JOBS_AFTER, ['49000', 500], 'jobs_pkey'],
    ['the newest jobs', NEWEST_JOBS, [100], 'jobs_pkey'],
  ] as const)('%s: through %s, no sequential scan', async (_, definition, values, index) => {
    const text = await plan(definition, [...values]);
    expect(text, text).toMatch(new RegExp(index));
    expect(text).not.toContain('Seq Scan');
  });

  it('backlogs: the unhappy and running counts through their partial indexes', async () => {
    const text = await plan(GET_QUEUE_BACKLOGS, [null, 10_000]);
    expect(text).toContain('jobs_unhappy_idx');
    expect(text).toContain('jobs_lease_expiry_idx');
  });

  it('queue depths for metrics: through the partial indexes the claim, the reaper and the flows keep, never a scan of jobs', async () => {
    const text = await plan(GET_QUEUE_DEPTHS, [null]);
    for (const index of ['jobs_claim_idx', 'jobs_lease_expiry_idx', 'jobs_waiting_idx', 'jobs_later_idx']) expect(text, text).toContain(index);
    expect(text, text).toMatch(/jobs_unhappy_idx|jobs_finished_idx/);
    expect(text, text).not.toContain('Seq Scan');
  });

  it('throughput: the last minutes of history through the BRIN index, jobs by primary key', async () => {
    const text = await plan(COUNT_JOB_TRANSITIONS, [recent(), 60_000, 100_000]);
    expect(text).toContain('job_events_at_brin');
    expect(text).toContain('jobs_pkey');
    expect(text).not.toContain('Seq Scan');
  });

  it('throughput over time: the window of history through the BRIN index, each attempt\'s start through the job\'s own rows', async () => {
    const text = await plan(GET_THROUGHPUT, [recent(), 60_000, 100_000, null]);
    expect(text).toContain('job_events_at_brin');
    expect(text).toContain('job_events_job_idx');
    expect(text).toContain('jobs_pkey');
    expect(text).not.toContain('Seq Scan');
  });

  it('throughput over a closed range: both of its ends in the BRIN index condition of the plan a connection keeps', async () => {
    // The generic plan (made for any values, as a prepared statement's comes to be): an end
    // that could be null must still bound the index scan, or an old range reads every newer page.
    const { text } = buildStatement(GET_THROUGHPUT, sqlSchema(schema));
    const client = await pool.connect();
    try {
      await client.query('set plan_cache_mode = force_generic_plan');
      await client.query(`prepare closed_range as ${text}`);
      const until = new Date(Date.now() - 300_000).toISOString();
      const { rows } = await client.query(`explain (format json) execute closed_range('${recent()}', 60000, 100000, '${until}')`);
      const plan = JSON.stringify(rows[0]['QUERY PLAN']);
      const brin = JSON.stringify(rows[0]['QUERY PLAN'], ['Plan', 'Plans', 'Index Name', 'Index Cond']);
      expect(brin, brin).toMatch(/"Index Name":"job_events_at_brin","Index Cond":"\(\(at >= \$1\) AND \(at < COALESCE\(\$4, [^"]*\)\)\)"/);
      expect(plan).not.toContain('Seq Scan');
    } finally {
      await client.query('deallocate closed_range');
      await client.query('reset plan_cache_mode');
      client.release();
    }
  });

  it('the throughput summary: a window of minutes, of hours, and the save\'s prune, through its primary key', async () => {
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const dayAgo = new Date(Date.now() - 86_400_000).toISOString();
    const now = new Date().toISOString();
    for (const [definition, values] of [
      [GET_THROUGHPUT_SUMMARY, [60_000, hourAgo, now]],
      [GET_THROUGHPUT_SUMMARY, [3_600_000, dayAgo, now]],
      [SAVE_THROUGHPUT_SUMMARY, [60_000, '[]', new Date(Date.now() - 5 * 3_600_000).toISOString(), 1_000]],
    ] as const) {
      const text = await plan(definition, [...values]);
      expect(text, text).toContain('throughput_buckets_pkey');
      expect(text, text).not.toContain('Seq Scan');
    }
  });
});
