import type { JobRecord } from '../../../types.js';
import { jobColumns, toJobRecord } from '../job-row.js';
import type { JobRow } from '../job-row.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement, NOW } from '../statement.js';

/**
 * The reaper: running rows whose lease expired (their worker is gone) go back to `retrying`
 * (due at once) or, with no attempt left, to `dead`. It reads jobs_lease_expiry_idx, which
 * holds only running rows; SKIP LOCKED passes over a row whose worker is writing it right
 * now instead of waiting (that write settles it anyway).
 */
const RESCUE_EXPIRED_JOBS = defineStatement(
  'rescue_expired_jobs',
  (s) => `
with expired as (
  select id from ${s.quoted}.jobs
  where state = 'running' and lease_expires_at < ${NOW}
  for update skip locked
),
rescued as (
  update ${s.quoted}.jobs j
  set state = case when j.attempt >= j.max_attempts then 'dead' else 'retrying' end,
    run_at = case when j.attempt >= j.max_attempts then j.run_at else ${NOW} end,
    finished_at = case when j.attempt >= j.max_attempts then ${NOW} end,
    error = jsonb_build_object('code', 'lease_expired',
      'message', format('lease of worker "%s" expired', j.worker_id)),
    lease_token = null, lease_expires_at = null, updated_at = ${NOW}
  from expired e
  where j.id = e.id
  returning j.*
),
history as (
  insert into ${s.quoted}.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
  select id, 'running', state, attempt, worker_id, updated_at, error from rescued
)
select ${jobColumns('r')} from rescued r order by r.id
`,
);

export async function rescueExpiredJobs(ctx: SqlContext): Promise<JobRecord[]> {
  const rows = await ctx.run<JobRow>(RESCUE_EXPIRED_JOBS, [ctx.now()]);
  return rows.map(toJobRecord);
}
