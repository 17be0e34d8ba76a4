import type { CountJobTransitionsParams, TransitionCount } from '../../store.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement } from '../statement.js';

/**
 * Throughput from the history: transitions since $1 per queue, state entered and bucket of
 * $2 ms. The time range reads only the newest pages through job_events_at_brin, and at most
 * $3 rows of it. The queue comes from each job once, by primary key (`= any(array(…))`: a
 * join could be planned as a hash join over the whole jobs table).
 */
export const COUNT_JOB_TRANSITIONS = defineStatement(
  'count_job_transitions',
  (s) => `
with e as materialized (
  select job_id, to_state, at from ${s.quoted}.job_events where at >= $1::timestamptz limit $3
),
q as (
  select j.id, j.queue from ${s.quoted}.jobs j where j.id = any(array(select distinct job_id from e))
)
select q.queue, e.to_state, count(*)::int as count,
  date_bin(make_interval(secs => $2 / 1000.0), e.at, $1::timestamptz) as bucket_start
from e join q on q.id = e.job_id
group by q.queue, e.to_state, bucket_start
order by q.queue collate "C", e.to_state collate "C", bucket_start
`,
);

const DEFAULT_MAX_EVENTS = 100_000;

export async function countJobTransitions(ctx: SqlContext, params: CountJobTransitionsParams): Promise<TransitionCount[]> {
  const since = params.since.getTime();
  const rows = await ctx.run<{ queue: string; to_state: TransitionCount['toState']; bucket_start: Date; count: number }>(
    COUNT_JOB_TRANSITIONS,
    [params.since.toISOString(), params.bucketMs, params.maxEvents ?? DEFAULT_MAX_EVENTS],
  );
  return rows.map((row) => ({
    queue: row.queue,
    toState: row.to_state,
    bucket: Math.round((row.bucket_start.getTime() - since) / params.bucketMs),
    count: row.count,
  }));
}
