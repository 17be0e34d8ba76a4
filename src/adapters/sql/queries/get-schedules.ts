import type { ScheduleState, ScheduleStates } from '../../store.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement, NOW } from '../statement.js';

/**
 * A supervisor's schedules, by primary key, with the database's time: read at start, after a
 * lost compare-and-set, and now and then to keep the supervisor's tick clock on the
 * database's. The left join gives one row (name null) when no schedule matches.
 */
const GET_SCHEDULES = defineStatement(
  'get_schedules',
  (s) => `
select ${NOW} as now, s.name, s.last_tick_at, s.paused_at
from (select 1) one
left join ${s.quoted}.schedules s on s.name = any($2::text[])
order by s.name
`,
);

export async function getSchedules(ctx: SqlContext, params: { names: readonly string[] }): Promise<ScheduleStates> {
  const rows = await ctx.run<{ now: Date; name: string | null; last_tick_at: Date | null; paused_at: Date | null }>(GET_SCHEDULES, [
    ctx.now(),
    [...params.names],
  ]);
  const schedules = rows.flatMap((row) => (row.name === null ? [] : [{ name: row.name, lastTickAt: row.last_tick_at!, pausedAt: row.paused_at }]));
  return { now: rows[0]!.now, schedules };
}

/** $1 now, $2 name, $3 true to pause, false to resume. No row: no such schedule. */
const SET_SCHEDULE_PAUSED = defineStatement(
  'set_schedule_paused',
  (s) => `
update ${s.quoted}.schedules set paused_at = case when $3::boolean then coalesce(paused_at, ${NOW}) end, updated_at = ${NOW}
where name = $2
returning name, last_tick_at, paused_at
`,
);

export async function setSchedulePaused(ctx: SqlContext, name: string, paused: boolean): Promise<ScheduleState | null> {
  const [row] = await ctx.run<{ name: string; last_tick_at: Date; paused_at: Date | null }>(SET_SCHEDULE_PAUSED, [ctx.now(), name, paused]);
  return row ? { name: row.name, lastTickAt: row.last_tick_at, pausedAt: row.paused_at } : null;
}
