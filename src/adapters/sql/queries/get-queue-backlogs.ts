import { type BacklogState, type QueueBacklog, zeroBacklogCounts } from '../../store.js';
import { readTime, type StoredTime } from '../job-row.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement, NOW } from '../statement.js';

/**
 * Each queue's backlog for the inspector, in one statement that never counts the finished
 * history and reads a bounded number of index entries per queue:
 * - queues with waiting jobs come from a loose index scan of jobs_claim_idx (one probe per
 *   queue), those with dead, skipped or cancelled jobs from one of jobs_unhappy_idx;
 * - each count stops at $1 (a count equal to it means "at least");
 * - the oldest runAt is the first entry of one of the queue's priority levels in
 *   jobs_claim_idx (queue, priority desc, run_at): a probe per level, levels found by another
 *   loose scan, instead of reading the whole backlog;
 * - running rows are few (workers' concurrency) and come from the reaper's partial index;
 *   waiting rows (flows) from jobs_waiting_idx (migration 0009).
 * - pending jobs not yet due, scheduled (never ran) and snoozed (ran before) apart, from
 *   jobs_later_idx (run_at first: the rows due after now), its predicate's pending half;
 * Rows: (queue, state, count) per count, `scheduled` and `snoozed` among them, and
 * (queue, null, null, oldest_run_at) per queue. `$1`: the injected clock's time or null.
 */
export const GET_QUEUE_BACKLOGS = defineStatement(
  'get_queue_backlogs',
  (s) => `
with recursive
waiting_queues(queue) as (
  select min(queue) from ${s.quoted}.jobs where state in ('pending', 'retrying')
  union all
  select (select min(j.queue) from ${s.quoted}.jobs j
    where j.state in ('pending', 'retrying') and j.queue > w.queue)
  from waiting_queues w where w.queue is not null
),
levels(queue, priority) as (
  select w.queue, (select max(j.priority) from ${s.quoted}.jobs j
    where j.state in ('pending', 'retrying') and j.queue = w.queue)
  from waiting_queues w where w.queue is not null
  union all
  select l.queue, (select max(j.priority) from ${s.quoted}.jobs j
    where j.state in ('pending', 'retrying') and j.queue = l.queue and j.priority < l.priority)
  from levels l where l.priority is not null
),
unhappy_queues(state, queue) as (
  select u.state, (select min(j.queue) from ${s.quoted}.jobs j
    where j.state = u.state and j.state in ('dead', 'skipped', 'cancelled'))
  from (values ('dead'), ('skipped'), ('cancelled')) u(state)
  union all
  select u.state, (select min(j.queue) from ${s.quoted}.jobs j
    where j.state = u.state and j.state in ('dead', 'skipped', 'cancelled') and j.queue > u.queue)
  from unhappy_queues u where u.queue is not null
)
select w.queue, x.state,
  (select count(*)::int from (select from ${s.quoted}.jobs j
    where j.state = x.state and j.state in ('pending', 'retrying') and j.queue = w.queue limit $2::int) c) as count,
  null::timestamptz as oldest_run_at
from waiting_queues w cross join (values ('pending'), ('retrying')) x(state)
where w.queue is not null
union all
select l.queue, null, null, min((select min(j.run_at) from ${s.quoted}.jobs j
  where j.state in ('pending', 'retrying') and j.queue = l.queue and j.priority = l.priority))
from levels l where l.priority is not null
group by l.queue
union all
select queue, 'running', least(count(*), $2::int)::int, null
from ${s.quoted}.jobs where state = 'running'
group by queue
union all
select queue, 'waiting', least(count(*), $2::int)::int, null
from ${s.quoted}.jobs where state = 'waiting'
group by queue
union all
select queue, 'sleeping', least(count(*), $2::int)::int, null
from ${s.quoted}.jobs where state = 'sleeping'
group by queue
union all
select u.queue, u.state,
  (select count(*)::int from (select from ${s.quoted}.jobs j
    where j.state = u.state and j.state in ('dead', 'skipped', 'cancelled') and j.queue = u.queue limit $2::int) c),
  null
from unhappy_queues u where u.queue is not null
union all
select w.queue, v.state, v.count, null
from waiting_queues w
cross join lateral (
  select (count(*) filter (where p.attempt = 0))::int as scheduled, (count(*) filter (where p.attempt > 0))::int as snoozed
  from (select j.attempt from ${s.quoted}.jobs j
    where j.state = 'pending' and j.run_at > j.created_at and j.run_at > ${NOW} and j.queue = w.queue limit $2::int) p
) c
cross join lateral (values ('scheduled', c.scheduled), ('snoozed', c.snoozed)) v(state, count)
where w.queue is not null
`,
  // Its estimated cost (the per-queue subqueries, guessed at a full count each) passes
  // jit_above_cost on a large table, and JIT compiling it took 0.45-0.85 s of a read that
  // runs in 26 ms (1,000,000 jobs): the first /api/queues of every fresh inspector.
  { indexScansOnly: true },
);

const DEFAULT_MAX_COUNT = 10_000;

interface BacklogRow {
  queue: string;
  state: BacklogState | 'scheduled' | 'snoozed' | null;
  count: number | null;
  oldest_run_at: StoredTime | null;
}

export async function getQueueBacklogs(ctx: SqlContext, params: { maxCount?: number }): Promise<QueueBacklog[]> {
  const maxCount = Math.max(1, params.maxCount ?? DEFAULT_MAX_COUNT);
  const rows = await ctx.run<BacklogRow>(GET_QUEUE_BACKLOGS, [ctx.now(), maxCount]);
  const byQueue = new Map<string, QueueBacklog>();
  for (const row of rows) {
    let backlog = byQueue.get(row.queue);
    if (!backlog) {
      const counts = zeroBacklogCounts();
      backlog = { queue: row.queue, counts, oldestRunAt: null, later: { scheduled: 0, snoozed: 0 } };
      byQueue.set(row.queue, backlog);
    }
    if (row.state === 'scheduled' || row.state === 'snoozed') backlog.later[row.state] = row.count ?? 0;
    else if (row.state !== null) backlog.counts[row.state] = row.count ?? 0;
    else backlog.oldestRunAt = row.oldest_run_at === null ? null : readTime(row.oldest_run_at, 'run_at');
  }
  // Byte order, as the memory store sorts JavaScript strings.
  return [...byQueue.values()].sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0));
}
