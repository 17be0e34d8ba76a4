/**
 * The supervisor's own measurements, per queue: how long attempts ran and how long jobs
 * waited past their `runAt` before a worker claimed them. Fixed-bucket histograms, cheap
 * enough to feed from the hot path (an array walk and two additions per job); read on scrape
 * by prometheus.ts.
 */

/** Upper bounds in seconds, Prometheus' defaults stretched to an hour for long jobs. */
export const DURATION_BUCKETS: readonly number[] = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600,
];

export interface HistogramSnapshot {
  /** Upper bounds, ascending; observations above the last are only in `count`. */
  buckets: readonly number[];
  /** Observations at or below each bound (cumulative, as Prometheus counts them). */
  counts: number[];
  sum: number;
  count: number;
}

export class Histogram {
  readonly #bounds: readonly number[];
  /** Per bucket, not cumulative: one increment per observation. */
  readonly #hits: number[];
  #sum = 0;
  #count = 0;
  /** Called with each observation: how registerMetrics feeds prom-client's histograms. */
  readonly #listeners = new Set<(value: number) => void>();

  constructor(bounds: readonly number[] = DURATION_BUCKETS) {
    this.#bounds = bounds;
    this.#hits = new Array<number>(bounds.length).fill(0);
  }

  observe(value: number): void {
    for (const listener of this.#listeners) listener(value);
    this.#sum += value;
    this.#count += 1;
    const bounds = this.#bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        this.#hits[i]! += 1;
        return;
      }
    }
  }

  /** Calls `listener` with every observation from now on, until the returned function is called. */
  listen(listener: (value: number) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  snapshot(): HistogramSnapshot {
    let running = 0;
    const counts = this.#hits.map((hits) => (running += hits));
    return { buckets: this.#bounds, counts, sum: this.#sum, count: this.#count };
  }
}

/** One queue's histograms. */
export interface QueueMetrics {
  /** Seconds from the handler's start to its end (or its abort). */
  readonly attemptSeconds: Histogram;
  /** Seconds from the job's `runAt` to its claim, by the store's clock. */
  readonly lagSeconds: Histogram;
}

export class SupervisorMetrics {
  readonly #queues = new Map<string, QueueMetrics>();

  constructor(queueNames: readonly string[]) {
    for (const name of queueNames) this.#queues.set(name, { attemptSeconds: new Histogram(), lagSeconds: new Histogram() });
  }

  queue(name: string): QueueMetrics | undefined {
    return this.#queues.get(name);
  }

  /** Every queue's name and histograms. */
  queues(): IterableIterator<[string, QueueMetrics]> {
    return this.#queues.entries();
  }

  /** Per queue: its histograms as they stand. */
  snapshot(): Array<{ queue: string; attemptSeconds: HistogramSnapshot; lagSeconds: HistogramSnapshot }> {
    return [...this.#queues].map(([queue, m]) => ({
      queue,
      attemptSeconds: m.attemptSeconds.snapshot(),
      lagSeconds: m.lagSeconds.snapshot(),
    }));
  }
}
