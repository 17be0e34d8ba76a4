import type { CountJobTransitionsParams, TransitionCount } from '../../store.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement } from '../statement.js';
import { createdState, firstRow } from './created-state.js';

/**
 * Throughput from the history: transitions since $1 per queue, state entered and bucket of
 * $2 ms, at most $3 of them. The time range reads only the newest pages through
 * job_events_at_brin. The queue comes from each job once, by primary key (`= any(array(…))`:
 * a join could be planned as a hash join over the whole jobs table).
 *
 * Creations are not history rows (an enqueue writes none): they are the jobs created since
 * $1, read through jobs_pkey back from the newest to the newest job created a minute or more
 * before $1, at most $3 of them (the newest, when the window holds more). A job's created_at
 * is its transaction's start and its id is drawn when it is inserted, so ids follow
 * created_at only up to a transaction's length: a bulk enqueue's jobs, created when its
 * statement began, take ids above those of single enqueues committed while it ran. The
 * minute's margin keeps those singles in the walk; a job whose transaction ran longer (an
 * enqueue inside a caller's transaction opened more than a minute before) may be missed
 * below such a one. Each one's
 * first history row, one probe of job_events_job_idx, gives the state it was created in (the
 * state it left first; none yet: the state it is in), or shows a creation row already counted
 * from the history (written by a build before issue 26).
 */
export const COUNT_JOB_TRANSITIONS = defineStatement(
  'count_job_transitions',
  (s) => `
with e as materialized (
  select job_id, to_state, at from ${s.quoted}.job_events where at >= $1::timestamptz limit $3
),
q as (
  select j.id, j.queue from ${s.quoted}.jobs j where j.id = any(array(select distinct job_id from e))
),
created as materialized (
  select j.id, j.queue, j.state, j.created_at from ${s.quoted}.jobs j
  where j.id > coalesce((
      select b.id from (select id, created_at from ${s.quoted}.jobs order by id desc limit $3) b
      where b.created_at < $1::timestamptz - interval '1 minute' order by b.id desc limit 1
    ), 0)
    and j.created_at >= $1::timestamptz
  order by j.id desc
  limit $3
),
t as (
  (select q.queue, e.to_state, e.at from e join q on q.id = e.job_id
   union all
   select c.queue, ${createdState('c')}, c.created_at from created c
   ${firstRow(s, 'c.id')}
   where f.found is null or f.from_state is not null)
  limit $3
)
select t.queue, t.to_state, count(*)::int as count,
  date_bin(make_interval(secs => $2 / 1000.0), t.at, $1::timestamptz) as bucket_start
from t
group by t.queue, t.to_state, bucket_start
order by t.queue collate "C", t.to_state collate "C", bucket_start
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
