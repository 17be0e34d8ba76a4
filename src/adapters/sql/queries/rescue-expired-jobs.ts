import type { JobRecord } from '../../../types.js';
import { jobColumns, toJobRecord } from '../job-row.js';
import type { JobRow } from '../job-row.js';
import { rescueLimit } from '../../rescue-limit.js';
import type { RescueParams } from '../../store.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement, NOW } from '../statement.js';
import { CANCELLED_BY_REQUEST } from './cancel-job.js';

/**
 * The reaper, in one statement:
 * - Running rows whose lease expired (their worker is gone) go back to `retrying` (due at
 *   once) or, with no attempt left or past their `expires_at`, to `dead`; to `cancelled` if a
 *   cancel was requested. It reads jobs_lease_expiry_idx, which holds only running rows.
 * - Rows not running (pending, retrying, and `waiting` for other jobs in a flow) past their
 *   `expires_at` go to `dead` (code `expired`), read from jobs_expiry_idx, which holds only
 *   those rows that have a deadline (migration 0012). A waiting one's dependents follow their
 *   policy through the trigger of migration 0009.
 * SKIP LOCKED passes over a row that a worker or a claim is writing right now instead of
 * waiting (that write settles it, or the next pass does).
 * At most `$2` rows in all, the longest expired first, so that the transaction stays small
 * after a fleet-wide outage; the caller repeats until a call rescues fewer.
 */
/** No attempt left, or past the deadline across all attempts (null when it has none). */
const LAST = `(j.attempt >= j.max_attempts or j.expires_at <= ${NOW})`;

const RESCUE_EXPIRED_JOBS = defineStatement(
  'rescue_expired_jobs',
  (s) => `
with expired as (
  select id from ${s.quoted}.jobs
  where state = 'running' and lease_expires_at < ${NOW}
  order by lease_expires_at
  limit $2
  for update skip locked
),
rescued as (
  update ${s.quoted}.jobs j
  set state = case when j.cancel_requested_at is not null then 'cancelled' when ${LAST} then 'dead' else 'retrying' end,
    run_at = case when j.cancel_requested_at is not null or ${LAST} then j.run_at else ${NOW} end,
    finished_at = case when j.cancel_requested_at is not null or ${LAST} then ${NOW} end,
    error = case when j.cancel_requested_at is not null then '${CANCELLED_BY_REQUEST}'::jsonb
      else jsonb_build_object('code', 'lease_expired', 'message', format('lease of worker "%s" expired', j.worker_id)) end,
    lease_token = null, lease_expires_at = null, updated_at = ${NOW}
  from expired e
  where j.id = e.id
  returning j.*, 'running' as from_state
),
overdue as (
  select id, state from ${s.quoted}.jobs
  where expires_at <= ${NOW} and state in ('pending', 'retrying', 'waiting', 'sleeping')
  order by expires_at
  limit greatest(0, $2 - (select count(*) from expired))
  for update skip locked
),
ended as (
  update ${s.quoted}.jobs j
  set state = 'dead', finished_at = ${NOW}, updated_at = ${NOW},
    error = jsonb_build_object('code', 'expired', 'message', format('JobExpired: the deadline across all attempts (%s) passed',
      to_char(j.expires_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
  from overdue o
  where j.id = o.id
  returning j.*, o.state as from_state
),
history as (
  insert into ${s.quoted}.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
  select id, from_state, state, attempt, worker_id, updated_at, error from rescued
  union all
  select id, from_state, state, attempt, null, updated_at, error from ended
)
select ${jobColumns('r', s)} from (select * from rescued union all select * from ended) r order by r.id
`,
);

export async function rescueExpiredJobs(ctx: SqlContext, params: RescueParams = {}): Promise<JobRecord[]> {
  const rows = await ctx.run<JobRow>(RESCUE_EXPIRED_JOBS, [ctx.now(), rescueLimit(params)]);
  return rows.map(toJobRecord);
}
