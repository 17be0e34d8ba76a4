import type { BacklogState, QueueDepth } from '../../store.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement, NOW } from '../statement.js';

/**
 * Each queue's exact depth for metrics, in one statement that reads two partial indexes and
 * never the table (index-only scans; the heap only for pages vacuum has not yet marked
 * all-visible):
 * - jobs_live_idx (queue, state, run_at) over the unfinished jobs (migration 0029): counts per
 *   queue and state, and the oldest due runAt among pending and retrying ones;
 * - jobs_unhappy_idx (state, queue, id) over dead, skipped and cancelled jobs (0002).
 * Completed jobs are in neither, so a scrape costs the backlog and the unpruned failures,
 * whatever the history. `$1`: the injected clock's time, or null for the database's.
 */
export const GET_QUEUE_DEPTHS = defineStatement(
  'get_queue_depths',
  (s) => `
select queue, state, count(*)::int as count,
  coalesce(extract(epoch from ${NOW} - min(run_at) filter (where state in ('pending', 'retrying') and run_at <= ${NOW})), 0)::float8 as age
from ${s.quoted}.jobs
where state in ('pending', 'retrying', 'running', 'waiting', 'sleeping')
group by queue, state
union all
select queue, state, count(*)::int, 0
from ${s.quoted}.jobs
where state in ('dead', 'skipped', 'cancelled')
group by state, queue
`,
);

const BACKLOG_STATES: readonly BacklogState[] = ['pending', 'retrying', 'running', 'dead', 'skipped', 'cancelled', 'waiting', 'sleeping'];

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
      const counts = Object.fromEntries(BACKLOG_STATES.map((state) => [state, 0])) as Record<BacklogState, number>;
      depth = { queue: row.queue, counts, oldestDueAgeSeconds: 0 };
      byQueue.set(row.queue, depth);
    }
    depth.counts[row.state] = row.count;
    depth.oldestDueAgeSeconds = Math.max(depth.oldestDueAgeSeconds, Number(row.age));
  }
  // Byte order, as the memory store sorts JavaScript strings.
  return [...byQueue.values()].sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0));
}
