import type { QueueInfo } from '../../store.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement, NOW } from '../statement.js';

interface QueueRow {
  name: string;
  created_at: Date;
  paused_at: Date | null;
}

const toQueueInfo = (row: QueueRow): QueueInfo => ({ name: row.name, createdAt: row.created_at, pausedAt: row.paused_at });

/** Paused from now, unless it already was: the first pause's time stays. */
const PAUSE_QUEUE = defineStatement(
  'pause_queue',
  (s) => `
insert into ${s.quoted}.queues as q (name, created_at, paused_at) values ($2, ${NOW}, ${NOW})
on conflict (name) do update set paused_at = coalesce(q.paused_at, excluded.paused_at)
returning q.name, q.created_at, q.paused_at
`,
);

/** Claimable again; the queue's workers are woken as by an enqueue. */
const RESUME_QUEUE = defineStatement(
  'resume_queue',
  (s) => `
with resumed as (
  insert into ${s.quoted}.queues as q (name, created_at) values ($2, ${NOW})
  on conflict (name) do update set paused_at = null
  returning q.name, q.created_at, q.paused_at
)
select r.* from resumed r cross join lateral (select pg_notify('${s.channel}', r.name)) notified
`,
);

const LIST_QUEUES = defineStatement('list_queues', (s) => `select name, created_at, paused_at from ${s.quoted}.queues order by name collate "C"`);

export async function pauseQueue(ctx: SqlContext, params: { queue: string }): Promise<QueueInfo> {
  const [row] = await ctx.run<QueueRow>(PAUSE_QUEUE, [ctx.now(), params.queue]);
  if (!row) throw new Error('pause_queue returned no row');
  return toQueueInfo(row);
}

export async function resumeQueue(ctx: SqlContext, params: { queue: string }): Promise<QueueInfo> {
  const [row] = await ctx.run<QueueRow>(RESUME_QUEUE, [ctx.now(), params.queue]);
  if (!row) throw new Error('resume_queue returned no row');
  return toQueueInfo(row);
}

export async function listQueues(ctx: SqlContext): Promise<QueueInfo[]> {
  return (await ctx.run<QueueRow>(LIST_QUEUES, [])).map(toQueueInfo);
}
