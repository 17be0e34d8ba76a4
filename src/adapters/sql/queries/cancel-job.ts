import type { JobRecord } from '../../../types.js';
import { jobColumns, toDbId, toJobRecord } from '../job-row.js';
import type { JobRow } from '../job-row.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement, NOW } from '../statement.js';
import { CANCEL_PAYLOAD_PREFIX } from '../wake-hub.js';

/** The error of a job cancelled from outside, as jsonb text. */
export const CANCELLED_BY_REQUEST = '{"code": "cancelled", "message": "cancelled by request"}';

/**
 * Cancels a job that no worker holds (pending, retrying, or waiting in a flow: the jobs that
 * wait for it follow their failure policy, by migration 0009's trigger). The row is locked first, so the answer shows the state
 * the decision was made on. A running job is left to its worker, which is told: the request
 * is kept on the row (its first time), which the worker's next renewal reports, and a NOTIFY
 * on the wake-up channel (`!cancel:<id>`, a payload no queue name can be) tells it at once.
 * The history row of a cancel names no worker: it came from outside.
 */
const CANCEL_JOB = defineStatement(
  'cancel_job',
  (s) => `
with target as (
  select * from ${s.quoted}.jobs where id = $2 for update
),
cancelled as (
  update ${s.quoted}.jobs j
  set state = 'cancelled', error = '${CANCELLED_BY_REQUEST}', finished_at = ${NOW}, updated_at = ${NOW}
  from target t
  where j.id = t.id and t.state in ('pending', 'retrying', 'waiting', 'sleeping')
  returning j.*, t.state as from_state
),
requested as (
  update ${s.quoted}.jobs j
  set cancel_requested_at = coalesce(j.cancel_requested_at, ${NOW}), updated_at = ${NOW}
  from target t
  where j.id = t.id and t.state = 'running'
  returning j.*
),
notified as (
  select count(pg_notify('${s.channel}', '${CANCEL_PAYLOAD_PREFIX}' || id)) from requested
),
history as (
  insert into ${s.quoted}.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
  select id, from_state, state, attempt, null, updated_at, error from cancelled
)
select true as cancelled, ${jobColumns('c', s)} from cancelled c
union all
select false, ${jobColumns('r', s)} from requested r cross join notified
union all
select false, ${jobColumns('t', s)} from target t
where not exists (select from cancelled) and not exists (select from requested)
`,
);

export async function cancelJob(
  ctx: SqlContext,
  params: { id: string },
): Promise<{ job: JobRecord; cancelled: boolean } | null> {
  const id = toDbId(params.id);
  if (id === null) return null;
  const [row] = await ctx.run<JobRow & { cancelled: boolean }>(CANCEL_JOB, [ctx.now(), id]);
  return row ? { job: toJobRecord(row), cancelled: row.cancelled } : null;
}
