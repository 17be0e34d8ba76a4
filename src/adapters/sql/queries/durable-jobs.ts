/**
 * Durable jobs' statements (migration 0017, docs/durable-jobs.md): a step's checkpoint, a
 * sleep or signal wait, a signal. Each is one round trip, fenced where it writes for an
 * attempt: a zombie's checkpoint or sleep finds no lease and writes nothing.
 */
import { JobEndedError, JobNotFoundError } from '../../../errors.js';
import type { JobState } from '../../../types.js';
import type { NextDueQuestion, SignalDelivery, SqlClient, StepCheckpoint, SuspendAnswer, SuspendRequest } from '../../store.js';
import { toDbId } from '../job-row.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement, NOW } from '../statement.js';

/**
 * A batch of checkpoints, one row of job_steps each (migration 0027; kind `s`, 0030). FOR
 * SHARE fences every one: a rescue, cancel or outcome that ends the lease takes the row's lock
 * for update, so it either waits for this statement or has committed before it, and then the
 * lease is not found. The job's row is read and locked, never rewritten. `k` (the input's
 * position) orders one job's entries as the handler made them. The input is read once; the
 * jobs' rows are fetched by primary key (`= any(array(…))`, as in set-states-if-running.ts),
 * never by a scan of every running job.
 */
export const CHECKPOINT_STEPS = defineStatement(
  'checkpoint_steps',
  (s) => `
with input as materialized (
  select * from json_to_recordset($2::json) as i(k int, id bigint, name text, value json, token text)
),
fenced as (
  select i.k, i.id, i.name, i.value from input i
  join ${s.quoted}.jobs j on j.id = i.id and j.state = 'running' and j.lease_token::text = i.token
  where j.id = any(array(select id from input))
  for share of j
),
stored as (
  insert into ${s.quoted}.job_steps (job_id, kind, name, at, value)
  select id, 's', name, ${NOW}, value from fenced order by k
)
select k from fenced
`,
);

const SUSPEND_JOB = defineStatement(
  'suspend_job',
  (s) => `select answer, payload from ${s.quoted}.suspend_job($1::timestamptz, $2, $3::uuid, $4, $5, $6, $7::timestamptz, $8::float8)`,
);

const SIGNAL_JOB = defineStatement(
  'signal_job',
  (s) => `select woke, job_state from ${s.quoted}.signal_job($1::timestamptz, $2, $3, $4::jsonb)`,
);

// The predicate is jobs_later_idx's (migration 0021), so the server reads that index alone.
export const NEXT_DUE_IN = defineStatement(
  'next_due_in',
  (s) => `
select extract(epoch from min(run_at) - ${NOW}) * 1000 as due_in_ms
from ${s.quoted}.jobs
where (state in ('retrying', 'sleeping') or (state = 'pending' and run_at > created_at))
  and run_at > ${NOW} - $4::float8 * interval '1 millisecond' and run_at <= ${NOW} + $3::float8 * interval '1 millisecond'
  and queue = any($2::text[])
`,
);

export async function nextDueIn(ctx: SqlContext, params: NextDueQuestion): Promise<number | null> {
  if (params.queues.length === 0) return null;
  const [row] = await ctx.run<{ due_in_ms: string | number | null }>(NEXT_DUE_IN, [ctx.now(), params.queues, params.withinMs, params.sinceMs ?? 0]);
  return row?.due_in_ms == null ? null : Math.max(0, Number(row.due_in_ms));
}

export async function checkpointSteps(ctx: SqlContext, steps: readonly StepCheckpoint[]): Promise<boolean[]> {
  const input = steps.flatMap((step, k) => {
    const id = toDbId(step.id);
    return id === null ? [] : [{ k, id, name: step.name, value: step.result ?? null, token: step.leaseToken }];
  });
  if (input.length === 0) return steps.map(() => false);
  const rows = await ctx.run<{ k: number }>(CHECKPOINT_STEPS, [ctx.now(), JSON.stringify(input)]);
  const applied = new Set(rows.map((row) => Number(row.k)));
  return steps.map((_, k) => applied.has(k));
}

export async function suspendIfRunning(ctx: SqlContext, request: SuspendRequest): Promise<SuspendAnswer> {
  const id = toDbId(request.id);
  if (id === null || !isUuid(request.leaseToken)) return { answer: 'lost' };
  const at = 'at' in request.wake ? request.wake.at.toISOString() : null;
  const delayMs = 'delayMs' in request.wake ? request.wake.delayMs : null;
  const signal = request.kind === 'signal' ? request.signal : null;
  const [row] = await ctx.run<{ answer: SuspendAnswer['answer']; payload: unknown }>(SUSPEND_JOB, [
    ctx.now(), id, request.leaseToken, request.kind, request.name, signal, at, delayMs,
  ]);
  return row!.answer === 'received' ? { answer: 'received', payload: row!.payload } : { answer: row!.answer };
}

const NO_DATA_FOUND = 'P0002';
const OBJECT_NOT_IN_PREREQUISITE_STATE = '55000';

export async function sendSignal(
  ctx: SqlContext,
  params: { id: string; name: string; payload: unknown; client?: SqlClient },
): Promise<SignalDelivery> {
  const id = toDbId(params.id);
  if (id === null) throw new JobNotFoundError(params.id);
  const values = [ctx.now(), id, params.name, JSON.stringify(params.payload ?? null)];
  try {
    const rows = await ctx.run<{ woke: boolean; job_state: JobState }>(SIGNAL_JOB, values, params.client);
    const [row] = rows;
    return { delivered: row!.woke ? 'woke' : 'queued', state: row!.job_state };
  } catch (error) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    if (code === NO_DATA_FOUND) throw new JobNotFoundError(params.id);
    if (code === OBJECT_NOT_IN_PREREQUISITE_STATE) {
      const state = typeof message === 'string' ? (/\((\w+)\)/.exec(message)?.[1] ?? 'ended') : 'ended';
      throw new JobEndedError(params.id, state);
    }
    throw error;
  }
}

function isUuid(token: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(token);
}
