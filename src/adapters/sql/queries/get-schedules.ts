import type { ScheduleStates } from '../../store.js';
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
select ${NOW} as now, s.name, s.last_tick_at
from (select 1) one
left join ${s.quoted}.schedules s on s.name = any($2::text[])
order by s.name
`,
);

export async function getSchedules(ctx: SqlContext, params: { names: readonly string[] }): Promise<ScheduleStates> {
  const rows = await ctx.run<{ now: Date; name: string | null; last_tick_at: Date | null }>(GET_SCHEDULES, [
    ctx.now(),
    [...params.names],
  ]);
  const schedules = rows.flatMap((row) => (row.name === null ? [] : [{ name: row.name, lastTickAt: row.last_tick_at! }]));
  return { now: rows[0]!.now, schedules };
}
