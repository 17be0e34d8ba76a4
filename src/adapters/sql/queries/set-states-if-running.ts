import type { JobOutcome } from '../../store.js';
import { toDbId } from '../job-row.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement, NOW } from '../statement.js';
import { CANCELLED_BY_REQUEST } from './cancel-job.js';

/**
 * Outcomes of many attempts (completed, retrying, snoozed, dead, skipped, cancelled) in one
 * statement: a batched writer serves every job actor that finished in the same tick.
 * - Each row is fenced: it changes only while running under the outcome's lease token.
 * - DISTINCT ON keeps, per job, the first outcome that passes the fence, as applying them in
 *   order would: the first moves the row out of running and fails every later one.
 * - A job that would run again (retrying, snoozed, released) but whose cancel was requested
 *   meanwhile is cancelled instead. A snooze goes back to pending, a release to retrying,
 *   each with one more attempt allowed: neither spends one.
 * - Progress the attempt reported last, not yet written, goes in with the outcome.
 * - The lease is cleared, the worker id kept for the record; the history row goes in with
 *   the change.
 * - Each outcome's row is looked up by primary key (`lateral … limit 1`, which the planner
 *   cannot pull up into a join). As a join, planned from jsonb_to_recordset's fixed guess of
 *   100 input rows, it hashed every running job, fetched through jobs_lease_expiry_idx, whose
 *   entries for rows that have finished since the last vacuum it also visits: a cost that grew
 *   with every job run (2,786 index entries read for 51 outcomes, a few thousand jobs into a
 *   drain).
 * - That lookup names the primary key alone; the fence (`fenced`) is tested on the row it
 *   finds, outside the `limit 1`, where the planner cannot push it down. With `state =
 *   'running'` in its WHERE, jobs_lease_expiry_idx (running rows only) could answer it too,
 *   and a table analyzed while few of its rows ran (mostly sleeping or finished jobs) makes
 *   that index look empty: the planner took it, and every outcome then read through the
 *   running jobs (all those claimed ahead, hundreds) to find its own, 31 pages an outcome in
 *   a drain beside 100,000 sleepers against 3. The update below still tests the fence on the
 *   row it locks; its join reads the running jobs once for the statement at most.
 */
export const SET_STATES_IF_RUNNING = defineStatement(
  'set_states_if_running',
  (s) => `
with outcome as (
  select distinct on (o.id) o.i, o.id, o.token, o.result, o.delay_ms, o.percent, o.message,
    case when again then 'cancelled' else o.state end as state,
    case when again then '${CANCELLED_BY_REQUEST}'::jsonb else o.error end as error
  from jsonb_to_recordset($2::jsonb) as o(
    i int, id bigint, token text, state text, result jsonb, error jsonb, delay_ms float8,
    percent float8, message text)
  cross join lateral (
    select j.state = 'running' and j.lease_token::text = o.token as fenced,
      o.state in ('retrying', 'snoozed', 'released') and j.cancel_requested_at is not null as again
    from ${s.quoted}.jobs j
    where j.id = o.id
    limit 1
  ) c
  where c.fenced
  order by o.id, o.i
),
written as (
  update ${s.quoted}.jobs j
  set state = case o.state when 'snoozed' then 'pending' when 'released' then 'retrying' else o.state end,
    result = case when o.state = 'completed' then o.result else j.result end,
    error = case when o.state = 'completed' then null else o.error end,
    run_at = case when o.state in ('retrying', 'snoozed', 'released') then ${NOW} + o.delay_ms * interval '1 millisecond' else j.run_at end,
    max_attempts = case when o.state in ('snoozed', 'released') then j.max_attempts + 1 else j.max_attempts end,
    finished_at = case when o.state in ('retrying', 'snoozed', 'released') then null else ${NOW} end,
    progress_percent = coalesce(o.percent, j.progress_percent),
    progress_message = case when o.percent is null then j.progress_message else o.message end,
    progress_at = case when o.percent is null then j.progress_at else ${NOW} end,
    lease_token = null, lease_expires_at = null, updated_at = ${NOW}
  from outcome o
  where j.id = o.id and j.state = 'running' and j.lease_token::text = o.token
  returning j.id, j.state, j.attempt, j.worker_id, j.error, j.updated_at, o.i
),
history as (
  insert into ${s.quoted}.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
  select id, 'running', state, attempt, worker_id, updated_at, error from written
)
select i from written
`,
);

export async function setStatesIfRunning(
  ctx: SqlContext,
  params: { outcomes: readonly JobOutcome[] },
): Promise<boolean[]> {
  if (params.outcomes.length === 0) return [];
  const input = JSON.stringify(
    params.outcomes.map((o, i) => ({
      i,
      id: toDbId(o.id),
      token: o.leaseToken,
      state: o.state,
      result: o.state === 'completed' ? o.result : null,
      error: 'error' in o ? o.error : null,
      delay_ms: o.state === 'retrying' || o.state === 'snoozed' || o.state === 'released' ? o.delayMs : null,
      ...(o.lastProgress && { percent: o.lastProgress.percent, message: o.lastProgress.message }),
    })),
  );
  const rows = await ctx.run<{ i: number }>(SET_STATES_IF_RUNNING, [ctx.now(), input]);
  const applied = new Set(rows.map((row) => row.i));
  return params.outcomes.map((_, i) => applied.has(i));
}
