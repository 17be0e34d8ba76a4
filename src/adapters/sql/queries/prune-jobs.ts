import type { PruneParams } from '../../store.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement } from '../statement.js';

/** Retention: finished jobs older than their cutoff, and their history, in one statement
 *  (their mailboxes, job_signals, go with them: on delete cascade); with the dead cutoff, the
 *  alert dedupe rows whose last alert is older. A null cutoff matches nothing. A job that a
 *  waiting job waits for is kept until that one leaves `waiting` (it reads the job's result),
 *  and so is one whose dependent sleeps (docs/durable-jobs.md: its handler runs from the top
 *  when it wakes, and reads it again); `has_dependents` spares other jobs the lookup. */
const PRUNE_JOBS = defineStatement(
  'prune_jobs',
  (s) => `
with pruned as (
  delete from ${s.quoted}.jobs j
  where ((j.state in ('completed', 'skipped') and j.finished_at < $1::timestamptz)
     or (j.state in ('dead', 'cancelled') and j.finished_at < $2::timestamptz))
    and not (j.has_dependents and exists (
      select from ${s.quoted}.job_deps e join ${s.quoted}.jobs w on w.id = e.job_id
      where e.dep_id = j.id and w.state in ('waiting', 'sleeping')
    ))
  returning j.id
),
history as (
  delete from ${s.quoted}.job_events where job_id in (select id from pruned)
),
dependencies as (
  delete from ${s.quoted}.job_deps where job_id in (select id from pruned)
),
alerts as (
  delete from ${s.quoted}.alerts where sent_at < $2::timestamptz
)
select count(*)::int as count from pruned
`,
);

export async function pruneJobs(ctx: SqlContext, params: PruneParams): Promise<number> {
  if (!params.completedBefore && !params.deadBefore) return 0;
  const [row] = await ctx.run<{ count: number }>(PRUNE_JOBS, [
    params.completedBefore?.toISOString() ?? null,
    params.deadBefore?.toISOString() ?? null,
  ]);
  return row?.count ?? 0;
}
