import type { EnqueueJob, EnqueueResult, SqlClient } from '../../store.js';
import { jobColumns, toJobRecord } from '../job-row.js';
import type { JobRow } from '../job-row.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement } from '../statement.js';
import { toInput } from './enqueue-input.js';
import { insertJobsCtes } from './enqueue-new-jobs.js';

/**
 * Bulk enqueue of jobs ranked for a fair queue's tenants (migration 0028), beside plain jobs
 * or not, none with a unique key, a debounce or a replace: one statement, as enqueue_new_jobs,
 * each ranked job carrying its rank.
 * - `fair_queues`: per queue, its lowest rank waiting (fair_waiting_rank), read once, and the
 *   frontier of the call's first ranked job: that rank, else the highest handed out, else 0;
 * - `tenants`: per queue and tenant, the weights of its jobs in input order;
 * - `tenant_ranks`: each tenant's ranks (next_fair_ranks, one write of its row), the tenant of
 *   the queue's first job first: when no ranked job was waiting, the frontier of every later
 *   job is that first job's rank, as it would be had they gone in one by one after it;
 * - `ranked`: each job its tenant's k-th rank, k its place among the tenant's jobs.
 * The ranks are next_fair_rank's for the same jobs enqueued one after another.
 */
const RANKED = (schema: string) => `
fair_queues as materialized (
  select q.queue, q.first_i, w.waiting,
    coalesce(w.waiting, (select max(t.last_rank) from ${schema}.tenant_ranks t where t.queue = q.queue), 0) as first_frontier
  from (select queue, min(i) as first_i from numbered where weight is not null group by queue) q
  cross join lateral (select ${schema}.fair_waiting_rank(q.queue) as waiting) w
),
tenants as (
  select n.queue, n.tenant, array_agg(n.weight order by n.i) as weights, bool_or(n.i = q.first_i) as first
  from numbered n join fair_queues q on q.queue = n.queue
  where n.weight is not null
  group by n.queue, n.tenant
),
first_ranks as materialized (
  select t.queue, t.tenant, ${schema}.next_fair_ranks(t.queue, t.tenant, t.weights, q.first_frontier) as ranks
  from tenants t join fair_queues q on q.queue = t.queue
  where t.first
),
tenant_ranks as materialized (
  select queue, tenant, ranks from first_ranks
  union all
  select t.queue, t.tenant, ${schema}.next_fair_ranks(t.queue, t.tenant, t.weights, coalesce(q.waiting, f.ranks[1]))
  from tenants t join fair_queues q on q.queue = t.queue join first_ranks f on f.queue = t.queue
  where not t.first
),
ranked as (
  select p.id, r.ranks[p.k] as rank
  from (select id, queue, tenant, row_number() over (partition by queue, tenant order by i) as k from numbered where weight is not null) p
  join tenant_ranks r on r.queue = p.queue and r.tenant is not distinct from p.tenant
),`;

/** The `input` CTE from $2, one jsonb array of objects as `toInput` makes them, with each
 *  job's `tenant` and `weight`. */
const FAIR_INPUT = `
  select * from jsonb_to_recordset($2::jsonb) as x(
    i int, queue text, kind text, payload jsonb, priority int, run_at timestamptz, run_in_ms float8,
    max_attempts int, unique_key text, concurrency_key text, expires_at timestamptz, expires_in_ms float8,
    trace_context jsonb, tenant text, weight float8)
`;

const ENQUEUE_FAIR_JOBS = defineStatement(
  'enqueue_fair_jobs',
  (s) => `${insertJobsCtes(s, { input: FAIR_INPUT, ranked: RANKED(s.quoted) })}
select ${jobColumns('j', s, 'none')} from inserted j cross join notified order by j.id
`,
);

/** Whether the call is one for ENQUEUE_FAIR_JOBS: some job is ranked, and none has a unique
 *  key, a debounce or a replace (those go through enqueue_keyed, row by row). */
export function isFairEnqueue(jobs: readonly EnqueueJob[]): boolean {
  return (
    jobs.some((job) => (job.fairShare ?? null) !== null) &&
    jobs.every((job) => job.uniqueKey == null && (job.debounce ?? null) === null && (job.onConflict ?? 'return') === 'return')
  );
}

export async function enqueueFairJobs(ctx: SqlContext, params: { jobs: readonly EnqueueJob[]; client?: SqlClient }): Promise<EnqueueResult[]> {
  const input = JSON.stringify(
    params.jobs.map((job, i) => ({ ...toInput(i, job), tenant: job.fairShare?.tenant ?? null, weight: job.fairShare?.weight ?? null })),
  );
  const rows = await ctx.run<JobRow>(ENQUEUE_FAIR_JOBS, [ctx.now(), input], params.client);
  if (rows.length !== params.jobs.length) throw new Error(`enqueue_fair_jobs inserted ${rows.length} rows for ${params.jobs.length} jobs`);
  return rows.map((row) => ({ job: toJobRecord(row), created: true }));
}
