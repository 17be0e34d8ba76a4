import type { EnqueueJob, EnqueueResult, SqlClient } from '../../store.js';
import { insertedJobRecord, type InsertedJobRow } from '../job-row.js';
import type { SqlContext } from '../sql-context.js';
import type { SqlSchema } from '../sql-schema.js';
import { defineStatement, NOW } from '../statement.js';
import { COLUMNS_INPUT, toColumns } from './enqueue-input.js';

/**
 * The CTEs every enqueue statement starts with, from `input`: a select of each job's columns
 * as `toInput` names them (enqueue-input.ts; `COLUMNS_INPUT` or a jsonb document's records):
 * - `numbered`: ids drawn in input order before the insert, so each inserted row maps back
 *   to its input (by id order, or by id when some inputs are not inserted); and each job's
 *   times by the store's clock: `due` (runAt, now + runIn, or now) and `expiry` (expiresAt or
 *   now + expiresIn);
 * - with `ranked` (enqueue-fair-jobs.ts): CTEs that end in `ranked` (id, rank), each ranked
 *   job's fair rank, the input carrying each job's `tenant` and `weight` (null: not ranked);
 * - `inserted`: the jobs, with `onConflict` (empty: every job goes in), each with the columns
 *   `returning` names (all by default; `notified` needs `queue`). A job whose times are
 *   wrong once resolved (expiry not after due, a relative one past the year 9999) calls
 *   refuse_job_times (migration 0014), which raises: nothing of the statement is written. The
 *   library checked every time it was given against the others given, by the caller's clock;
 *   this is the check against the store's. Three comparisons per job; the call only on refusal;
 * - `notified`: one NOTIFY per queue, in the same statement; inside a caller's transaction
 *   it happens only if it commits.
 * No history row: a job's creation is read from its row (created_at; migration 0032).
 */
export function insertJobsCtes(
  s: SqlSchema,
  { input, onConflict = '', ranked, returning = '*' }: { input: string; onConflict?: string; ranked?: string; returning?: string },
): string {
  return `
with input as (${input}),
numbered as (
  select nextval('${s.quoted}.jobs_id_seq') as id, x.*,
    coalesce(x.run_at, ${NOW} + x.run_in_ms * interval '1 millisecond', ${NOW}) as due,
    coalesce(x.expires_at, ${NOW} + x.expires_in_ms * interval '1 millisecond') as expiry
  from (select * from input order by i) x
),${ranked ?? ''}
inserted as (
  insert into ${s.quoted}.jobs (id, queue, kind, payload, priority, run_at, max_attempts,
    unique_key, concurrency_key, expires_at, trace_context, created_at, updated_at${ranked ? ', tenant, fair_rank' : ''})
  overriding system value
  select id, queue, kind, coalesce(payload, 'null'), coalesce(priority, 0), due, max_attempts,
    unique_key, concurrency_key,
    case when expiry <= due or due >= '10000-01-01Z' or expiry >= '10000-01-01Z'
      then ${s.quoted}.refuse_job_times(due, expiry, expires_in_ms is not null) else expiry end,
    trace_context, ${NOW}, ${NOW}${ranked ? ', tenant, rank' : ''}
  from numbered${ranked ? ' left join ranked using (id)' : ''}
  ${onConflict}
  returning ${returning}
),
notified as (
  select count(pg_notify('${s.channel}', q.queue)) from (select distinct queue from inserted) q
)`;
}

/**
 * Bulk enqueue of jobs none of which has a unique key, the common case: every job is
 * inserted, so the statement needs none of enqueue_jobs' conflict handling (no ON CONFLICT
 * arbiter check per row, no look-up of live holders, no join back to the input): the rows in
 * id order are the inputs in order. It answers only what the database decided (the id, the
 * times, the payload and trace context as stored); the rest of each record is the input's,
 * which the row holds as given (insertedJobRecord). Times come as epoch milliseconds: a
 * timestamptz's text and its parse cost more than the rest of a job's enqueue in Node. The
 * jobs come as one JSON array a column (`toColumns`, enqueue-input.ts).
 */
const ENQUEUE_NEW_JOBS = defineStatement(
  'enqueue_new_jobs',
  (s) => `${insertJobsCtes(s, { input: COLUMNS_INPUT, returning: 'id, queue, payload, trace_context, created_at, run_at, expires_at' })}
select j.id::text as id, j.payload, j.trace_context,
  ${epochMs('j.created_at')} as created_ms, ${epochMs('j.run_at')} as run_ms, ${epochMs('j.expires_at')} as expires_ms
from inserted j cross join notified order by j.id
`,
);

/** A time the statement wrote (years 1 to 9999) as the milliseconds a Date holds of it. */
function epochMs(column: string): string {
  return `floor(extract(epoch from ${column}) * 1000)::float8`;
}

export async function enqueueNewJobs(
  ctx: SqlContext,
  params: { jobs: readonly EnqueueJob[]; client?: SqlClient },
): Promise<EnqueueResult[]> {
  const values = [ctx.now(), ...toColumns(params.jobs, params.jobs.map((_, i) => i))];
  const rows = await ctx.run<InsertedJobRow>(ENQUEUE_NEW_JOBS, values, params.client);
  if (rows.length !== params.jobs.length) throw new Error(`enqueue_new_jobs inserted ${rows.length} rows for ${params.jobs.length} jobs`);
  return rows.map((row, i) => ({ job: insertedJobRecord(params.jobs[i]!, row), created: true }));
}
