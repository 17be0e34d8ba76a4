import type { JobRecord } from '../../../types.js';
import { toDbId } from '../job-row.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement } from '../statement.js';
import { getJob } from './read-jobs.js';

/**
 * Retry by hand (migration 0018's retry_jobs): a dead, cancelled or skipped job goes back to
 * `pending`, due now, with at least one attempt left, no cancel request, and no deadline across
 * attempts if it passed; or to `waiting`, in a flow, while a parent has not ended. The jobs its
 * failure cancelled or killed come back with it, and those that wait for it wait again. Not
 * while a live job holds its unique key (reviving it would give the key two live holders), nor
 * while a parent has failed under an edge that is not 'run'. Wakes the queue, like an enqueue.
 */
const RETRY_JOB = defineStatement(
  'retry_job',
  (s) => `select exists (select from ${s.quoted}.retry_jobs($1::timestamptz, array[$2::bigint], true) r where r.r_id = $2::bigint) as retried`,
);

/** Every dead, cancelled or skipped job of the flow at once; null when there is no such flow. */
const RETRY_FLOW = defineStatement(
  'retry_flow',
  (s) => `
with retried as (
  select r.* from ${s.quoted}.retry_jobs($1::timestamptz, array(
    select j.id from ${s.quoted}.jobs j
    where j.flow_id = $2::bigint and j.state in ('dead', 'cancelled', 'skipped')), false) r
)
select (select count(*) from retried where r_from in ('dead', 'cancelled', 'skipped'))::int as retried
from ${s.quoted}.flows f where f.id = $2::bigint
`,
);

/** A live job took the unique key after this statement's snapshot. */
const UNIQUE_VIOLATION = '23505';

export async function retryJob(
  ctx: SqlContext,
  params: { id: string },
): Promise<{ job: JobRecord; retried: boolean } | null> {
  const id = toDbId(params.id);
  if (id === null) return null;
  let retried = false;
  try {
    const [row] = await ctx.run<{ retried: boolean }>(RETRY_JOB, [ctx.now(), id]);
    retried = row?.retried ?? false;
  } catch (error) {
    if ((error as { code?: unknown }).code !== UNIQUE_VIOLATION) throw error;
  }
  const job = await getJob(ctx, { id });
  return job ? { job, retried } : null;
}

export async function retryFlow(ctx: SqlContext, params: { id: string }): Promise<{ retried: number; left: number } | null> {
  const id = toDbId(params.id);
  if (id === null) return null;
  const [row] = await ctx.run<{ retried: number }>(RETRY_FLOW, [ctx.now(), id]);
  if (!row) return null;
  const [counted] = await ctx.run<{ left: number }>(COUNT_FAILED, [id]);
  return { retried: row.retried, left: counted?.left ?? 0 };
}

const COUNT_FAILED = defineStatement(
  'count_failed_in_flow',
  (s) => `select count(*)::int as "left" from ${s.quoted}.jobs where flow_id = $1::bigint and state in ('dead', 'cancelled', 'skipped')`,
);
