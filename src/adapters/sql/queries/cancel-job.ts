import type { JobRecord } from '../../../types.js';
import { jobColumns, toDbId, toJobRecord } from '../job-row.js';
import type { JobRow } from '../job-row.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement, NOW } from '../statement.js';

/**
 * Cancels a job that no worker holds. The row is locked first, so the answer shows the state
 * the decision was made on; a running job is left to its worker (cancelled = false). The
 * history row names no worker: the cancel came from outside.
 */
const CANCEL_JOB = defineStatement(
  'cancel_job',
  (s) => `
with target as (
  select * from ${s.quoted}.jobs where id = $2 for update
),
cancelled as (
  update ${s.quoted}.jobs j
  set state = 'cancelled', error = '{"code": "cancelled", "message": "cancelled by request"}',
    finished_at = ${NOW}, updated_at = ${NOW}
  from target t
  where j.id = t.id and t.state in ('pending', 'retrying')
  returning j.*, t.state as from_state
),
history as (
  insert into ${s.quoted}.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
  select id, from_state, state, attempt, null, updated_at, error from cancelled
)
select true as cancelled, ${jobColumns('c')} from cancelled c
union all
select false, ${jobColumns('t')} from target t where not exists (select from cancelled)
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
