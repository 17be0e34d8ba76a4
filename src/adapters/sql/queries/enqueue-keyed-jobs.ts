import type { EnqueueJob, EnqueueResult, SqlClient } from '../../store.js';
import { jobColumns, toJobRecord } from '../job-row.js';
import type { JobRow } from '../job-row.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement, NOW } from '../statement.js';
import { toInput } from './enqueue-input.js';

/**
 * Enqueue of a call in which some job replaces a live holder of its unique key or debounces
 * (migration 0019), or goes to a fair queue (migration 0020: its rank is its tenant's next)
 * with a unique key or beside one that replaces or debounces (a call of fair jobs without
 * those is enqueue-fair-jobs.ts's): every job of the call in one statement, each through
 * enqueue_keyed in input order, so a later input sees what an earlier one did (a debounce key
 * given twice is one job). The times are resolved and checked as in insertJobsCtes (enqueue-new-jobs.ts); a
 * debounced job is due `debounce_ms` from now. A job whose times are refused raises before
 * any is written. Row by row, where enqueue_jobs is set-wise: these calls are the rarer kind.
 */
const ENQUEUE_KEYED_JOBS = defineStatement(
  'enqueue_keyed_jobs',
  (s) => `
with resolved as materialized (
  select x.*, n.now,
    coalesce(x.run_at, n.now + x.run_in_ms * interval '1 millisecond', n.now + x.debounce_ms * interval '1 millisecond', n.now) as due,
    coalesce(x.expires_at, n.now + x.expires_in_ms * interval '1 millisecond') as expiry
  from jsonb_to_recordset($2::jsonb) as x(
    i int, queue text, kind text, payload jsonb, priority int, run_at timestamptz, run_in_ms float8,
    max_attempts int, unique_key text, concurrency_key text, expires_at timestamptz, expires_in_ms float8,
    trace_context jsonb, on_conflict text, debounce_key text, debounce_ms float8, debounce_max_ms float8,
    fair boolean, tenant text, weight float8)
  cross join (select ${NOW} as now) n
  order by x.i
)
select r.i, e.created, e.replaced, ${jobColumns('j', s, { when: 'not e.created' })}
from resolved r
cross join lateral ${s.quoted}.enqueue_keyed(r.now, r.queue, r.kind, coalesce(r.payload, 'null'), coalesce(r.priority, 0), r.due,
  r.max_attempts, r.unique_key, r.concurrency_key,
  case when r.expiry <= r.due or r.due >= '10000-01-01Z' or r.expiry >= '10000-01-01Z'
    then ${s.quoted}.refuse_job_times(r.due, r.expiry, r.expires_in_ms is not null) else r.expiry end,
  r.trace_context, r.on_conflict, r.debounce_key, r.now + r.debounce_max_ms * interval '1 millisecond',
  r.fair, r.tenant, r.weight) e
cross join lateral (select (e.job).*) j
order by r.i
`,
);

/** Whether the call needs ENQUEUE_KEYED_JOBS: a job replaces, debounces or is ranked. */
export function isKeyedEnqueue(jobs: readonly EnqueueJob[]): boolean {
  return jobs.some(
    (job) => (job.onConflict !== undefined && job.onConflict !== 'return') || (job.debounce ?? null) !== null || (job.fairShare ?? null) !== null,
  );
}

export async function enqueueKeyedJobs(
  ctx: SqlContext,
  params: { jobs: readonly EnqueueJob[]; client?: SqlClient },
): Promise<EnqueueResult[]> {
  const input = JSON.stringify(
    params.jobs.map((job, i) => ({
      ...toInput(i, job),
      on_conflict: job.onConflict === 'replaceRunning' ? 'replace_running' : (job.onConflict ?? 'return'),
      debounce_key: job.debounce?.key ?? null,
      debounce_ms: job.debounce?.delayMs ?? null,
      debounce_max_ms: job.debounce?.maxWaitMs ?? null,
      fair: (job.fairShare ?? null) !== null,
      tenant: job.fairShare?.tenant ?? null,
      weight: job.fairShare?.weight ?? null,
    })),
  );
  const values = [ctx.now(), input];
  const rows: (JobRow & { i: number; created: boolean; replaced: boolean })[] = params.client
    ? (await params.client.query(ctx.statement(ENQUEUE_KEYED_JOBS).text, values)).rows
    : await ctx.run(ENQUEUE_KEYED_JOBS, values);
  if (rows.length !== params.jobs.length) throw new Error(`enqueue_keyed_jobs answered ${rows.length} rows for ${params.jobs.length} jobs`);
  return rows.map((row) => ({ job: toJobRecord(row), created: row.created, ...(row.replaced ? { replaced: true } : {}) }));
}
