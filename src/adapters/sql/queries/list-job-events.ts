import type { JobEventEntry, ListJobEventsParams } from '../../store.js';
import { toDbId, toJobEvent } from '../job-row.js';
import type { JobEventRow } from '../job-row.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement } from '../statement.js';

/**
 * The history across all jobs by event id, for the inspector's live page. Both statements
 * read the tail of job_events through job_events_id_brin (migration 0031: the history has no
 * primary-key btree), so a poll reads the pages written to since its cursor, not the table.
 * A BRIN read takes the ranges not summarised yet whole, so a read first summarises the new
 * ones (SUMMARIZE, at most once a second per store): a poll then reads about what was written
 * since the last one, and not the last minute of history that autovacuum has not summarised.
 * An id is drawn at insert but seen at commit, so a poll may pass over an id whose
 * transaction is still open; the caller looks again for such gaps (inspector/event-feed.ts).
 * Index scans only: a plan kept from when the history was small must not scan it later.
 * Transitions only: creation rows (written by builds before issue 26) are left
 * to listNewJobs, which reads every job's creation from the jobs table.
 */
const EVENT_COLUMNS =
  'e.id::text as id, e.job_id::text as job_id, e.from_state, e.to_state, e.attempt, e.worker_id, e.at, e.error';

// `order by e.id`, qualified: a bare `id` would name the text column of the select list.
export const EVENTS_AFTER = defineStatement(
  'list_job_events_after',
  (s) => `select ${EVENT_COLUMNS} from ${s.quoted}.job_events e where e.id > $1 and e.from_state is not null order by e.id limit $2`,
  { indexScansOnly: true },
);

/** The newest $1 events among the ids within $2 of the last one drawn: a BRIN cannot walk the
 *  table from its end, so the read is bounded from below by the identity's sequence (null
 *  before its first value is drawn). */
export const NEWEST_EVENTS = defineStatement(
  'list_newest_job_events',
  (s) => `
select id, job_id, from_state, to_state, attempt, worker_id, at, error
from (
  select ${EVENT_COLUMNS}, e.id as seq from ${s.quoted}.job_events e
  where e.id > (select coalesce(pg_sequence_last_value('${s.quoted}.job_events_id_seq'), 0)) - $2::bigint
    and e.from_state is not null
  order by e.id desc limit $1
) newest
order by seq
`,
  { indexScansOnly: true },
);

/** The migration's function: gives up at once (-1) while a vacuum holds the table, or for a
 *  role that does not own it. */
export const SUMMARIZE = defineStatement('summarize_job_events', (s) => `select ${s.quoted}.summarize_job_events() as summarized`);

const SUMMARIZE_EVERY_MS = 1_000;
const summarizedAt = new WeakMap<SqlContext, number>();

async function summarize(ctx: SqlContext): Promise<void> {
  const now = Date.now();
  if (now - (summarizedAt.get(ctx) ?? -Infinity) < SUMMARIZE_EVERY_MS) return;
  summarizedAt.set(ctx, now);
  await ctx.run(SUMMARIZE, []);
}

const DEFAULT_LIMIT = 100;

/** How far back NEWEST_EVENTS looks, widest last (the whole table). Ids are dense (gaps only
 *  where an insert rolled back or a job was deleted), so the first look almost always finds
 *  enough. */
function spans(limit: number): bigint[] {
  const first = BigInt(Math.max(256, limit * 2));
  return [first, first * 64n, first * 4096n, 2n ** 62n];
}

async function newestEvents(ctx: SqlContext, limit: number): Promise<Array<JobEventRow & { id: string }>> {
  let rows: Array<JobEventRow & { id: string }> = [];
  for (const span of spans(limit)) {
    rows = await ctx.run<JobEventRow & { id: string }>(NEWEST_EVENTS, [limit, span.toString()]);
    if (rows.length >= limit) break;
  }
  return rows;
}

export async function listJobEvents(ctx: SqlContext, params: ListJobEventsParams): Promise<JobEventEntry[]> {
  const limit = Math.max(0, params.limit ?? DEFAULT_LIMIT);
  await summarize(ctx);
  let rows: Array<JobEventRow & { id: string }>;
  if (params.afterId === undefined) {
    rows = limit === 0 ? [] : await newestEvents(ctx, limit);
  } else {
    // "0" (before every event) is not a job id, but it is a valid place to start after.
    const afterId = params.afterId === '0' ? '0' : toDbId(params.afterId);
    if (afterId === null) return [];
    rows = await ctx.run(EVENTS_AFTER, [afterId, limit]);
  }
  return rows.map((row) => ({ ...toJobEvent(row), id: row.id }));
}
