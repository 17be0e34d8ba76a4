import type { JobRecord } from '../../../types.js';
import { jobColumns, toDbId, toJobRecord } from '../job-row.js';
import type { JobRow } from '../job-row.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement, NOW } from '../statement.js';
import { getJob } from './read-jobs.js';

/**
 * Retry by hand: a dead, cancelled or skipped job goes back to `pending`, due now, with at
 * least one attempt left, no cancel request, and no deadline across attempts if it passed.
 * Not while a live job holds its unique key (reviving it would give the key two live
 * holders). Wakes the queue, like an enqueue.
 */
const RETRY_JOB = defineStatement(
  'retry_job',
  (s) => `
with target as (
  select * from ${s.quoted}.jobs where id = $2 for update
),
retried as (
  update ${s.quoted}.jobs j
  set state = 'pending', run_at = ${NOW}, finished_at = null, updated_at = ${NOW},
    max_attempts = greatest(j.max_attempts, j.attempt + 1), cancel_requested_at = null,
    expires_at = case when j.expires_at <= ${NOW} then null else j.expires_at end
  from target t
  where j.id = t.id and t.state in ('dead', 'cancelled', 'skipped')
    and not exists (
      select from ${s.quoted}.jobs l
      where l.queue = t.queue and l.unique_key = t.unique_key
        and l.state in ('pending', 'retrying', 'running', 'sleeping'))
  returning j.*, t.state as from_state
),
history as (
  insert into ${s.quoted}.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
  select id, from_state, state, attempt, null, updated_at, null from retried
)
select true as retried, ${jobColumns('r')} from retried r
  cross join lateral (select pg_notify('${s.channel}', r.queue)) notified
union all
select false, ${jobColumns('t')} from target t where not exists (select from retried)
`,
);

/** A live job took the unique key after this statement's snapshot. */
const UNIQUE_VIOLATION = '23505';

export async function retryJob(
  ctx: SqlContext,
  params: { id: string },
): Promise<{ job: JobRecord; retried: boolean } | null> {
  const id = toDbId(params.id);
  if (id === null) return null;
  try {
    const [row] = await ctx.run<JobRow & { retried: boolean }>(RETRY_JOB, [ctx.now(), id]);
    return row ? { job: toJobRecord(row), retried: row.retried } : null;
  } catch (error) {
    if ((error as { code?: unknown }).code !== UNIQUE_VIOLATION) throw error;
    const job = await getJob(ctx, { id });
    return job ? { job, retried: false } : null;
  }
}
