import type { EnqueueJob, EnqueueResult, SqlClient } from '../../store.js';
import { insertedJobRecord } from '../job-row.js';
import { inJsonbOrder } from '../../jsonb-order.js';
import type { SqlContext } from '../sql-context.js';
import type { SqlSchema } from '../sql-schema.js';
import { defineStatement, NOW } from '../statement.js';
import { COLUMNS_INPUT, sentColumn, toColumns } from './enqueue-input.js';

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
 * id order are the inputs in order. Its answer is one row of what only the database knows,
 * not a row a job: profiled, the rows (sent, then parsed by the driver) were a fifth of a
 * large call. The row holds
 * - `ids`: the ids drawn, as runs of consecutive ids ([first, count], first as text: a
 *   bigint), one run unless another call drew ids in between;
 * - `now_ms`: the statement's now, each job's created and updated time and its runAt when
 *   it gives none;
 * - `times`: [place in the call, runAt, expiresAt] of each job that gives runIn or
 *   expiresIn, which the database resolved (null when none does).
 * Times are epoch milliseconds, floored as a Date holds them. The rest of each record is the
 * input as the row holds it (`insertedJobRecord`): its payload and trace context are read
 * back from the JSON text sent, keys in jsonb's order.
 */
const ENQUEUE_NEW_JOBS = defineStatement(
  'enqueue_new_jobs',
  (s) => `${insertJobsCtes(s, { input: COLUMNS_INPUT, returning: 'id, queue' })}
select ${epochMs(NOW)}::text as now_ms,
  (select json_agg(json_build_array(first::text, n) order by first)
   from (select min(id) as first, count(*) as n
         from (select id, id - row_number() over (order by id) as run from inserted) j group by run) runs)::text as ids,
  (select json_agg(json_build_array(i, ${epochMs('due')}, ${epochMs('expiry')}) order by i)
   from numbered where run_in_ms is not null or expires_in_ms is not null)::text as times
from notified
`,
);

/** A time the statement wrote (years 1 to 9999) as the milliseconds a Date holds of it. */
function epochMs(time: string): string {
  return `floor(extract(epoch from ${time}) * 1000)::bigint`;
}

interface NewJobsAnswer {
  now_ms: string;
  ids: string;
  times: string | null;
}

export async function enqueueNewJobs(
  ctx: SqlContext,
  params: { jobs: readonly EnqueueJob[]; client?: SqlClient },
): Promise<EnqueueResult[]> {
  const { jobs } = params;
  const columns = toColumns(jobs, jobs.map((_, i) => i));
  const [answer] = await ctx.run<NewJobsAnswer>(ENQUEUE_NEW_JOBS, [ctx.now(), ...columns], params.client);
  const ids = idsOf(JSON.parse(answer!.ids) as [string, number][]);
  if (ids.length !== jobs.length) throw new Error(`enqueue_new_jobs inserted ${ids.length} rows for ${jobs.length} jobs`);
  const now = Number(answer!.now_ms);
  const resolved = new Map((JSON.parse(answer!.times ?? '[]') as [number, number, number | null][]).map(([i, run, expires]) => [i, { run, expires }]));
  const payloads = sentColumn(columns, 'payload')!;
  const traces = sentColumn(columns, 'trace_context');
  return jobs.map((job, i) => {
    const trace = traces?.[i];
    const times = resolved.get(i);
    return {
      created: true,
      job: insertedJobRecord(job, {
        id: ids[i]!,
        createdMs: now,
        runMs: times?.run ?? job.runAt?.getTime() ?? now,
        expiresMs: times ? times.expires : (job.expiresAt?.getTime() ?? null),
        payload: inJsonbOrder(payloads[i]),
        // Stored only when it is an object (COLUMNS_INPUT).
        traceContext: isObject(trace) ? (inJsonbOrder(trace) as Record<string, string>) : null,
      }),
    };
  });
}

/** Each id of the runs, in order. */
function idsOf(runs: readonly [string, number][]): string[] {
  const ids: string[] = [];
  for (const [first, count] of runs) {
    const start = BigInt(first);
    for (let k = 0; k < count; k++) ids.push((start + BigInt(k)).toString());
  }
  return ids;
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
