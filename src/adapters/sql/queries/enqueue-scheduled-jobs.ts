import { InvalidOptionError } from '../../../errors.js';
import type { ScheduleAdvance } from '../../store.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement, NOW } from '../statement.js';
import { toInput } from './enqueue-input.js';

/**
 * Schedules advance by compare-and-set, with their ticks' jobs, in one statement.
 * - `moved`: an UPDATE whose WHERE names the last tick the supervisor read. Under READ
 *   COMMITTED a concurrent advance of the same row makes it wait, then re-check the WHERE on
 *   the row as committed: it no longer matches, and this entry does not apply. So each tick
 *   goes to exactly one supervisor, and once it is past no one enqueues it again, whatever
 *   became of its job (unlike a unique key, which frees when the job is done).
 * - `registered`: a first advance (no previous tick) inserts the row; ON CONFLICT DO NOTHING
 *   makes a concurrent second registration apply nothing.
 * - `advance` drops a tick after the database's now: it does not apply, whatever the caller's
 *   estimate of that time was (a tick is never written before its time). The caller reads the
 *   schedule, and the time, again.
 * - A paused schedule (paused_at, migration 0024) advances as any, and enqueues no job.
 * - Jobs are inserted only for the entries that applied, with enqueue's unique-key rule (a
 *   live holder keeps the key; the tick still counts as enqueued) and one NOTIFY per queue
 *   (no history row: a job's creation is read from its row, migration 0032).
 */
const ENQUEUE_SCHEDULED_JOBS = defineStatement(
  'enqueue_scheduled_jobs',
  (s) => `
with advance as (
  select * from jsonb_to_recordset($2::jsonb) as a(i int, name text, previous timestamptz, tick timestamptz)
  where a.tick <= ${NOW}
),
registered as (
  insert into ${s.quoted}.schedules (name, last_tick_at, updated_at)
  select name, tick, ${NOW} from advance where previous is null
  on conflict (name) do nothing
  returning name
),
moved as (
  update ${s.quoted}.schedules s set last_tick_at = a.tick, updated_at = ${NOW}
  from advance a
  where s.name = a.name and a.previous is not null and s.last_tick_at = a.previous
  returning s.name, s.paused_at
),
applied as (
  select a.i, m.paused_at is not null as paused from advance a
  join (select name, null::timestamptz as paused_at from registered union all select name, paused_at from moved) m on m.name = a.name
),
inserted as (
  insert into ${s.quoted}.jobs (queue, kind, payload, priority, run_at, max_attempts, unique_key,
    concurrency_key, created_at, updated_at)
  select x.queue, x.kind, coalesce(x.payload, 'null'), coalesce(x.priority, 0), coalesce(x.run_at, ${NOW}),
    x.max_attempts, x.unique_key, x.concurrency_key, ${NOW}, ${NOW}
  from jsonb_to_recordset($3::jsonb) as x(
    i int, n int, queue text, kind text, payload jsonb, priority int, run_at timestamptz, max_attempts int,
    unique_key text, concurrency_key text)
  where x.i in (select i from applied where not paused)
  order by x.n
  on conflict (queue, unique_key)
    where unique_key is not null and state in ('pending', 'retrying', 'running', 'sleeping')
    do nothing
  returning queue
),
notified as (
  select count(pg_notify('${s.channel}', q.queue)) from (select distinct queue from inserted) q
)
select i from applied cross join notified
`,
);

export async function enqueueScheduledJobs(
  ctx: SqlContext,
  params: { advances: readonly ScheduleAdvance[] },
): Promise<boolean[]> {
  if (params.advances.length === 0) return [];
  const names = new Set(params.advances.map((a) => a.schedule));
  if (names.size < params.advances.length) {
    throw new InvalidOptionError('advances', 'names a schedule twice; advance each at most once per call');
  }
  const advances = params.advances.map((a, i) => ({ i, name: a.schedule, previous: a.previousTickAt, tick: a.tickAt }));
  // `n` keeps the input order, in which the ids are drawn.
  const jobs = params.advances.flatMap((a, i) => a.jobs.map((job) => ({ ...toInput(i, job), n: 0 })));
  jobs.forEach((job, n) => (job.n = n));
  const rows = await ctx.run<{ i: number }>(ENQUEUE_SCHEDULED_JOBS, [ctx.now(), JSON.stringify(advances), JSON.stringify(jobs)]);
  const applied = new Set(rows.map((row) => row.i));
  return params.advances.map((_, i) => applied.has(i));
}
