import type { JobEvent, JobRecord } from '../../../types.js';
import type { JobCount, ListJobsParams } from '../../store.js';
import { jobColumns, toDbId, toJobEvent, toJobRecord } from '../job-row.js';
import type { JobEventRow, JobRow } from '../job-row.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement } from '../statement.js';

/** Reads for the CLI, the inspector and tests; none is on the hot path. */

const GET_JOB = defineStatement('get_job', (s) => `select ${jobColumns('j', s)} from ${s.quoted}.jobs j where j.id = $1`);

/** Keyset paging newest first: `id < beforeId ORDER BY id DESC` walks the primary key from
 *  where the last page ended, so page 1,000 costs what page 1 does. */
const LIST_JOBS = defineStatement(
  'list_jobs',
  (s) => `
select ${jobColumns('j', s)} from ${s.quoted}.jobs j
where ($1::text is null or j.queue = $1)
  and ($2::text is null or j.state = $2)
  and ($3::text is null or j.kind = $3)
  and ($4::bigint is null or j.id < $4)
order by j.id desc
limit $5
`,
);

/**
 * A job's story in order. Its creation is read from its row (an enqueue writes no history row:
 * docs/operations.md, upgrades): the state it was created in is the one its first transition
 * left, or the state it is in when it has none. A job that has a creation row (written by a
 * build before issue 26) is read as it is. `first` is one probe of job_events_job_idx.
 */
export const GET_JOB_EVENTS = defineStatement(
  'get_job_events',
  (s) => `
with first as (
  select e.from_state from ${s.quoted}.job_events e where e.job_id = $1 order by e.id limit 1
)
select job_id, from_state, to_state, attempt, worker_id, at, error from (
  select j.id::text as job_id, null::text as from_state, coalesce((select from_state from first), j.state) as to_state,
    0 as attempt, null::text as worker_id, j.created_at as at, null::jsonb as error, 0::bigint as seq
  from ${s.quoted}.jobs j
  where j.id = $1 and not exists (select from first where from_state is null)
  union all
  select e.job_id::text, e.from_state, e.to_state, e.attempt, e.worker_id, e.at, e.error, e.id
  from ${s.quoted}.job_events e where e.job_id = $1
) story
order by seq
`,
);

/** Byte order (COLLATE "C"), as the memory store sorts JavaScript strings. */
const COUNT_JOBS = defineStatement(
  'count_jobs',
  (s) => `
select queue, state, count(*)::int as count from ${s.quoted}.jobs
group by queue, state order by queue collate "C", state collate "C"
`,
);

const DEFAULT_LIST_LIMIT = 50;

export async function getJob(ctx: SqlContext, params: { id: string }): Promise<JobRecord | null> {
  const id = toDbId(params.id);
  if (id === null) return null;
  const [row] = await ctx.run<JobRow>(GET_JOB, [id]);
  return row ? toJobRecord(row) : null;
}

export async function listJobs(ctx: SqlContext, params: ListJobsParams): Promise<JobRecord[]> {
  const limit = Math.max(0, params.limit ?? DEFAULT_LIST_LIMIT);
  let beforeId: string | null = null;
  if (params.beforeId !== undefined) {
    // An id that no job can have ends the paging rather than failing the cast.
    beforeId = toDbId(params.beforeId);
    if (beforeId === null) return [];
  }
  const rows = await ctx.run<JobRow>(LIST_JOBS, [
    params.queue ?? null,
    params.state ?? null,
    params.kind ?? null,
    beforeId,
    limit,
  ]);
  return rows.map(toJobRecord);
}

export async function getJobEvents(ctx: SqlContext, params: { id: string }): Promise<JobEvent[]> {
  const id = toDbId(params.id);
  if (id === null) return [];
  const rows = await ctx.run<JobEventRow>(GET_JOB_EVENTS, [id]);
  return rows.map(toJobEvent);
}

export async function countJobs(ctx: SqlContext): Promise<JobCount[]> {
  return ctx.run<JobCount>(COUNT_JOBS, []);
}
