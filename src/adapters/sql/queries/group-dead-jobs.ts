import type { DeadJobGroups, GroupDeadJobsParams } from '../../store.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement } from '../statement.js';

/**
 * A queue's dead jobs grouped by their error, as sidekiq-undertaker groups a dead set: the
 * newest $2 of them (and one more, to tell whether there were more) read backwards down jobs_unhappy_idx (state, queue, id), so the read is
 * bounded however many died; each group's code and message, count, first and last death and
 * newest job. $1 queue, $2 max scan, $3 groups at most. The state is a literal, which proves
 * the index's predicate by itself: a repeated `state in (…)` beside it would make the planner
 * take the two as independent and expect a hundredth of the dead jobs, and then prefer
 * jobs_finished_idx and a sort of every dead job of every queue.
 */
export const GROUP_DEAD_JOBS = defineStatement(
  'group_dead_jobs',
  (s) => `
with d as materialized (
  select j.id, j.error ->> 'code' as code, j.error ->> 'message' as message, coalesce(j.finished_at, j.updated_at) as died_at
  from ${s.quoted}.jobs j
  where j.state = 'dead' and j.queue = $1
  order by j.id desc limit $2::int + 1
)
select g.code, g.message, g.count, g.first_at, g.last_at, g.newest_id::text as newest_id,
  (select count(*) from d)::int as examined
from (
  select code, message, count(*)::int as count, min(died_at) as first_at, max(died_at) as last_at, max(id) as newest_id
  from (select * from d order by id desc limit $2) newest group by code, message
) g
order by g.count desc, g.newest_id desc
limit $3
`,
);

const DEFAULT_MAX_SCAN = 10_000;
const DEFAULT_LIMIT = 50;

interface Row {
  code: string | null;
  message: string | null;
  count: number;
  first_at: Date;
  last_at: Date;
  newest_id: string;
  examined: number;
}

export async function groupDeadJobs(ctx: SqlContext, params: GroupDeadJobsParams): Promise<DeadJobGroups> {
  const maxScan = Math.max(1, params.maxScan ?? DEFAULT_MAX_SCAN);
  const rows = await ctx.run<Row>(GROUP_DEAD_JOBS, [params.queue, maxScan, Math.max(1, params.limit ?? DEFAULT_LIMIT)]);
  const read = rows[0]?.examined ?? 0;
  return {
    groups: rows.map((row) => ({
      code: row.code,
      message: row.message,
      count: row.count,
      firstAt: row.first_at,
      lastAt: row.last_at,
      newestJobId: row.newest_id,
    })),
    examined: Math.min(read, maxScan),
    partial: read > maxScan,
  };
}
