/**
 * The schedules page (GET /api/schedules) and its actions (POST /api/schedules/:name/
 * {pause,resume,run} with the token). The inspector knows a schedule from its definition
 * (startInspector's `schedules`, the CLI's --worker-module): its timetable, queue and kind; the
 * store knows its last tick and whether it is paused (getSchedules, pauseSchedule).
 */
import type { JobStore } from '../adapters/store.js';
import type { Schedule } from '../schedule.js';
import type { JobState } from '../types.js';
import { HttpError } from './http.js';

export const SCHEDULE_ACTIONS = ['pause', 'resume', 'run'] as const;
export type ScheduleAction = (typeof SCHEDULE_ACTIONS)[number];

export interface ScheduleView {
  name: string;
  /** The cron expression and its time zone. */
  timetable: string;
  queue: string;
  kind: string;
  /** False until a supervisor running it has registered it in the store. */
  registered: boolean;
  lastTickAt: Date | null;
  /** The first tick after the later of its last tick and now, by the store's clock. */
  nextTickAt: Date;
  pausedAt: Date | null;
}

export async function listSchedules(store: JobStore, schedules: readonly Schedule[]): Promise<{ now: Date; schedules: ScheduleView[] }> {
  const { now, schedules: states } = await store.getSchedules({ names: schedules.map((s) => s.name) });
  const byName = new Map(states.map((state) => [state.name, state]));
  return {
    now,
    schedules: schedules.map((schedule) => {
      const state = byName.get(schedule.name);
      const { queue, kind } = schedule.jobFor(now);
      const from = state && state.lastTickAt > now ? state.lastTickAt : now;
      return {
        name: schedule.name,
        timetable: schedule.timetable,
        queue,
        kind,
        registered: state !== undefined,
        lastTickAt: state?.lastTickAt ?? null,
        nextTickAt: schedule.nextTick(from),
        pausedAt: state?.pausedAt ?? null,
      };
    }),
  };
}

export async function runScheduleAction(
  store: JobStore,
  schedules: readonly Schedule[],
  name: string,
  action: ScheduleAction,
): Promise<{ message: string; jobId?: string }> {
  const schedule = schedules.find((s) => s.name === name);
  if (!schedule) throw new HttpError(404, `no schedule named "${name}" among this inspector's schedules`);
  if (action === 'run') {
    // Its job as a tick of now would make it, due at once by the store's clock; the schedule
    // itself does not move.
    const { runAt: _tick, ...job } = schedule.jobFor(new Date());
    const [result] = await store.enqueueJobs({ jobs: [job] });
    if (!result) throw new Error('the store answered no result for the enqueue');
    const { id, state } = result.job;
    return result.created
      ? { message: `schedule ${name}: job ${id} enqueued now (${job.queue}/${job.kind})`, jobId: id }
      : { message: `schedule ${name}: job ${id} (${state as JobState}) holds its unique key "${job.uniqueKey}": nothing enqueued`, jobId: id };
  }
  const state = action === 'pause' ? await store.pauseSchedule({ name }) : await store.resumeSchedule({ name });
  if (!state) throw new HttpError(409, `schedule ${name} is not in the store yet: a supervisor that runs it registers it at its start`);
  return {
    message: action === 'pause' ? `schedule ${name} is paused: its ticks pass with no job until it is resumed` : `schedule ${name} is resumed from its next tick`,
  };
}
