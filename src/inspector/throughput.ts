/**
 * Throughput over time per queue, for the queues page and GET /api/throughput: jobs completed,
 * attempts failed (retried + dead) and the p50/p95 run time of the attempts that ended, per
 * bucket over a window. Two windows: the last hour in minutes, the last day in hours.
 *
 * Read from the history (JobStore.getThroughput). Buckets are aligned on the clock (whole
 * minutes, whole hours) and the last one is the current, unfinished one. A bucket, once over,
 * does not change, so each refresh reads only the current bucket and the one before it (late
 * commits); older buckets were read by earlier refreshes and kept. The first read covers the
 * whole window: on Postgres, a day of history at 100,000 attempts is about 0.75 s. Every queue
 * the store knows is listed, an idle one with empty series.
 */
import type { JobStore, ThroughputBucket } from '../adapters/store.js';
import { HttpError } from './http.js';

export const THROUGHPUT_WINDOWS = {
  '1h': { bucketMs: 60_000, buckets: 60 },
  '24h': { bucketMs: 3_600_000, buckets: 24 },
} as const;
export type ThroughputWindow = keyof typeof THROUGHPUT_WINDOWS;

/** History rows one read looks at, at most; past it the numbers are lower bounds. */
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
  /** A read hit its limit: the numbers of some buckets are lower bounds. */
  partial: boolean;
  queues: QueueThroughput[];
}

export function parseThroughputWindow(value: string | null): ThroughputWindow {
  if (value === null || value === '') return '1h';
  if (Object.hasOwn(THROUGHPUT_WINDOWS, value)) return value as ThroughputWindow;
  throw new HttpError(400, `window: must be one of ${Object.keys(THROUGHPUT_WINDOWS).join(', ')}, got ${JSON.stringify(value.slice(0, 40))}`);
}

/** One window's buckets, kept between reads. */
class WindowCache {
  /** Bucket start (ms) → what each queue did in it. */
  readonly buckets = new Map<number, ThroughputBucket[]>();
  readonly partial = new Set<number>();
}

export class ThroughputStats {
  readonly #store: JobStore;
  readonly #cacheMs: number;
  readonly #now: () => number;
  readonly #windows = new Map<ThroughputWindow, WindowCache>();
  readonly #cached = new Map<ThroughputWindow, { at: number; view: Promise<ThroughputView> }>();

  constructor(store: JobStore, cacheMs: number, now: () => number = Date.now) {
    this.#store = store;
    this.#cacheMs = cacheMs;
    this.#now = now;
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
    let cache = this.#windows.get(window);
    if (!cache) this.#windows.set(window, (cache = new WindowCache()));
    const current = Math.floor(now / bucketMs) * bucketMs;
    const starts = Array.from({ length: count }, (_, i) => current - (count - 1 - i) * bucketMs);
    // Every finished bucket but the last one is known: read only the last two.
    const settled = starts.slice(0, -2);
    const since = settled.every((start) => cache.buckets.has(start)) ? starts[count - 2]! : starts[0]!;
    const [read, known] = await Promise.all([
      this.#store.getThroughput({ since: new Date(since), bucketMs, maxEvents: MAX_EVENTS }),
      this.#store.listQueues(),
    ]);

    const fresh = starts.filter((start) => start >= since);
    for (const start of fresh) {
      cache.buckets.set(start, []);
      cache.partial.delete(start);
    }
    for (const bucket of read) cache.buckets.get(since + bucket.bucket * bucketMs)?.push(bucket);
    const rows = read.reduce((sum, b) => sum + b.events, 0);
    if (rows >= MAX_EVENTS) for (const start of fresh) cache.partial.add(start);
    for (const start of cache.buckets.keys()) {
      if (start < starts[0]!) {
        cache.buckets.delete(start);
        cache.partial.delete(start);
      }
    }

    // Every queue the store knows, idle ones with empty series: an idle queue shows as idle.
    const byQueue = new Map<string, QueueThroughput>(known.map((q) => [q.name, emptySeries(q.name, count)]));
    starts.forEach((start, i) => {
      for (const b of cache.buckets.get(start) ?? []) {
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
      partial: starts.some((start) => cache.partial.has(start)),
      queues: [...byQueue.values()].sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0)),
    };
  }
}

function emptySeries(queue: string, count: number): QueueThroughput {
  const zeros = () => Array.from({ length: count }, () => 0);
  const nulls = () => Array.from({ length: count }, (): number | null => null);
  return { queue, completed: zeros(), failed: zeros(), retried: zeros(), dead: zeros(), attempts: zeros(), p50Ms: nulls(), p95Ms: nulls() };
}
