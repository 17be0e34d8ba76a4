/**
 * The live feed behind the page: polls the store's history by event id, and its jobs by id
 * for the ones created (an enqueue writes no history row), while anyone listens, and hands
 * each new batch to the listeners. One poll serves every open page; `wake()` polls at once
 * (an enqueue, a supervisor's counters moving). Each read follows its table's end with an
 * IdTail (id-tail.ts: rows that commit late, a feed that falls too far behind).
 */
import type { JobEventEntry, JobStore, NewJob } from '../adapters/store.js';
import type { JobEvent, Logger } from '../types.js';
import { IdTail } from './id-tail.js';

/** `events`: transitions, and each new job as a creation (from nothing to the state it was
 *  created in), the batch's creations before its transitions. */
export type FeedBatch =
  | { type: 'events'; events: JobEvent[] }
  | { type: 'deleted'; jobId: string }
  | { type: 'reset' };
export type FeedListener = (batch: FeedBatch) => void;

export interface EventFeedOptions {
  pollIntervalMs: number;
  logger: Logger;
  /** Rows per store call. Default 500. */
  batchSize?: number;
}

export class EventFeed {
  readonly #options: Required<EventFeedOptions>;
  readonly #listeners = new Set<FeedListener>();
  readonly #history: IdTail<JobEventEntry>;
  readonly #jobs: IdTail<NewJob>;
  #timer: NodeJS.Timeout | undefined;
  #polling: Promise<void> | undefined;
  #pollAgain = false;
  #closed = false;

  constructor(store: JobStore, options: EventFeedOptions) {
    this.#options = { batchSize: 500, ...options };
    const { batchSize } = this.#options;
    this.#history = new IdTail((afterId, limit) => store.listJobEvents({ afterId, limit }), (event) => event.id, batchSize);
    this.#jobs = new IdTail((afterId, limit) => store.listNewJobs({ afterId, limit }), (job) => job.id, batchSize);
  }

  /** Starts polling with the first listener, stops with the last. */
  subscribe(listener: FeedListener): () => void {
    this.#listeners.add(listener);
    if (this.#listeners.size === 1) this.wake();
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.#stop();
    };
  }

  /** Polls now, or right after the poll in progress. */
  wake(): void {
    if (this.#closed || this.#listeners.size === 0) return;
    if (this.#polling) {
      this.#pollAgain = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#polling = this.#poll().finally(() => {
      this.#polling = undefined;
      if (this.#pollAgain) {
        this.#pollAgain = false;
        this.wake();
      } else if (!this.#closed && this.#listeners.size > 0) {
        this.#timer = setTimeout(() => this.wake(), this.#options.pollIntervalMs);
      }
    });
  }

  /** Sends every listener a batch, also one that did not come from the history (a deletion). */
  broadcast(batch: FeedBatch): void {
    for (const listener of this.#listeners) listener(batch);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#listeners.clear();
    this.#stop();
    await this.#polling;
  }

  #stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    // Where the tables end is looked up again on the next start: nothing is replayed.
    this.#history.clear();
    this.#jobs.clear();
  }

  async #poll(): Promise<void> {
    try {
      // The history first: a job whose transition it saw had committed before it was read, so the
      // jobs' read after it finds the job (or its gap, looked at again) in the same poll, and its
      // creation goes out before its transitions.
      const transitions = await this.#history.poll();
      const created = await this.#jobs.poll();
      if (transitions === 'reset' || created === 'reset') {
        this.broadcast({ type: 'reset' });
        return;
      }
      const events: JobEvent[] = [...created.map(creation), ...transitions];
      if (events.length > 0) this.broadcast({ type: 'events', events });
    } catch (error) {
      this.#options.logger.warn({ err: error }, 'inspector: reading the job history failed; will try again');
    }
  }
}

function creation(job: NewJob): JobEvent {
  return { jobId: job.id, fromState: null, toState: job.state, attempt: 0, workerId: null, at: job.createdAt, error: null };
}
