import { pruneInBatches } from '../../prune-batches.js';
import type { PruneParams } from '../../store.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement } from '../statement.js';

/** A finished job past its cutoff ($1 for completed and skipped, $2 for dead and cancelled; a
 *  null cutoff matches nothing). */
const PAST_CUTOFF = `((j.state in ('completed', 'skipped') and j.finished_at < $1::timestamptz)
     or (j.state in ('dead', 'cancelled') and j.finished_at < $2::timestamptz))`;

/** A job that a waiting job waits for is kept until that one leaves `waiting` (it reads the
 *  job's result), and so is one whose dependent sleeps (docs/durable-jobs.md: its handler
 *  runs from the top when it wakes, and reads it again); `has_dependents` spares other jobs
 *  the lookup. `offset 0` keeps it a lookup per job (job_deps_dep_idx, then the primary key):
 *  the planner would otherwise hash every waiting and sleeping job's edges once per batch. */
const keptForDependents = (schema: string) => `(j.has_dependents and exists (
      select from ${schema}.job_deps e join ${schema}.jobs w on w.id = e.job_id
      where e.dep_id = j.id and w.state in ('waiting', 'sleeping')
      offset 0
    ))`;

/** One batch of retention: at most $3 finished jobs older than their cutoff, and their history
 *  (their mailboxes, job_signals, go with them: on delete cascade; their steps are a column).
 *  Each state group is read through jobs_finished_idx (migration 0026) with a limit of its own,
 *  so a batch reads about as many index entries as it deletes, and a prune that finds nothing
 *  reads next to none. The delete finds the batch's rows by primary key (an array: a join
 *  could be planned as a second read of every finished job past the cutoff), and checks the
 *  cutoff again: a job retried since the read (no longer finished) is left alone. Index
 *  scans only: the plan a connection keeps must not turn
 *  into a scan of the table when it was made while the table was small. */
export const PRUNE_JOBS_BATCH = defineStatement(
  'prune_jobs_batch',
  (s) => `
with batch as (
  (select j.id from ${s.quoted}.jobs j
   where j.state in ('completed', 'skipped') and j.finished_at < $1::timestamptz
     and not ${keptForDependents(s.quoted)}
   limit $3::bigint)
  union all
  (select j.id from ${s.quoted}.jobs j
   where j.state in ('dead', 'cancelled') and j.finished_at < $2::timestamptz
     and not ${keptForDependents(s.quoted)}
   limit $3::bigint)
  limit $3::bigint
),
pruned as (
  delete from ${s.quoted}.jobs j
  where j.id = any(array(select id from batch)) and ${PAST_CUTOFF}
  returning j.id
),
history as (
  delete from ${s.quoted}.job_events where job_id in (select id from pruned)
),
dependencies as (
  delete from ${s.quoted}.job_deps where job_id in (select id from pruned)
)
select count(*)::int as count from pruned
`,
  { indexScansOnly: true },
);

/** With the dead cutoff, the alert dedupe rows whose last alert is older: once per prune. */
const PRUNE_ALERTS = defineStatement('prune_alerts', (s) => `delete from ${s.quoted}.alerts where sent_at < $1::timestamptz`);

export async function pruneJobs(ctx: SqlContext, params: PruneParams): Promise<number> {
  const completedBefore = params.completedBefore?.toISOString() ?? null;
  const deadBefore = params.deadBefore?.toISOString() ?? null;
  const pruned = await pruneInBatches(params, async (limit) => {
    if (completedBefore === null && deadBefore === null) return 0;
    const [row] = await ctx.run<{ count: number }>(PRUNE_JOBS_BATCH, [completedBefore, deadBefore, limit]);
    return row?.count ?? 0;
  });
  if (deadBefore !== null) await ctx.run(PRUNE_ALERTS, [deadBefore]);
  return pruned;
}
