import type { ScheduleState } from '../../store.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement } from '../statement.js';

/** A supervisor's schedules, by primary key: read at start and after a lost compare-and-set. */
const GET_SCHEDULES = defineStatement(
  'get_schedules',
  (s) => `select name, last_tick_at from ${s.quoted}.schedules where name = any($1::text[]) order by name`,
);

export async function getSchedules(ctx: SqlContext, params: { names: readonly string[] }): Promise<ScheduleState[]> {
  if (params.names.length === 0) return [];
  const rows = await ctx.run<{ name: string; last_tick_at: Date }>(GET_SCHEDULES, [[...params.names]]);
  return rows.map((row) => ({ name: row.name, lastTickAt: row.last_tick_at }));
}
