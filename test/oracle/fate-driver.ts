/**
 * Runs one job through the real supervisor (createSupervisor from the package's entry) on a
 * real store, its handler doing what a script says on each call, and reads back what the row
 * and its history became, in the shape of the reference model's `Fate` (job-fate.ts).
 *
 * Time keeps to the model's grid: one simulated clock for the store and the supervisor,
 * moved in half-second steps; the supervisor polls and reaps every half second, so a claim
 * comes exactly when the job is due and the reaper ends a waiting job exactly at its
 * `expiresAt`. After each step every store call set off has its answer before time moves on.
 * Cancel and shutdown come from outside, as a user's would: `supervisor.cancel(id)`, and
 * `supervisor.stop({ graceMs: 0 })` followed by a new worker on the same store.
 */
import type { SimulatedClock } from 'xstate';
import type { JobStore } from '../../src/adapters/store.js';
import {
  createSupervisor, defineQueue, FINAL_JOB_STATES, type Job, PermanentJobError, SkipJobError, SnoozeJobError, type Supervisor,
} from '../../src/index.js';
import type { Clock } from '../../src/types.js';
import { createTestClock } from '../support/sim.js';
import { trackCalls } from '../support/store-proxy.js';
import { backoffMs, DEFAULT_ACTION, type Fate, type FateRow, type HandlerAction, type JobOptions } from './job-fate.js';

export const STEP_MS = 500;
/** Longer than any scenario: a job not final by then is reported as it stands. */
const MAX_STEPS = 400;
const LEASE_MS = 60_000;

export type StoreFactory = (clock: Clock) => Promise<JobStore>;

export async function observeFate(createStore: StoreFactory, options: JobOptions, script: readonly HandlerAction[]): Promise<Fate> {
  const clock = createTestClock();
  const t0 = clock.now();
  const tracked = trackCalls(await createStore(clock));
  const store = tracked.store;
  let calls = 0;
  /** A cancel or a shutdown the driver must bring about for the call that asked for it. */
  let external: 'cancel' | 'shutdown' | undefined;

  const queue = defineQueue('fate', {
    maxAttempts: options.maxAttempts,
    deadlineMs: options.deadlineMs,
    leaseMs: LEASE_MS,
    backoff: backoffMs,
    handlers: {
      work: async ({ signal }: Job) => {
        const action = script[calls] ?? DEFAULT_ACTION;
        calls += 1;
        switch (action.do) {
          case 'resolve':
            return action.value;
          case 'throw':
            throw new Error('upstream 503');
          case 'permanent':
            throw new PermanentJobError('place is gone');
          case 'skip':
            throw new SkipJobError('nothing to do');
          case 'snooze':
            throw new SnoozeJobError(action.ms);
          case 'hang':
            // Ignores its signal: only the deadline (or expiresAt) ends the attempt.
            return new Promise(() => {});
          case 'cancel':
          case 'shutdown':
            external = action.do;
            return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));
        }
      },
    },
  });

  let workers = 0;
  const startWorker = async (): Promise<Supervisor> => {
    const supervisor = createSupervisor({
      store, queues: [queue], clock, workerId: `w${++workers}`, pollIntervalMs: STEP_MS, reaperIntervalMs: STEP_MS,
    });
    await supervisor.start();
    await tracked.settle();
    return supervisor;
  };

  const expiresAt = options.expiresAtMs === null ? undefined : new Date(t0 + options.expiresAtMs);
  const { job } = await queue.enqueue(store, 'work', {}, { expiresAt });
  let supervisor = await startWorker();
  try {
    for (let step = 0; step < MAX_STEPS; step++) {
      const asked = external;
      external = undefined;
      if (asked === 'cancel') {
        await supervisor.cancel(job.id);
        await tracked.settle();
      } else if (asked === 'shutdown') {
        await stopWorker(supervisor, clock, tracked.settle);
        supervisor = await startWorker();
      }
      if (external) continue;
      const row = await store.getJob({ id: job.id });
      if (row && FINAL_JOB_STATES.includes(row.state)) break;
      clock.increment(STEP_MS);
      await tracked.settle();
    }
    const row = (await store.getJob({ id: job.id }))!;
    const history = (await store.getJobEvents({ id: job.id })).map(
      (e): FateRow => ({ from: e.fromState, to: e.toState, attempt: e.attempt, code: e.error?.code ?? null, atMs: e.at.getTime() - t0 }),
    );
    return {
      state: row.state,
      code: row.error?.code ?? null,
      attempt: row.attempt,
      maxAttempts: row.maxAttempts,
      runAtMs: row.runAt.getTime() - t0,
      result: row.state === 'completed' ? (row.result as number) : null,
      history,
      calls,
    };
  } finally {
    await stopWorker(supervisor, clock, tracked.settle);
    await store.close();
  }
}

/** stop() with no grace: the grace timer fires on the clock's next move, which is now. */
async function stopWorker(supervisor: Supervisor, clock: SimulatedClock, settleStore: () => Promise<void>): Promise<void> {
  let stopped = false;
  const stopping = supervisor.stop({ graceMs: 0 }).then(() => {
    stopped = true;
  });
  for (let i = 0; i < 20 && !stopped; i++) {
    clock.increment(0);
    await settleStore();
  }
  await stopping;
}

