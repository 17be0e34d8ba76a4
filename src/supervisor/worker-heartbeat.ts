/**
 * The supervisor's row in the store's workers table (what the inspector's workers page lists):
 * written at start and every WORKER_HEARTBEAT_MS on the supervisor's clock, removed at stop.
 * A heartbeat the store refuses is logged and tried again at the next; it never stops jobs.
 */
import type { JobStore, WorkerHeartbeat } from '../adapters/store.js';
import type { Logger } from '../types.js';
import { promiseOf } from './promise-of.js';
import { startTimer, type TimerClock } from './timer.js';

export const WORKER_HEARTBEAT_MS = 10_000;

export class WorkerPresence {
  #cancelTimer: (() => void) | undefined;
  #inFlight: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(
    private readonly store: Pick<JobStore, 'recordWorker' | 'removeWorker'>,
    private readonly clock: TimerClock,
    private readonly logger: Logger,
    private readonly describe: () => WorkerHeartbeat,
  ) {}

  start(): void {
    this.#beat();
  }

  /** No more heartbeats; resolves once the row is gone (or removing it failed, logged). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#cancelTimer?.();
    await this.#inFlight;
    const { workerId } = this.describe();
    await promiseOf(() => this.store.removeWorker({ workerId })).catch((error: unknown) => {
      this.logger.warn({ err: error, workerId }, 'could not remove this worker’s row; it is forgotten once long unseen');
    });
  }

  #beat(): void {
    this.#inFlight = promiseOf(() => this.store.recordWorker({ worker: this.describe() }))
      .catch((error: unknown) => this.logger.warn({ err: error }, 'worker heartbeat failed; trying again at the next'))
      .then(() => {
        if (!this.#stopped) this.#cancelTimer = startTimer(this.clock, this.clock.now() + WORKER_HEARTBEAT_MS, () => this.#beat());
      });
  }
}
