/**
 * The queues panel: each queue's backlog (capped counts, oldest waiting job), its throughput
 * per minute over the last minutes, and the running jobs. Cached until the history moves (or
 * a few seconds pass), so that many open pages cost one set of reads.
 *
 * Throughput comes from the history (countJobTransitions), read again at most every
 * `historyMs` whatever the refreshes ask. A minute, once over, does not change, so each read
 * covers only the current minute and the one before it (late commits); older minutes were
 * counted by earlier reads. The first read covers the whole window.
 */
import type { JobStore, QueueBacklog, TransitionCount } from '../adapters/store.js';
import type { QueueCounters } from '../supervisor/counters.js';
import type { Supervisor } from '../supervisor/supervisor.js';
import type { JobState } from '../types.js';
import { HeldJobs } from './held.js';
import { jobSummary, type JobSummary } from './job-json.js';

const BUCKET_MS = 60_000;
const WINDOW_BUCKETS = 10;
/** Each backlog count stops here; the page shows "10000+". */
const MAX_COUNT = 10_000;
const MAX_EVENTS = 100_000;
const RUNNING_LIMIT = 50;

export interface QueueView {
  queue: string;
  counts: QueueBacklog['counts'];
  /** Its pending jobs not yet due: scheduled (never ran) and snoozed (ran before). */
  later: QueueBacklog['later'];
  oldestRunAt: Date | null;
  /** How long the oldest due job has waited; null when none is due. */
  oldestWaitMs: number | null;
  /** Per bucket, oldest first: transitions into each state. */
  throughput: Partial<Record<JobState, number[]>>;
  /** This process's counters, when the inspector runs beside a supervisor. */
  process: QueueCounters | null;
  /** Since when no worker claims its jobs; null when active. */
  pausedAt: Date | null;
  /** Its running jobs split into those whose handler runs and those held in a worker for a
   *  slot, as of the workers' last heartbeats; null when a worker's row does not say. */
  running: { started: number; held: number } | null;
}

export interface QueuesView {
  now: Date;
  bucketMs: number;
  /** Start of each throughput bucket, oldest first. */
  buckets: Date[];
  maxCount: number;
  /** A throughput read hit its limit: the counts are lower bounds. */
  partial: boolean;
  queues: QueueView[];
  running: JobSummary[];
  runningMore: boolean;
  supervisor: { workerId: string; lastError: { message: string; at: Date } | null } | null;
}

export class QueueStats {
  readonly #store: JobStore;
  readonly #supervisor: Supervisor | undefined;
  readonly #cacheMs: number;
  /** Bucket start (ms) → its counts, for buckets already read. */
  readonly #buckets = new Map<number, TransitionCount[]>();
  readonly #partial = new Set<number>();
  #cached: { at: number; view: Promise<QueuesView> } | undefined;
  readonly #historyMs: number;
  /** When the history was last read: within historyMs, the buckets already read serve. */
  #historyAt = -Infinity;

  constructor(store: JobStore, supervisor: Supervisor | undefined, cacheMs: number, historyMs = cacheMs) {
    this.#store = store;
    this.#supervisor = supervisor;
    this.#cacheMs = cacheMs;
    this.#historyMs = historyMs;
  }

  /** The history moved: the next read reads the store again. */
  invalidate(): void {
    this.#cached = undefined;
  }

  read(): Promise<QueuesView> {
    const now = Date.now();
    if (this.#cached && now - this.#cached.at < this.#cacheMs) return this.#cached.view;
    const view = this.#read(now);
    this.#cached = { at: now, view };
    view.catch(() => {
      if (this.#cached?.view === view) this.#cached = undefined;
    });
    return view;
  }

  async #read(now: number): Promise<QueuesView> {
    const current = Math.floor(now / BUCKET_MS) * BUCKET_MS;
    const starts = Array.from({ length: WINDOW_BUCKETS }, (_, i) => current - (WINDOW_BUCKETS - 1 - i) * BUCKET_MS);
    const known = starts.filter((start) => start < current - BUCKET_MS && this.#buckets.has(start));
    const since = known.length === starts.length - 2 ? current - BUCKET_MS : starts[0]!;
    const readHistory = now - this.#historyAt >= this.#historyMs || !this.#buckets.has(current);
    const [backlogs, transitions, running, queueRows, workers] = await Promise.all([
      this.#store.getQueueBacklogs({ maxCount: MAX_COUNT }),
      readHistory ? this.#store.countJobTransitions({ since: new Date(since), bucketMs: BUCKET_MS, maxEvents: MAX_EVENTS }) : null,
      this.#store.scanJobs({ state: 'running', limit: RUNNING_LIMIT }),
      this.#store.listQueues(),
      this.#store.listWorkers(),
    ]);
    const held = new HeldJobs(workers);
    if (transitions) {
      this.#remember(since, starts, transitions);
      this.#historyAt = now;
    }

    const counters = this.#supervisor?.counters.getSnapshot().context;
    const pausedAt = new Map(queueRows.map((q) => [q.name, q.pausedAt]));
    const names = new Set([
      ...queueRows.map((q) => q.name),
      ...backlogs.map((b) => b.queue),
      ...[...this.#buckets.values()].flat().map((t) => t.queue),
      ...Object.keys(counters?.queues ?? {}),
    ]);
    const backlogOf = new Map(backlogs.map((b) => [b.queue, b]));
    const queues = [...names].sort().map((queue): QueueView => {
      const backlog = backlogOf.get(queue);
      const oldest = backlog?.oldestRunAt ?? null;
      const throughput: QueueView['throughput'] = {};
      starts.forEach((start, i) => {
        for (const t of this.#buckets.get(start) ?? []) {
          if (t.queue !== queue) continue;
          const series = (throughput[t.toState] ??= starts.map(() => 0));
          series[i] = t.count;
        }
      });
      const counts = backlog?.counts ?? { pending: 0, retrying: 0, running: 0, dead: 0, skipped: 0, cancelled: 0, waiting: 0, sleeping: 0 };
      return {
        queue,
        counts,
        later: backlog?.later ?? { scheduled: 0, snoozed: 0 },
        running: held.split(queue, counts.running),
        oldestRunAt: oldest,
        oldestWaitMs: oldest && oldest.getTime() <= now ? now - oldest.getTime() : null,
        throughput,
        process: counters?.queues[queue] ?? null,
        pausedAt: pausedAt.get(queue) ?? null,
      };
    });
    return {
      now: new Date(now),
      bucketMs: BUCKET_MS,
      buckets: starts.map((start) => new Date(start)),
      maxCount: MAX_COUNT,
      partial: starts.some((start) => this.#partial.has(start)),
      queues,
      running: running.jobs.map((job) => jobSummary(job, held)),
      runningMore: running.nextBeforeId !== null,
      supervisor: this.#supervisor
        ? {
            workerId: this.#supervisor.workerId,
            lastError: counters?.lastError ? { message: counters.lastError.message, at: new Date(counters.lastError.at) } : null,
          }
        : null,
    };
  }

  /** Stores the counts read from `since` on, bucket by bucket, and forgets old buckets. */
  #remember(since: number, starts: number[], transitions: TransitionCount[]): void {
    const read = starts.filter((start) => start >= since);
    for (const start of read) {
      this.#buckets.set(start, []);
      this.#partial.delete(start);
    }
    for (const t of transitions) this.#buckets.get(since + t.bucket * BUCKET_MS)?.push(t);
    const total = transitions.reduce((sum, t) => sum + t.count, 0);
    if (total >= MAX_EVENTS) for (const start of read) this.#partial.add(start);
    for (const start of this.#buckets.keys()) {
      if (start < starts[0]!) {
        this.#buckets.delete(start);
        this.#partial.delete(start);
      }
    }
  }
}
