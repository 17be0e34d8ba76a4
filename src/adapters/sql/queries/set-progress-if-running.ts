import type { ProgressUpdate } from '../../store.js';
import { toDbId } from '../job-row.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement, NOW } from '../statement.js';

/**
 * Progress of many running attempts in one statement: the supervisor throttles each job's
 * reports and sends those of a tick together. Fenced like a renewal (still running under this
 * token), no history row. Of two updates for one job that pass the fence, the later one is
 * written. The rows are fetched by primary key (a probe per input row, `lateral … limit 1`
 * on the id alone with the fence checked outside it, then `= any(array(…))`), as in
 * set-states-if-running.ts: a join planned from jsonb_to_recordset's guess of 100 rows hashes
 * every running job instead.
 */
export const SET_PROGRESS_IF_RUNNING = defineStatement(
  'set_progress_if_running',
  (s) => `
with p as (
  select distinct on (x.id) x.id, x.token, x.percent, x.message
  from jsonb_to_recordset($2::jsonb) as x(i int, id bigint, token text, percent float8, message text)
  cross join lateral (
    select j.state = 'running' and j.lease_token::text = x.token as fenced from ${s.quoted}.jobs j where j.id = x.id limit 1
  ) c
  where c.fenced
  order by x.id, x.i desc
)
update ${s.quoted}.jobs j
set progress_percent = p.percent, progress_message = p.message, progress_at = ${NOW}, updated_at = ${NOW}
from p
where j.id = any(array(select id from p)) and j.id = p.id and j.state = 'running' and j.lease_token::text = p.token
returning j.id::text as id, p.token
`,
);

export async function setProgressIfRunning(
  ctx: SqlContext,
  params: { updates: readonly ProgressUpdate[] },
): Promise<boolean[]> {
  if (params.updates.length === 0) return [];
  const input = JSON.stringify(
    params.updates.map((u, i) => ({ i, id: toDbId(u.id), token: u.leaseToken, percent: u.percent, message: u.message })),
  );
  const rows = await ctx.run<{ id: string; token: string }>(SET_PROGRESS_IF_RUNNING, [ctx.now(), input]);
  const applied = new Set(rows.map((row) => `${row.id} ${row.token}`));
  return params.updates.map((u) => applied.has(`${u.id} ${u.leaseToken}`));
}
