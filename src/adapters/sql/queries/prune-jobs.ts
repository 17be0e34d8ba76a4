import type { PruneParams } from '../../store.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement } from '../statement.js';

/** Retention: finished jobs older than their cutoff, and their history, in one statement;
 *  with the dead cutoff, the alert dedupe rows whose last alert is older. A null cutoff
 *  matches nothing. */
const PRUNE_JOBS = defineStatement(
  'prune_jobs',
  (s) => `
with pruned as (
  delete from ${s.quoted}.jobs
  where (state in ('completed', 'skipped') and finished_at < $1::timestamptz)
     or (state in ('dead', 'cancelled') and finished_at < $2::timestamptz)
  returning id
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
