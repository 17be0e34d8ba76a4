import type { TenantBacklogs } from '../../store.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement } from '../statement.js';

/**
 * A fair queue's tenants with their backlogs (issue 28: the inspector shows them): per tenant
 * the jobs waiting to be claimed (pending, retrying, sleeping: ranked, through
 * jobs_fair_claim_idx) and those running (through the lease index, which holds running rows
 * only). Each read stops after $2 rows, so a queue with a million waiting jobs costs what a
 * page does; past it the counts are the first $2 jobs' (`partial`). A queue that is not fair
 * (no tenant_ranks row) answers nothing. $1 queue, $2 max scan.
 */
export const TENANT_BACKLOGS = defineStatement(
  'tenant_backlogs',
  (s) => `
with fair as (
  select exists (select 1 from ${s.quoted}.tenant_ranks t where t.queue = $1) as yes
),
w as materialized (
  select j.tenant from ${s.quoted}.jobs j
  where j.queue = $1 and j.fair_rank is not null and j.state in ('pending', 'retrying', 'sleeping')
  limit $2::int + 1
),
r as materialized (
  select j.tenant from ${s.quoted}.jobs j
  where j.state = 'running' and j.queue = $1 and (select yes from fair)
  limit $2::int + 1
)
select x.tenant, sum(x.waiting)::int as waiting, sum(x.running)::int as running,
  (select count(*) from w)::int as waiting_read, (select count(*) from r)::int as running_read
from (
  select tenant, 1 as waiting, 0 as running from (select * from w limit $2) w1
  union all select tenant, 0, 1 from (select * from r limit $2) r1
) x
group by x.tenant
order by waiting desc, running desc, x.tenant collate "C" nulls first
`,
);

const DEFAULT_MAX_SCAN = 10_000;

export async function getTenantBacklogs(ctx: SqlContext, params: { queue: string; maxScan?: number }): Promise<TenantBacklogs> {
  const maxScan = Math.max(1, params.maxScan ?? DEFAULT_MAX_SCAN);
  const rows = await ctx.run<{ tenant: string | null; waiting: number; running: number; waiting_read: number; running_read: number }>(
    TENANT_BACKLOGS,
    [params.queue, maxScan],
  );
  const first = rows[0];
  return {
    tenants: rows.map((row) => ({ tenant: row.tenant, waiting: row.waiting, running: row.running })),
    partial: first !== undefined && (first.waiting_read > maxScan || first.running_read > maxScan),
  };
}
