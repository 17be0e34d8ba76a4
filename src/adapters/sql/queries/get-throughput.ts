import { RUN_TIME_BOUNDS, type RunTimeBins } from '../../run-time-bins.js';
import type { GetThroughputParams, ThroughputBucket } from '../../store.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement } from '../statement.js';

/**
 * Throughput over time from the history: per queue and bucket of $2 ms from $1 until $4 (null:
 * no end), the jobs completed, retried and dead, and the run time percentiles of the attempts
 * that ended, with their run times binned (run-time-bins.ts: width_bucket over the same bounds;
 * each bin's count and longest run time by a window over the bin, so that one aggregate gives
 * every column: a join of two aggregates of the bucket may be planned as a nested loop that
 * sorts the history once per bucket; one entry per bin, from its first row).
 *
 * The time range reads only its own pages through job_events_at_brin (both ends are in the
 * index condition: an old range does not read the newer pages), at most $3 of the
 * rows that matter (an attempt's end, a death). Each attempt's start is the latest `running`
 * row of the same job and attempt before its end: one short backward walk of that job's rows
 * in job_events_job_idx. The queue comes from each job once, by primary key (as in
 * count-job-transitions.ts). percentile_disc is the nearest-rank percentile.
 */
export const GET_THROUGHPUT = defineStatement(
  'get_throughput',
  (s) => `
with e as materialized (
  select id, job_id, from_state, to_state, attempt, at from ${s.quoted}.job_events
  where at >= $1::timestamptz and at < coalesce($4::timestamptz, 'infinity')
    and (from_state = 'running' or to_state in ('retrying', 'dead'))
  limit $3
),
q as (
  select j.id, j.queue from ${s.quoted}.jobs j where j.id = any(array(select distinct job_id from e))
),
d as materialized (
  select q.queue, e.to_state, s.ms,
    date_bin(make_interval(secs => $2 / 1000.0), e.at, $1::timestamptz) as bucket_start
  from e join q on q.id = e.job_id
  left join lateral (
    select greatest(0, round(extract(epoch from e.at - r.at) * 1000))::float8 as ms
    from ${s.quoted}.job_events r
    where e.from_state = 'running' and r.job_id = e.job_id and r.id < e.id and r.to_state = 'running' and r.attempt = e.attempt
    order by r.id desc
    limit 1
  ) s on true
)
select queue, bucket_start,
  (count(*) filter (where to_state = 'completed'))::int as completed,
  (count(*) filter (where to_state = 'retrying'))::int as retried,
  (count(*) filter (where to_state = 'dead'))::int as dead,
  count(ms)::int as attempts,
  count(*)::int as events,
  percentile_disc(0.5) within group (order by ms) as p50,
  percentile_disc(0.95) within group (order by ms) as p95,
  coalesce(jsonb_object_agg(bin, jsonb_build_array(bin_count, bin_max)) filter (where ms is not null and bin_row = 1), '{}') as run_times
from (
  select b.*, count(ms) over per_bin as bin_count, max(ms) over per_bin as bin_max, row_number() over per_bin as bin_row
  from (select d.*, width_bucket(ms, '{${RUN_TIME_BOUNDS.join(',')}}'::float8[]) as bin from d) b
  window per_bin as (partition by queue, bucket_start, bin)
) binned
group by queue, bucket_start
order by queue collate "C", bucket_start
`,
);

const DEFAULT_MAX_EVENTS = 100_000;

interface Row {
  queue: string;
  bucket_start: Date;
  completed: number;
  retried: number;
  dead: number;
  attempts: number;
  events: number;
  p50: number | null;
  p95: number | null;
  /** Bin → [count, longest]. */
  run_times: Record<string, [number, number]>;
}

export async function getThroughput(ctx: SqlContext, params: GetThroughputParams): Promise<ThroughputBucket[]> {
  const since = params.since.getTime();
  const rows = await ctx.run<Row>(GET_THROUGHPUT, [
    params.since.toISOString(),
    params.bucketMs,
    params.maxEvents ?? DEFAULT_MAX_EVENTS,
    params.until?.toISOString() ?? null,
  ]);
  return rows.map((row) => ({
    queue: row.queue,
    bucket: Math.round((row.bucket_start.getTime() - since) / params.bucketMs),
    completed: row.completed,
    retried: row.retried,
    dead: row.dead,
    attempts: row.attempts,
    p50Ms: row.p50,
    p95Ms: row.p95,
    runTimes: Object.entries(row.run_times)
      .map(([bin, [count, maxMs]]): RunTimeBins[number] => [Number(bin), count, maxMs])
      .sort((a, b) => a[0] - b[0]),
    events: row.events,
  }));
}
