import type { ClaimedJob } from '../../../types.js';
import type { ClaimParams } from '../../store.js';
import { jobColumns, toJobRecord } from '../job-row.js';
import type { JobRow } from '../job-row.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement, NOW } from '../statement.js';

/**
 * Claim: one statement for every queue the supervisor has free slots for.
 * - The LATERAL subselect runs once per (queue, limit): `queue = … ORDER BY priority desc,
 *   run_at, id LIMIT n` is exactly jobs_claim_idx, so it reads the first n entries of that
 *   queue's claimable rows and nothing else, however long the backlog.
 * - FOR UPDATE SKIP LOCKED: concurrent claimers pass over rows another one is taking instead
 *   of waiting for it, and never take the same job.
 * - `id = any(array(…))` makes the UPDATE fetch the picked rows by primary key; a join would
 *   be planned from jsonb_to_recordset's fixed guess of 100 input rows, and for a table of a
 *   few thousand rows that guess picks a hash join over a scan of the whole table.
 * - The locked row's old state is kept in `picked` for the history row (UPDATE … RETURNING
 *   only sees new values), which the same statement appends.
 * - The claim commits without waiting for its WAL flush (`synchronous_commit` off for this
 *   statement's transaction only). A claim is a lease, not a result: if the database crashes
 *   before the flush, the job is simply pending again and runs again (at-least-once, as
 *   after any crash), and the worker's fenced writes find no lease and apply nothing. Waiting
 *   for the flush would put a disk sync (about 1 ms here) inside every free slot's turn.
 *   Enqueues and outcomes keep the server's setting: they must survive a crash.
 */
export const CLAIM_JOBS = defineStatement(
  'claim_jobs',
  (s) => `
with async_commit as (
  select set_config('synchronous_commit', 'off', true)
),
picked as (
  select j.id, j.state
  from jsonb_to_recordset($2::jsonb) as r(queue text, lim int)
  cross join lateral (
    select id, state from ${s.quoted}.jobs
    where queue = r.queue and state in ('pending', 'retrying') and run_at <= ${NOW}
    order by priority desc, run_at, id
    limit r.lim
    for update skip locked
  ) j
),
claimed as (
  update ${s.quoted}.jobs j
  set state = 'running', attempt = j.attempt + 1, worker_id = $3, lease_token = gen_random_uuid(),
    lease_expires_at = ${NOW} + $4::float8 * interval '1 millisecond', updated_at = ${NOW}
  where j.id = any(array(select id from picked))
  returning j.*
),
history as (
  insert into ${s.quoted}.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
  select c.id, p.state, 'running', c.attempt, c.worker_id, c.updated_at, null
  from claimed c join picked p on p.id = c.id
)
select ${jobColumns('c')} from claimed c
cross join async_commit
order by c.priority desc, c.run_at, c.id
`,
);

export async function claimJobs(ctx: SqlContext, params: ClaimParams): Promise<ClaimedJob[]> {
  const requested = params.queues.filter((q) => q.limit > 0);
  // A queue named twice takes both limits; the rows are handed out per entry below.
  const limits = new Map<string, number>();
  for (const { queue, limit } of requested) limits.set(queue, (limits.get(queue) ?? 0) + limit);
  if (limits.size === 0) return [];
  const input = JSON.stringify([...limits].map(([queue, lim]) => ({ queue, lim })));
  const rows = await ctx.run<JobRow>(CLAIM_JOBS, [ctx.now(), input, params.workerId, params.leaseMs]);
  return inRequestOrder(rows.map((row) => toJobRecord(row) as ClaimedJob), requested);
}

/** Per requested entry, in request order: that queue's next jobs in claim order. */
function inRequestOrder(jobs: ClaimedJob[], requested: ClaimParams['queues']): ClaimedJob[] {
  const byQueue = new Map<string, ClaimedJob[]>();
  for (const job of jobs) {
    const list = byQueue.get(job.queue) ?? [];
    list.push(job);
    byQueue.set(job.queue, list);
  }
  return requested.flatMap(({ queue, limit }) => byQueue.get(queue)?.splice(0, limit) ?? []);
}
