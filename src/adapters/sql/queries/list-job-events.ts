import type { JobEventEntry, ListJobEventsParams } from '../../store.js';
import { toDbId, toJobEvent } from '../job-row.js';
import type { JobEventRow } from '../job-row.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement } from '../statement.js';

/**
 * The history across all jobs by event id, for the inspector's live page: both statements
 * walk the primary key from one end, so a poll costs what it returns, not the table's size.
 * An id is drawn at insert but seen at commit, so a poll may pass over an id whose
 * transaction is still open; the caller looks again for such gaps (inspector/id-tail.ts).
 * Transitions only: creation rows (written before issue 26, and by the SQL functions) are
 * left to listNewJobs, which reads every job's creation from the jobs table. Index scans
 * only: a history of mostly creation rows (an old one) must not make the filter look
 * selective enough for a scan of the table.
 */
const EVENT_COLUMNS =
  'e.id::text as id, e.job_id::text as job_id, e.from_state, e.to_state, e.attempt, e.worker_id, e.at, e.error';

// `order by e.id`, qualified: a bare `id` would name the text column of the select list.
export const EVENTS_AFTER = defineStatement(
  'list_job_events_after',
  (s) => `select ${EVENT_COLUMNS} from ${s.quoted}.job_events e where e.id > $1 and e.from_state is not null order by e.id limit $2`,
  { indexScansOnly: true },
);

export const NEWEST_EVENTS = defineStatement(
  'list_newest_job_events',
  (s) => `
select id, job_id, from_state, to_state, attempt, worker_id, at, error
from (
  select ${EVENT_COLUMNS}, e.id as seq from ${s.quoted}.job_events e where e.from_state is not null order by e.id desc limit $1
) newest
order by seq
`,
  { indexScansOnly: true },
);

const DEFAULT_LIMIT = 100;

export async function listJobEvents(ctx: SqlContext, params: ListJobEventsParams): Promise<JobEventEntry[]> {
  const limit = Math.max(0, params.limit ?? DEFAULT_LIMIT);
  let rows: Array<JobEventRow & { id: string }>;
  if (params.afterId === undefined) {
    rows = await ctx.run(NEWEST_EVENTS, [limit]);
  } else {
    // "0" (before every event) is not a job id, but it is a valid place to start after.
    const afterId = params.afterId === '0' ? '0' : toDbId(params.afterId);
    if (afterId === null) return [];
    rows = await ctx.run(EVENTS_AFTER, [afterId, limit]);
  }
  return rows.map((row) => ({ ...toJobEvent(row), id: row.id }));
}
