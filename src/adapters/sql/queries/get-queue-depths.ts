import { type BacklogState, type QueueDepth, zeroBacklogCounts } from '../../store.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement, NOW } from '../statement.js';

/**
 * Each queue's exact depth for metrics, in one statement that reads only the partial indexes
 * the claim, the reaper and the flows already keep, each over its few live states, and the
 * rows they point at: never the completed jobs, whatever the history holds.
 * - pending and retrying: jobs_claim_idx, with the oldest due runAt;
 * - running: the reaper's jobs_lease_expiry_idx; waiting: jobs_waiting_idx; sleeping:
 *   jobs_later_idx; dead, skipped and cancelled: jobs_unhappy_idx.
 * No index of its own: one over every live state would take an entry on each of a job's
 * transitions (+9% of a job's WAL, measured), for a read made once a scrape. The row is
 * read for its state where the index does not hold it (the waiting backlog's, bounded by
 * the backlog). Planned with sequential scans and JIT off (indexScansOnly), so a plan made
 * while the table was small is not kept once it is large. `$1`: the injected clock's time, or
 * null for the database's.
 */
export const GET_QUEUE_DEPTHS = defineStatement(
  'get_queue_depths',
  (s) => `
select queue, state, count(*)::int as count,
  coalesce(extract(epoch from ${NOW} - min(run_at) filter (where run_at <= ${NOW})), 0)::float8 as age
from ${s.quoted}.jobs
where state in ('pending', 'retrying')
group by queue, state
union all
select queue, 'running', count(*)::int, 0 from ${s.quoted}.jobs where state = 'running' group by queue
union all
select queue, 'waiting', count(*)::int, 0 from ${s.quoted}.jobs where state = 'waiting' group by queue
union all
select queue, 'sleeping', count(*)::int, 0 from ${s.quoted}.jobs where state = 'sleeping' group by queue
union all
select queue, state, count(*)::int, 0
from ${s.quoted}.jobs
where state in ('dead', 'skipped', 'cancelled')
group by state, queue
`,
  { indexScansOnly: true },
);


interface DepthRow {
  queue: string;
  state: BacklogState;
  count: number;
  age: number;
}

export async function getQueueDepths(ctx: SqlContext): Promise<QueueDepth[]> {
  const rows = await ctx.run<DepthRow>(GET_QUEUE_DEPTHS, [ctx.now()]);
  const byQueue = new Map<string, QueueDepth>();
  for (const row of rows) {
    let depth = byQueue.get(row.queue);
    if (!depth) {
      const counts = zeroBacklogCounts();
      depth = { queue: row.queue, counts, oldestDueAgeSeconds: 0 };
      byQueue.set(row.queue, depth);
    }
    depth.counts[row.state] = row.count;
    depth.oldestDueAgeSeconds = Math.max(depth.oldestDueAgeSeconds, Number(row.age));
  }
  // Byte order, as the memory store sorts JavaScript strings.
  return [...byQueue.values()].sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0));
}
