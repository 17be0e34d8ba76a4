import {
  type GetThroughputSummaryParams,
  type QueueActivity,
  type SaveThroughputSummaryParams,
  type SavedThroughputBucket,
  THROUGHPUT_SUMMARY_PRUNE_BATCH,
} from '../../store.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement } from '../statement.js';

/**
 * The throughput summary (migration 0025): closed buckets of throughput, a row per width and
 * start holding every queue's numbers, saved by the inspector that read them from the history
 * (src/inspector/throughput.ts) so that the next one reads these rows instead. No job's
 * statement touches the table.
 */

/** A range of one width through the primary key: at most a day of hours or a few hours of
 *  minutes. */
export const GET_THROUGHPUT_SUMMARY = defineStatement(
  'get_throughput_summary',
  (s) => `
select bucket_start, queues from ${s.quoted}.throughput_buckets
where bucket_ms = $1 and bucket_start >= $2::timestamptz and bucket_start < $3::timestamptz
order by bucket_start
`,
);

/** Saves the buckets ($2, a JSON array of { start, queues }) that start at or after $3, each
 *  once (closed buckets do not change: the first save stands), and deletes the oldest
 *  $4 saved buckets of this width that start before $3: a bounded delete, through the primary
 *  key. The two touch different rows (before and after $3). */
export const SAVE_THROUGHPUT_SUMMARY = defineStatement(
  'save_throughput_summary',
  (s) => `
with pruned as (
  delete from ${s.quoted}.throughput_buckets
  where bucket_ms = $1 and bucket_start = any(array(
    select bucket_start from ${s.quoted}.throughput_buckets
    where bucket_ms = $1 and bucket_start < $3::timestamptz
    order by bucket_start
    limit $4
  ))
)
insert into ${s.quoted}.throughput_buckets (bucket_ms, bucket_start, queues)
select $1, (b ->> 'start')::timestamptz, b -> 'queues'
from jsonb_array_elements($2::jsonb) b
where (b ->> 'start')::timestamptz >= $3::timestamptz
on conflict do nothing
`,
);

interface Row {
  bucket_start: Date;
  queues: QueueActivity[];
}

export async function getThroughputSummary(ctx: SqlContext, params: GetThroughputSummaryParams): Promise<SavedThroughputBucket[]> {
  const rows = await ctx.run<Row>(GET_THROUGHPUT_SUMMARY, [params.bucketMs, params.since.toISOString(), params.until.toISOString()]);
  return rows.map((row) => ({ start: row.bucket_start, queues: row.queues }));
}

export async function saveThroughputSummary(ctx: SqlContext, params: SaveThroughputSummaryParams): Promise<void> {
  const buckets = JSON.stringify(params.buckets.map(({ start, queues }) => ({ start: start.toISOString(), queues })));
  await ctx.run(SAVE_THROUGHPUT_SUMMARY, [params.bucketMs, buckets, params.pruneBefore.toISOString(), THROUGHPUT_SUMMARY_PRUNE_BATCH]);
}
