import type { JobStore, ScheduleAdvance } from '../adapters/store.js';
import type { Schedule } from '../schedule.js';
import type { Clock } from '../types.js';

/** Longest wait between checks, so that another supervisor's progress and a changed clock
 *  are seen within a minute even for a yearly schedule. */
const MAX_CHECK_INTERVAL_MS = 60_000;
/** Missed ticks enqueued per schedule and check when catching up; the rest go next check. */
const MAX_TICKS_PER_CHECK = 100;

/**
 * The supervisor's schedules: enqueues each due tick's job once across every supervisor.
 * It remembers each schedule's last tick as the store last answered, and advances it in the
 * store by compare-and-set from that value: a supervisor whose memory is stale (another one
 * enqueued the tick) applies nothing, forgets, and reads the store again next check.
 * A schedule the store has never seen is registered at the time of its first check: its
 * earlier ticks are not due.
 */
export class Scheduler {
  readonly #last = new Map<string, Date>();

  constructor(
    private readonly store: JobStore,
    private readonly schedules: readonly Schedule[],
    private readonly clock: Clock,
  ) {}

  /** Enqueues every due tick; resolves with the ms until the next check. */
  async check(): Promise<number> {
    const now = new Date(this.clock.now());
    const unknown = this.schedules.filter((s) => !this.#last.has(s.name)).map((s) => s.name);
    if (unknown.length > 0) {
      for (const state of await this.store.getSchedules({ names: unknown })) this.#last.set(state.name, state.lastTickAt);
    }
    const advances: ScheduleAdvance[] = [];
    let behind = false;
    for (const schedule of this.schedules) {
      const last = this.#last.get(schedule.name);
      if (last === undefined) {
        advances.push({ schedule: schedule.name, previousTickAt: null, tickAt: now, jobs: [] });
        continue;
      }
      const ticks = schedule.catchUp
        ? schedule.ticksBetween(last, now, MAX_TICKS_PER_CHECK)
        : [schedule.latestTick(last, now)].filter((tick) => tick !== undefined);
      if (ticks.length === 0) continue;
      behind ||= ticks.length === MAX_TICKS_PER_CHECK;
      advances.push({ schedule: schedule.name, previousTickAt: last, tickAt: ticks.at(-1)!, jobs: ticks.map((t) => schedule.jobFor(t)) });
    }
    if (advances.length > 0) {
      const applied = await this.store.enqueueScheduledJobs({ advances });
      advances.forEach((a, i) => (applied[i] ? this.#last.set(a.schedule, a.tickAt) : this.#last.delete(a.schedule)));
    }
    if (behind) return 1;
    const next = Math.min(...this.schedules.map((s) => s.nextTick(now).getTime()));
    return Math.max(1, Math.min(MAX_CHECK_INTERVAL_MS, next - now.getTime()));
  }
}
