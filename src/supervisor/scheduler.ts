import FlatQueue from 'flatqueue';
import type { JobStore, ScheduleAdvance } from '../adapters/store.js';
import type { Schedule } from '../schedule.js';
import { type Clock, monotonicClock } from '../types.js';

/** Longest wait between checks, so that another supervisor's progress and a changed clock
 *  are seen within a minute even for a yearly schedule. */
const MAX_CHECK_INTERVAL_MS = 60_000;
/** The store's time is read again at least this often, so that the tick clock follows the
 *  store's even if the two clocks drift apart. */
const RESYNC_MS = 60_000;
/** Ticks enqueued per schedule and check at most; the rest go in the next check, at once. */
const MAX_TICKS_PER_CHECK = 100;
/** Schedules advanced per check at most: the rest go in the next check, after the event loop
 *  had a turn (10,000 due at once stalled it for up to 715 ms in one check). */
const MAX_SCHEDULES_PER_CHECK = 1_000;

/** One schedule as this supervisor last knew it from the store. */
interface Entry {
  index: number;
  schedule: Schedule;
  /** Its last enqueued tick as the store answered; undefined: read it from the store. */
  last: Date | undefined;
  /** A tick missed while no supervisor ran, enqueued before `next` (catchUp false). */
  carry: Date | undefined;
  /** Its first tick after `last` (and after the downtime it skips). */
  next: number;
  /** Its place in the heap: `carry`, else `next`. */
  due: number;
}

/**
 * The supervisor's schedules: enqueues each due tick's job once across every supervisor.
 *
 * Time is the store's: each read of the schedules also answers the store's "now", and the
 * scheduler keeps the offset from a monotonic clock (the round trip's midpoint), so a worker
 * whose wall clock is off, or steps, neither enqueues early or late nor writes its own time.
 *
 * Each tick due while this supervisor runs is enqueued, however late a check runs (a busy
 * event loop, a store that answered slowly or not at all); `catchUp: false` skips only the
 * ticks of the time before the supervisor started, when no one may have run the schedule.
 *
 * Cost per check is that of the due schedules only: next-fire times are kept in a heap, each
 * timetable's next tick is computed once per check (schedules with one expression share it),
 * and every due tick is enqueued in one statement.
 *
 * It advances each schedule in the store by compare-and-set from the last tick it knows: a
 * supervisor whose memory is stale (another one enqueued the tick) applies nothing, forgets,
 * and reads the store again. A schedule the store has never seen is registered at the time
 * of its first check: its earlier ticks are not due.
 */
export class Scheduler {
  readonly #entries: Entry[];
  readonly #heap = new FlatQueue<number>();
  /** Indexes of the entries to read from the store. */
  readonly #unread = new Set<number>();
  /** The store's time less the monotonic clock's, from the last read. */
  #offset = 0;
  /** Half the last read's round trip: how far the store's time may be behind `#now()`. */
  #uncertainty = 0;
  #syncedAt: number | undefined;
  /** The store's time at the first read: ticks before it fell while no one may have run. */
  #startedAt: Date | undefined;
  /** Per timetable, the last next-tick question and its answer. */
  readonly #nextMemo = new Map<string, { after: number; next: Date }>();

  constructor(
    private readonly store: JobStore,
    schedules: readonly Schedule[],
    /** Measures durations: the clock that drives the scheduler's timer. */
    private readonly elapsed: Clock = monotonicClock,
  ) {
    this.#entries = schedules.map((schedule, i) => {
      this.#unread.add(i);
      return { index: i, schedule, last: undefined, carry: undefined, next: Infinity, due: Infinity };
    });
  }

  /** Enqueues every due tick; resolves with the ms until the next check. */
  async check(): Promise<number> {
    const advances: ScheduleAdvance[] = [];
    const advanced: Array<{ entry: Entry; next: number }> = [];
    if (this.#syncedAt === undefined || this.#unread.size > 0 || this.elapsed.now() - this.#syncedAt >= RESYNC_MS) {
      const now = await this.#read();
      for (const i of this.#unread) {
        // Not in the store: registered now, with no job.
        this.#unread.delete(i);
        advances.push({ schedule: this.#entries[i]!.schedule.name, previousTickAt: null, tickAt: now, jobs: [] });
        advanced.push({ entry: this.#entries[i]!, next: NaN }); // NaN: its next tick, once registered
      }
    }
    // Due by the store's clock for certain: its time is at least this, so no tick is early.
    // The store checks it too: a tick after its now does not apply (answered false, as a lost
    // compare-and-set), and the entry is read again, with the store's time, next check.
    const now = new Date(this.#now().getTime() - this.#uncertainty);
    let behind = false;
    while (this.#heap.length > 0 && this.#heap.peekValue()! <= now.getTime()) {
      if (advanced.length >= MAX_SCHEDULES_PER_CHECK) {
        behind = true;
        break;
      }
      const due = this.#heap.peekValue()!;
      const entry = this.#entries[this.#heap.pop()!]!;
      // Forgotten since it was placed (it is read from the store again).
      if (entry.last === undefined || entry.due !== due) continue;
      const ticks = entry.carry ? [entry.carry] : [];
      let next = entry.next;
      while (next <= now.getTime() && ticks.length < MAX_TICKS_PER_CHECK) {
        ticks.push(new Date(next));
        next = this.#nextTick(entry.schedule, next);
      }
      behind ||= next <= now.getTime();
      const { schedule } = entry;
      advances.push({ schedule: schedule.name, previousTickAt: entry.last, tickAt: ticks.at(-1)!, jobs: ticks.map((t) => schedule.jobFor(t)) });
      advanced.push({ entry, next });
    }
    if (advances.length > 0) {
      let applied: boolean[];
      try {
        applied = await this.store.enqueueScheduledJobs({ advances });
      } catch (error) {
        // Applied or not: the store knows. Read them again next check.
        for (const { entry } of advanced) this.#forget(entry);
        throw error;
      }
      advanced.forEach(({ entry, next }, i) => {
        if (!applied[i]) return this.#forget(entry);
        const tickAt = advances[i]!.tickAt;
        entry.last = tickAt;
        entry.carry = undefined;
        this.#place(entry, Number.isNaN(next) ? this.#nextTick(entry.schedule, tickAt.getTime()) : next);
      });
    }
    if (behind || this.#unread.size > 0) return 0;
    // From the time after the check, so that its own time is not slept on top.
    const wait = (this.#heap.peekValue() ?? Infinity) - this.#now().getTime() + this.#uncertainty;
    return Math.max(0, Math.min(MAX_CHECK_INTERVAL_MS, Math.ceil(wait)));
  }

  /** Reads the unread schedules and the store's time; resolves with that time. */
  async #read(): Promise<Date> {
    const unread = [...this.#unread];
    const before = this.elapsed.now();
    const { now, schedules } = await this.store.getSchedules({ names: unread.map((i) => this.#entries[i]!.schedule.name) });
    const after = this.elapsed.now();
    this.#offset = now.getTime() - (before + after) / 2;
    this.#uncertainty = Math.ceil((after - before) / 2);
    this.#syncedAt = after;
    this.#startedAt ??= now;
    const byName = new Map(schedules.map((s) => [s.name, s.lastTickAt]));
    for (const i of unread) {
      const last = byName.get(this.#entries[i]!.schedule.name);
      if (last === undefined) continue;
      this.#unread.delete(i);
      this.#learn(this.#entries[i]!, last);
    }
    return now;
  }

  /** Takes a schedule's last tick from the store. */
  #learn(entry: Entry, last: Date): void {
    const { schedule } = entry;
    const startedAt = this.#startedAt!;
    entry.last = last;
    entry.carry = undefined;
    if (!schedule.catchUp && last < startedAt) {
      // Of the ticks that fell before this supervisor started, only the latest.
      entry.carry = schedule.latestTick(last, startedAt);
      this.#place(entry, this.#nextTick(schedule, startedAt.getTime()));
    } else {
      this.#place(entry, this.#nextTick(schedule, last.getTime()));
    }
  }

  #place(entry: Entry, next: number): void {
    entry.next = next;
    entry.due = entry.carry?.getTime() ?? next;
    this.#heap.push(entry.index, entry.due);
  }

  #forget(entry: Entry): void {
    entry.last = undefined;
    entry.carry = undefined;
    this.#unread.add(entry.index);
  }

  /** The store's time now, by the monotonic clock and the last read's offset. */
  #now(): Date {
    return new Date(Math.floor(this.elapsed.now() + this.#offset));
  }

  /** The first tick after `after` (ms): computed once for every schedule of the timetable. */
  #nextTick(schedule: Schedule, after: number): number {
    const memo = this.#nextMemo.get(schedule.timetable);
    if (memo?.after === after) return memo.next.getTime();
    const next = schedule.nextTick(new Date(after));
    this.#nextMemo.set(schedule.timetable, { after, next });
    return next.getTime();
  }
}
