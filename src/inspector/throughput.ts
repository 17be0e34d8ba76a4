/**
 * Throughput over time per queue, for the queues page and GET /api/throughput: jobs completed,
 * attempts failed (retried + dead) and the p50/p95 run time of the attempts that ended, per
 * bucket over a window. Two windows: the last hour in minutes, the last day in hours. Every
 * queue the store knows is listed, an idle one with empty series.
 *
 * Buckets are aligned on the clock (whole minutes, whole hours) and the last one is the
 * current, unfinished one. The last two are open (the one before the current one too: commits
 * land late) and read again on every refresh; the others are closed and do not change. A closed
 * bucket comes from, first found first:
 *   - this inspector's memory (read before);
 *   - the throughput summary (JobStore.getThroughputSummary; migration 0025), where the
 *     inspector that read it first saved it;
 *   - the history (JobStore.getThroughput), the newest missing buckets first; then it is saved
 *     in the summary (saveThroughputSummary, which also prunes it) for every later inspector.
 * A fresh inspector on a store whose summary is filled therefore reads saved rows and the
 * last two minutes of history. What still walks the history: the very first read on a store
 * (or the first after no inspector ran for a while: the buckets nobody saved meanwhile), at
 * most MAX_EVENTS rows per read; what one read does not reach, the next one does.
 *
 * The inspector saves what it read, rather than workers keeping the summary up to date: a
 * worker writes nothing for it (no write per job, no periodic statement in every worker of a
 * fleet), and the cost falls on the stores that have an inspector open. On a read-only store
 * (a replica) the save fails, is logged, and fresh inspectors read the history as before.
 *
 * Hours are sums of minutes. The two open hours are made from their minutes (closed ones from
 * memory, the summary or the history, the last two from the history), and so is the hour that
 * closes, once, before it is saved. An hour's run time percentiles are read from its minutes'
 * run times binned (run-time-bins.ts): a run time that happened, at most 9.1 % above the exact
 * nearest-rank percentile (exact under 16 ms). An hour read from the history is binned alike,
 * so the day's numbers are the same wherever they came from. A minute's percentiles are exact.
 */
import { mergeRunTimeBins, runTimePercentile } from '../adapters/run-time-bins.js';
import type { JobStore, QueueActivity, SavedThroughputBucket } from '../adapters/store.js';
import type { Logger } from '../types.js';
import { HttpError } from './http.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export const THROUGHPUT_WINDOWS = {
  '1h': { bucketMs: MINUTE, buckets: 60 },
  '24h': { bucketMs: HOUR, buckets: 24 },
} as const;
export type ThroughputWindow = keyof typeof THROUGHPUT_WINDOWS;

/** History rows one read looks at, at most (over all its reads of the history); past it the
 *  numbers are lower bounds. */
const MAX_EVENTS = 100_000;

export interface QueueThroughput {
  queue: string;
  /** One value per bucket, oldest first. */
  completed: number[];
  /** Attempts that failed: retried + dead. */
  failed: number[];
  retried: number[];
  dead: number[];
  /** Attempts that ended (any outcome), and their run time percentiles in ms (null: none). */
  attempts: number[];
  p50Ms: Array<number | null>;
  p95Ms: Array<number | null>;
}

export interface ThroughputView {
  window: ThroughputWindow;
  now: Date;
  bucketMs: number;
  /** Start of each bucket, oldest first; the last is the current one. */
  buckets: Date[];
  /** A read hit its limit: the numbers of some buckets are lower bounds (the next read goes
   *  on from where this one stopped). */
  partial: boolean;
  queues: QueueThroughput[];
}

export function parseThroughputWindow(value: string | null): ThroughputWindow {
  if (value === null || value === '') return '1h';
  if (Object.hasOwn(THROUGHPUT_WINDOWS, value)) return value as ThroughputWindow;
  throw new HttpError(400, `window: must be one of ${Object.keys(THROUGHPUT_WINDOWS).join(', ')}, got ${JSON.stringify(value.slice(0, 40))}`);
}

/** Each queue's numbers in one bucket, by queue name. */
type Bucket = QueueActivity[];

/** History rows a read may still look at, and whether it fell short of a bucket. */
interface Budget {
  left: number;
  partial: boolean;
}

/** How long saved buckets are kept (older ones are pruned by the next save): the minutes that
 *  the day's open hours and the hour closing last are made of, and the day's hours, each with
 *  two hours of slack. */
const KEEP_MS: Readonly<Record<number, number>> = { [MINUTE]: 5 * HOUR, [HOUR]: 26 * HOUR };

export class ThroughputStats {
  readonly #store: JobStore;
  readonly #cacheMs: number;
  readonly #now: () => number;
  readonly #logger: Logger | undefined;
  /** Closed buckets, by start: they do not change. */
  readonly #minutes = new Map<number, Bucket>();
  readonly #hours = new Map<number, Bucket>();
  readonly #cached = new Map<ThroughputWindow, { at: number; view: Promise<ThroughputView> }>();
  #saveFailed = false;

  constructor(store: JobStore, cacheMs: number, now: () => number = Date.now, logger?: Logger) {
    this.#store = store;
    this.#cacheMs = cacheMs;
    this.#now = now;
    this.#logger = logger;
  }

  /** The history moved: the next read reads the store again. */
  invalidate(): void {
    this.#cached.clear();
  }

  read(window: ThroughputWindow): Promise<ThroughputView> {
    const now = this.#now();
    const cached = this.#cached.get(window);
    if (cached && now - cached.at < this.#cacheMs) return cached.view;
    const view = this.#read(window, now);
    this.#cached.set(window, { at: now, view });
    view.catch(() => {
      if (this.#cached.get(window)?.view === view) this.#cached.delete(window);
    });
    return view;
  }

  async #read(window: ThroughputWindow, now: number): Promise<ThroughputView> {
    const { bucketMs, buckets: count } = THROUGHPUT_WINDOWS[window];
    const current = Math.floor(now / bucketMs) * bucketMs;
    const starts = Array.from({ length: count }, (_, i) => current - (count - 1 - i) * bucketMs);
    this.#forget(now);
    const budget: Budget = { left: MAX_EVENTS, partial: false };
    const [shown, known] = await Promise.all([
      window === '1h' ? this.#minuteSpan(starts[0]!, now, budget) : this.#hourSpan(starts[0]!, now, budget),
      this.#store.listQueues(),
    ]);

    // Every queue the store knows, idle ones with empty series: an idle queue shows as idle.
    const byQueue = new Map<string, QueueThroughput>(known.map((q) => [q.name, emptySeries(q.name, count)]));
    starts.forEach((start, i) => {
      for (const b of shown.get(start) ?? []) {
        let q = byQueue.get(b.queue);
        if (!q) byQueue.set(b.queue, (q = emptySeries(b.queue, count)));
        q.completed[i] = b.completed;
        q.retried[i] = b.retried;
        q.dead[i] = b.dead;
        q.failed[i] = b.retried + b.dead;
        q.attempts[i] = b.attempts;
        q.p50Ms[i] = b.p50Ms;
        q.p95Ms[i] = b.p95Ms;
      }
    });
    return {
      window,
      now: new Date(now),
      bucketMs,
      buckets: starts.map((start) => new Date(start)),
      partial: budget.partial,
      queues: [...byQueue.values()].sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0)),
    };
  }

  /** The minutes from `from` to the current one: the closed ones (from memory, the summary or
   *  the history, as far as the budget goes) and the two open ones from the history. */
  async #minuteSpan(from: number, now: number, budget: Budget): Promise<Map<number, Bucket>> {
    const open = Math.floor(now / MINUTE) * MINUTE - MINUTE;
    // The open minutes first: they take from the budget before any closed one.
    const [recent] = await Promise.all([this.#history(open, undefined, MINUTE, budget), this.#loadSaved(this.#minutes, MINUTE, from, open)]);
    const shown = await this.#fill(this.#minutes, MINUTE, from, open, budget, now);
    for (let start = from; start < open; start += MINUTE) {
      const bucket = this.#minutes.get(start);
      if (bucket) shown.set(start, bucket);
    }
    for (const [start, bucket] of recent.buckets) shown.set(start, bucket);
    return shown;
  }

  /** The hours from `from` to the current one: the open ones, and the one that closed last
   *  unless known, made from their minutes; the older ones from memory, the summary or the
   *  history. */
  async #hourSpan(from: number, now: number, budget: Budget): Promise<Map<number, Bucket>> {
    const open = Math.floor(now / HOUR) * HOUR - HOUR;
    await this.#loadSaved(this.#hours, HOUR, from, open);
    const madeFrom = this.#hours.has(open - HOUR) ? open : open - HOUR;
    const minutes = await this.#minuteSpan(madeFrom, now, budget);
    const shown = new Map<number, Bucket>();
    const closing: SavedThroughputBucket[] = [];
    for (let hour = madeFrom; hour <= open + HOUR; hour += HOUR) {
      const starts = Array.from({ length: 60 }, (_, i) => hour + i * MINUTE);
      const bucket = sumBuckets(starts.map((start) => minutes.get(start) ?? []));
      shown.set(hour, bucket);
      // An hour that closed, all its minutes known: it is kept and saved as they are.
      if (hour < open && starts.every((start) => this.#minutes.has(start))) {
        this.#hours.set(hour, bucket);
        closing.push({ start: new Date(hour), queues: bucket });
      }
    }
    if (closing.length > 0) await this.#save(HOUR, closing, now);
    const older = await this.#fill(this.#hours, HOUR, from, madeFrom, budget, now);
    for (let start = from; start < madeFrom; start += HOUR) {
      const bucket = this.#hours.get(start) ?? older.get(start);
      if (bucket) shown.set(start, bucket);
    }
    return shown;
  }

  /** Puts the saved buckets of [from, to) that `known` lacks into it: one read of the summary. */
  async #loadSaved(known: Map<number, Bucket>, bucketMs: number, from: number, to: number): Promise<void> {
    const missing = spanStarts(from, to, bucketMs).filter((start) => !known.has(start));
    if (missing.length === 0) return;
    const saved = await this.#store.getThroughputSummary({
      bucketMs,
      since: new Date(missing[0]!),
      until: new Date(missing.at(-1)! + bucketMs),
    });
    for (const { start, queues } of saved) known.set(start.getTime(), queues);
  }

  /**
   * Reads from the history the closed buckets of [from, to) that `known` lacks, newest first:
   * one bucket, then runs of 2, 4, 8 … (a run never spans a known bucket), each within what is
   * left of the budget. A run read whole is kept and saved; one that hit the budget is given
   * back as lower bounds (not kept: the next read tries again), and the reading stops there.
   */
  async #fill(known: Map<number, Bucket>, bucketMs: number, from: number, to: number, budget: Budget, now: number): Promise<Map<number, Bucket>> {
    const missing = spanStarts(from, to, bucketMs).filter((start) => !known.has(start));
    const lowerBounds = new Map<number, Bucket>();
    const saved: SavedThroughputBucket[] = [];
    let end = missing.length;
    for (let size = 1; end > 0 && budget.left > 0; size *= 2) {
      let begin = end - 1;
      while (begin > 0 && end - begin < size && missing[begin - 1] === missing[begin]! - bucketMs) begin--;
      const run = missing.slice(begin, end);
      const read = await this.#history(run[0]!, run.at(-1)! + bucketMs, bucketMs, budget);
      for (const start of run) {
        const bucket = read.buckets.get(start) ?? [];
        if (!read.complete) lowerBounds.set(start, bucket);
        else {
          known.set(start, bucket);
          saved.push({ start: new Date(start), queues: bucket });
        }
      }
      if (!read.complete) break;
      end = begin;
    }
    if (end > 0) budget.partial = true;
    if (saved.length > 0) await this.#save(bucketMs, saved, now);
    return lowerBounds;
  }

  /** Buckets of [since, until) from the history, within what is left of the budget; whole
   *  (`complete`) unless the read hit it. Hours' percentiles are read from their bins, as
   *  when they are made from minutes. */
  async #history(since: number, until: number | undefined, bucketMs: number, budget: Budget): Promise<{ buckets: Map<number, Bucket>; complete: boolean }> {
    const buckets = new Map<number, Bucket>();
    const limit = budget.left;
    if (limit <= 0) {
      budget.partial = true;
      return { buckets, complete: false };
    }
    const read = await this.#store.getThroughput({
      since: new Date(since),
      until: until === undefined ? undefined : new Date(until),
      bucketMs,
      maxEvents: limit,
    });
    const events = read.reduce((sum, b) => sum + b.events, 0);
    budget.left -= events;
    const complete = events < limit;
    if (!complete) budget.partial = true;
    for (const { bucket, events: _, ...activity } of read) {
      const start = since + bucket * bucketMs;
      let queues = buckets.get(start);
      if (!queues) buckets.set(start, (queues = []));
      queues.push(bucketMs === MINUTE ? activity : withBinnedPercentiles(activity));
    }
    return { buckets, complete };
  }

  async #save(bucketMs: number, buckets: SavedThroughputBucket[], now: number): Promise<void> {
    try {
      await this.#store.saveThroughputSummary({ bucketMs, buckets, pruneBefore: new Date(now - KEEP_MS[bucketMs]!) });
    } catch (error) {
      // The view is right without it: only later inspectors lose, reading the history again.
      if (!this.#saveFailed) this.#logger?.warn({ err: error }, 'inspector: throughput summary not saved (a read-only store?); fresh inspectors read the history');
      this.#saveFailed = true;
    }
  }

  /** Drops from memory what no window needs any more: minutes before the hour that closed
   *  last, hours before the day's first. */
  #forget(now: number): void {
    const hour = Math.floor(now / HOUR) * HOUR;
    for (const start of this.#minutes.keys()) if (start < hour - 2 * HOUR) this.#minutes.delete(start);
    for (const start of this.#hours.keys()) if (start < hour - 23 * HOUR) this.#hours.delete(start);
  }
}

/** The starts of the buckets of [from, to), oldest first. */
function spanStarts(from: number, to: number, bucketMs: number): number[] {
  const starts: number[] = [];
  for (let start = from; start < to; start += bucketMs) starts.push(start);
  return starts;
}

/** Buckets added together, per queue: counts summed, run time bins merged, percentiles read
 *  from the bins. */
function sumBuckets(parts: readonly Bucket[]): Bucket {
  const byQueue = new Map<string, QueueActivity>();
  for (const part of parts) {
    for (const a of part) {
      const sum = byQueue.get(a.queue);
      if (!sum) byQueue.set(a.queue, { ...a });
      else {
        sum.completed += a.completed;
        sum.retried += a.retried;
        sum.dead += a.dead;
        sum.attempts += a.attempts;
        sum.runTimes = mergeRunTimeBins(sum.runTimes, a.runTimes);
      }
    }
  }
  return [...byQueue.values()].sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0)).map(withBinnedPercentiles);
}

/** An hour's numbers: its percentiles read from its run time bins. */
function withBinnedPercentiles(activity: QueueActivity): QueueActivity {
  return { ...activity, p50Ms: runTimePercentile(activity.runTimes, 0.5), p95Ms: runTimePercentile(activity.runTimes, 0.95) };
}

function emptySeries(queue: string, count: number): QueueThroughput {
  const zeros = () => Array.from({ length: count }, () => 0);
  const nulls = () => Array.from({ length: count }, (): number | null => null);
  return { queue, completed: zeros(), failed: zeros(), retried: zeros(), dead: zeros(), attempts: zeros(), p50Ms: nulls(), p95Ms: nulls() };
}
