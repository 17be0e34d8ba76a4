import { toJobListing } from '../../job-listing.js';
import type { JobPage, ScanJobsParams } from '../../store.js';
import { listingColumns, toDbId, toJobRecord } from '../job-row.js';
import type { JobRow } from '../job-row.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement } from '../statement.js';
import type { StatementDefinition } from '../statement.js';

/**
 * The inspector's job list, keyset-paged newest first, bounded whatever the table holds:
 * - a unique key: its own index (jobs_unique_key_search_idx) finds the few jobs with it;
 * - running: the reaper's partial index holds only running rows;
 * - dead, skipped, cancelled: jobs_unhappy_idx, newest first per queue, merged over the
 *   queues found by a loose index scan, so no sort of every dead job;
 * - anything else (pending, retrying, completed, no state): a window of at most `maxScan`
 *   rows down the primary key, filtered. A filter that matches few rows answers a short page
 *   and the window's lowest id, from where the next call goes on, instead of walking a
 *   million rows in one request. The filter columns alone are read for the window.
 * Only the columns a list shows are read (listingColumns): never a payload or a result.
 * The state filters are literals (not `state = $n` alone) so that the planner can prove each
 * partial index's predicate.
 */
const FILTERS = (alias: string, queue: string, kind: string, key: string) =>
  `(${queue}::text is null or ${alias}.queue = ${queue}) and (${kind}::text is null or ${alias}.kind = ${kind})` +
  ` and (${key}::text is null or ${alias}.unique_key = ${key})`;

/** $1 unique key, $2 queue, $3 state, $4 kind, $5 before id, $6 limit. */
export const BY_UNIQUE_KEY = defineStatement(
  'scan_jobs_by_unique_key',
  (s) => `
select ${listingColumns('j')} from ${s.quoted}.jobs j
where j.unique_key = $1 and ($2::text is null or j.queue = $2) and ($3::text is null or j.state = $3)
  and ($4::text is null or j.kind = $4) and ($5::bigint is null or j.id < $5)
order by j.id desc limit $6
`,
);

/** $1 queue, $2 kind, $3 unique key, $4 before id, $5 limit. */
export const RUNNING = defineStatement(
  'scan_running_jobs',
  (s) => `
select ${listingColumns('j')} from ${s.quoted}.jobs j
where j.state = 'running' and ${FILTERS('j', '$1', '$2', '$3')} and ($4::bigint is null or j.id < $4)
order by j.id desc limit $5
`,
);

/** $1 state, $2 queue, $3 kind, $4 unique key, $5 before id, $6 limit. */
export const UNHAPPY = defineStatement(
  'scan_unhappy_jobs',
  (s) => `
with recursive queues(queue) as (
  select coalesce($2::text, (select min(queue) from ${s.quoted}.jobs
    where state = $1 and state in ('dead', 'skipped', 'cancelled')))
  union all
  select (select min(j.queue) from ${s.quoted}.jobs j
    where j.state = $1 and j.state in ('dead', 'skipped', 'cancelled') and j.queue > q.queue)
  from queues q where q.queue is not null and $2::text is null
)
select ${listingColumns('j')} from queues q
cross join lateral (
  select j.* from ${s.quoted}.jobs j
  where j.state = $1 and j.state in ('dead', 'skipped', 'cancelled') and j.queue = q.queue
    and ($3::text is null or j.kind = $3) and ($4::text is null or j.unique_key = $4)
    and ($5::bigint is null or j.id < $5)
  order by j.id desc limit $6
) j
where q.queue is not null
order by j.id desc limit $6
`,
);

/** $1 queue, $2 state, $3 kind, $4 unique key, $5 before id, $6 limit, $7 max scan. */
export const WINDOW = defineStatement(
  'scan_jobs_window',
  (s) => `
with win as (
  select id, queue, state, kind, unique_key from ${s.quoted}.jobs
  where ($5::bigint is null or id < $5)
  order by id desc limit $7
),
hits as (
  select w.id from win w
  where ${FILTERS('w', '$1', '$3', '$4')} and ($2::text is null or w.state = $2)
  order by w.id desc limit $6
)
select b.scanned, b.lowest_scanned, ${listingColumns('j')}
from (select count(*)::int as scanned, min(id)::text as lowest_scanned from win) b
left join (hits h join ${s.quoted}.jobs j on j.id = h.id) on true
order by j.id desc
`,
);

/**
 * A search in what jobs hold (payload containment, error text): the same window as WINDOW,
 * then only the window's jobs that pass the cheap filters are read in full, by primary key,
 * and tested. No index serves a payload or a message, so the window bounds the cost.
 * $1 queue, $2 state, $3 kind, $4 unique key, $5 before id, $6 limit, $7 max scan,
 * $8 payload contains (jsonb), $9 error message contains (an ILIKE pattern).
 */
export const SEARCH_WINDOW = defineStatement(
  'scan_jobs_search_window',
  (s) => `
with win as (
  select id, queue, state, kind, unique_key from ${s.quoted}.jobs
  where ($5::bigint is null or id < $5)
  order by id desc limit $7
),
hits as (
  select w.id from win w join ${s.quoted}.jobs c on c.id = w.id
  where ${FILTERS('w', '$1', '$3', '$4')} and ($2::text is null or w.state = $2)
    and ($8::jsonb is null or c.payload @> $8::jsonb)
    and ($9::text is null or c.error ->> 'message' ilike $9 escape '\\')
  order by w.id desc limit $6
)
select b.scanned, b.lowest_scanned, ${listingColumns('j')}
from (select count(*)::int as scanned, min(id)::text as lowest_scanned from win) b
left join (hits h join ${s.quoted}.jobs j on j.id = h.id) on true
order by j.id desc
`,
);

/** `text` anywhere in a value, for ILIKE: its own `%`, `_` and `\` match themselves. */
function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

const UNHAPPY_STATES: ReadonlySet<string> = new Set(['dead', 'skipped', 'cancelled']);
const DEFAULT_LIMIT = 50;
const DEFAULT_MAX_SCAN = 10_000;

export async function scanJobs(ctx: SqlContext, params: ScanJobsParams): Promise<JobPage> {
  const limit = Math.max(1, params.limit ?? DEFAULT_LIMIT);
  let beforeId: string | null = null;
  if (params.beforeId !== undefined) {
    // An id that no job can have ends the paging rather than failing the cast.
    beforeId = toDbId(params.beforeId);
    if (beforeId === null) return { jobs: [], nextBeforeId: null };
  }
  const queue = params.queue ?? null;
  const state = params.state ?? null;
  const kind = params.kind ?? null;
  const uniqueKey = params.uniqueKey ?? null;

  const maxScan = Math.max(1, params.maxScan ?? DEFAULT_MAX_SCAN);
  const search = params.payloadContains !== undefined || params.errorContains !== undefined;
  // A search in what jobs hold is served by no index: always the bounded window.
  let indexed: [StatementDefinition, unknown[]] | undefined;
  if (!search) {
    if (uniqueKey !== null) indexed = [BY_UNIQUE_KEY, [uniqueKey, queue, state, kind, beforeId, limit]];
    else if (state === 'running') indexed = [RUNNING, [queue, kind, uniqueKey, beforeId, limit]];
    else if (state !== null && UNHAPPY_STATES.has(state)) indexed = [UNHAPPY, [state, queue, kind, uniqueKey, beforeId, limit]];
  }
  if (indexed) {
    const jobs = (await ctx.run<JobRow>(...indexed)).map((row) => toJobListing(toJobRecord(row)));
    return { jobs, nextBeforeId: jobs.length === limit ? jobs.at(-1)!.id : null };
  }

  const window = [queue, state, kind, uniqueKey, beforeId, limit, maxScan];
  const rows = await ctx.run<Partial<JobRow> & { scanned: number; lowest_scanned: string | null }>(
    ...((search
      ? [
          SEARCH_WINDOW,
          [
            ...window,
            params.payloadContains === undefined ? null : JSON.stringify(params.payloadContains),
            params.errorContains === undefined ? null : containsPattern(params.errorContains),
          ],
        ]
      : [WINDOW, window]) as [StatementDefinition, unknown[]]),
  );
  const jobs = rows.filter((row) => row.id !== null).map((row) => toJobListing(toJobRecord(row as JobRow)));
  const scanned = rows[0];
  const nextBeforeId =
    jobs.length === limit ? jobs.at(-1)!.id : scanned && scanned.scanned === maxScan ? scanned.lowest_scanned : null;
  return { jobs, nextBeforeId };
}
