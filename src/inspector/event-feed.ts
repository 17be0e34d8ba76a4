/**
 * The live feed behind the page: polls the store's history by event id while anyone
 * listens, and hands each new batch of transitions to the listeners. One poll serves every
 * open page; `wake()` polls at once (an enqueue, a supervisor's counters moving).
 *
 * SQL draws an event id at insert and shows the row at commit, so a transaction still open
 * can leave a gap below ids already seen. Gaps are remembered for a while and looked at
 * again; one that never fills (a rolled back insert) is dropped after HOLE_TTL_MS.
 * A feed that falls too far behind (more than MAX_ROUNDS full batches in one poll) skips to
 * the newest event and tells the listeners to reload rather than stream every transition.
 */
import type { JobEventEntry, JobStore } from '../adapters/store.js';
import type { Logger } from '../types.js';

export type FeedBatch =
  | { type: 'events'; events: JobEventEntry[] }
  | { type: 'deleted'; jobId: string }
  | { type: 'reset' };
export type FeedListener = (batch: FeedBatch) => void;

const HOLE_TTL_MS = 10_000;
const MAX_HOLES = 1_000;
const MAX_ROUNDS = 4;

export interface EventFeedOptions {
  pollIntervalMs: number;
  logger: Logger;
  /** Events per store call. Default 500. */
  batchSize?: number;
}

export class EventFeed {
  readonly #store: JobStore;
  readonly #options: Required<EventFeedOptions>;
  readonly #listeners = new Set<FeedListener>();
  /** Highest event id seen; null until the first poll found where the history ends. */
  #cursor: bigint | null = null;
  /** Ids below the cursor not seen yet → when the gap was noticed. */
  readonly #holes = new Map<bigint, number>();
  #timer: NodeJS.Timeout | undefined;
  #polling: Promise<void> | undefined;
  #pollAgain = false;
  #closed = false;

  constructor(store: JobStore, options: EventFeedOptions) {
    this.#store = store;
    this.#options = { batchSize: 500, ...options };
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
    // Where the history ends is looked up again on the next start: nothing is replayed.
    this.#cursor = null;
    this.#holes.clear();
  }

  async #poll(): Promise<void> {
    try {
      if (this.#cursor === null) {
        const [newest] = await this.#store.listJobEvents({ limit: 1 });
        this.#cursor = newest ? BigInt(newest.id) : 0n;
        return;
      }
      const fresh = [...(await this.#recheckHoles())];
      for (let round = 0; ; round++) {
        const events = await this.#store.listJobEvents({ afterId: String(this.#cursor), limit: this.#options.batchSize });
        for (const event of events) this.#advance(BigInt(event.id));
        fresh.push(...events);
        if (events.length < this.#options.batchSize) break;
        if (round + 1 === MAX_ROUNDS) {
          const [newest] = await this.#store.listJobEvents({ limit: 1 });
          if (newest) this.#cursor = BigInt(newest.id);
          this.#holes.clear();
          this.broadcast({ type: 'reset' });
          return;
        }
      }
      if (fresh.length > 0) this.broadcast({ type: 'events', events: fresh });
    } catch (error) {
      this.#options.logger.warn({ err: error }, 'inspector: reading the job history failed; will try again');
    }
  }

  /** Moves the cursor to `id`, remembering the ids it skipped. */
  #advance(id: bigint): void {
    const cursor = this.#cursor!;
    if (id <= cursor) return;
    const now = Date.now();
    for (let missing = cursor + 1n; missing < id && this.#holes.size < MAX_HOLES; missing++) this.#holes.set(missing, now);
    this.#cursor = id;
  }

  /** Events that filled a gap since the last poll. */
  async #recheckHoles(): Promise<JobEventEntry[]> {
    const now = Date.now();
    for (const [id, since] of this.#holes) if (now - since > HOLE_TTL_MS) this.#holes.delete(id);
    if (this.#holes.size === 0) return [];
    const lowest = [...this.#holes.keys()].reduce((a, b) => (a < b ? a : b));
    const span = Number(this.#cursor! - lowest) + 1;
    const events = await this.#store.listJobEvents({
      afterId: String(lowest - 1n),
      limit: Math.min(span, this.#options.batchSize),
    });
    return events.filter((event) => this.#holes.delete(BigInt(event.id)));
  }
}
