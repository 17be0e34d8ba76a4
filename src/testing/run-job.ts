import type { SimulatedClock } from 'xstate';
import { memoryStore } from '../adapters/memory/index.js';
import type { JobStore } from '../adapters/store.js';
import type { EnqueueOptions, HandlerMap, PayloadOf, Queue, ResultOf } from '../queue.js';
import type { JobErrorInfo, JobEvent, JobRecord, JobState } from '../types.js';
import { createTestClock } from './clock.js';
import { drainUntil, dueAt } from './drain.js';

export interface RunJobOptions {
  /** Default: a new memory store reading `clock`. A store of your own must read `clock` too. */
  store?: JobStore;
  /** Default: `createTestClock()`. Move it yourself while `runJob` waits to let a handler's
   *  deadline pass. */
  clock?: SimulatedClock;
  /** How the job is enqueued: priority, runAt, maxAttempts, uniqueKey. */
  enqueue?: Omit<EnqueueOptions, 'client'>;
  /** How many attempts (clock moves) at most before `runJob` gives up. Default 100. */
  maxRounds?: number;
}

/** One job run to its end: where it ended, and how it got there. */
export interface JobRun<P = unknown, R = unknown> {
  /** The row at the end. */
  job: JobRecord<P, R>;
  /** `completed`, `dead` or `skipped` (or `cancelled`). */
  state: JobState;
  result: R | null;
  error: JobErrorInfo | null;
  /** Every transition of the row, oldest first. */
  history: JobEvent[];
  /** The states the row went through: `['pending', 'running', 'retrying', 'running', 'completed']`. */
  path: JobState[];
  store: JobStore;
  clock: SimulatedClock;
}

/**
 * Enqueues one job and runs it through its queue's handler until it ends: every attempt, the
 * clock moved past each backoff, as a supervisor would run it. The payload is checked against
 * the handler's type, as by `queue.enqueue`.
 */
export async function runJob<H extends HandlerMap, K extends keyof H & string>(
  queue: Queue<H>,
  kind: K,
  payload: PayloadOf<H[K]>,
  options: RunJobOptions = {},
): Promise<JobRun<PayloadOf<H[K]>, ResultOf<H[K]>>> {
  const clock = options.clock ?? createTestClock();
  const store = options.store ?? memoryStore({ clock });
  const { job } = await queue.enqueue(store, kind, payload, options.enqueue);
  await drainUntil(store, [queue], { clock, ...(options.maxRounds !== undefined && { maxRounds: options.maxRounds }) }, async () => {
    const row = await store.getJob({ id: job.id });
    return row ? dueAt(row) : null;
  });
  const row = (await store.getJob({ id: job.id })) as JobRecord<PayloadOf<H[K]>, ResultOf<H[K]>>;
  const history = await store.getJobEvents({ id: job.id });
  return { job: row, state: row.state, result: row.result, error: row.error, history, path: history.map((e) => e.toState), store, clock };
}
