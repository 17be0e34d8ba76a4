import type { Lease, LeaseRenewal } from '../../store.js';
import { toDbId } from '../job-row.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement, NOW } from '../statement.js';

/**
 * Heartbeat: every lease a process holds, renewed in one statement instead of one round trip
 * per job. The join is on the primary key; the fence (still running under this token) makes a
 * zombie's heartbeat a no-op. An expired lease nobody rescued yet is still renewed. No
 * history row: a renewal is not a transition. It also reports a cancel requested for the
 * job, so that the holder hears of it even when the notification was lost.
 * The rows are fetched by primary key (`= any(array(…))`): a plain join, planned from
 * jsonb_to_recordset's guess of 100 rows, may hash every running job instead (see
 * set-states-if-running.ts).
 */
const RENEW_LEASES = defineStatement(
  'renew_leases',
  (s) => `
update ${s.quoted}.jobs j
set lease_expires_at = ${NOW} + $3::float8 * interval '1 millisecond', updated_at = ${NOW}
from (select distinct id, token from jsonb_to_recordset($2::jsonb) as x(id bigint, token text)) l
where j.id = l.id and j.state = 'running' and j.lease_token::text = l.token
  and j.id = any(array(select (x ->> 'id')::bigint from jsonb_array_elements($2::jsonb) x))
returning j.id::text as id, l.token, j.cancel_requested_at is not null as cancel
`,
);

export async function renewLeases(
  ctx: SqlContext,
  params: { leases: readonly Lease[]; leaseMs: number },
): Promise<LeaseRenewal[]> {
  if (params.leases.length === 0) return [];
  const input = JSON.stringify(params.leases.map((l) => ({ id: toDbId(l.id), token: l.leaseToken })));
  const rows = await ctx.run<{ id: string; token: string; cancel: boolean }>(RENEW_LEASES, [ctx.now(), input, params.leaseMs]);
  const renewed = new Map(rows.map((row) => [`${row.id} ${row.token}`, row.cancel ? 'cancel' : 'renewed'] as const));
  return params.leases.map((l) => renewed.get(`${l.id} ${l.leaseToken}`) ?? 'lost');
}
