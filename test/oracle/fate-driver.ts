/**
 * Runs one job through the real supervisor (createSupervisor from the package's entry) on a
 * real store, its handler doing what a script says on each call, and reads back what the row
 * and its history became, in the shape of the reference model's `Fate` (job-fate.ts).
 *
 * Two workers run from the start, either may claim the job. Time keeps to the model's grid:
 * one simulated clock for the store and the workers, moved in half-second steps; each worker
 * polls every half second, so a claim comes exactly when the job is due, and after the polls
 * of each step the driver runs a reaper pass (`supervisor.reap()`), so the reaper ends a
 * waiting job exactly at its `expiresAt` and rescues a lapsed lease after that moment's polls. After each step every store call set
 * off has its answer before time moves on. Cancel, shutdown and crash come from outside, to
 * the worker running the handler, as a user's or the machine's would: `supervisor.cancel(id)`;
 * `supervisor.stop({ graceMs: 0 })`; its process dying (from the handler's start on, none of
 * its store calls goes out nor is answered, its timers do nothing that reaches the store).
 * A worker stopped or crashed is replaced by a new one, so two are always up.
 *
 * The handler runs the scenario's program of durable calls first (job.step, job.sleep,
 * job.waitForSignal), then its script's next action; a step's fault crashes or freezes its
 * worker inside the step's fn, after its side effect. Signals go out through `sendSignal` at
 * their moment, after that moment's polls and reaper pass, each answered (and what its wake-up
 * sets off settled) before the next.
 */
import type { SimulatedClock } from 'xstate';
import { type JobStore, NEVER } from '../../src/adapters/store.js';
import {
  createSupervisor, defineQueue, FINAL_JOB_STATES, type Job, JobEndedError, PermanentJobError, sendSignal, SkipJobError, SnoozeJobError,
  type Supervisor,
} from '../../src/index.js';
import type { Clock } from '../../src/types.js';
import { createTestClock } from '../support/sim.js';
import { trackCalls } from '../support/store-proxy.js';
import {
  backoffMs, DEFAULT_ACTION, type DurableOp, type Fate, type FateRow, type HandlerAction, type JobOptions, LEASE_MS, POLL_MS, type SignalAnswer,
  type SignalSend, type StoredCall,
} from './job-fate.js';

export const STEP_MS = 500;
/** The workers' own reaper timers never fire in a scenario: the driver reaps each step. */
const NO_REAPER_TIMER_MS = 3_600_000;
/** How long a woken job's claim may take to come, in real time (PostgreSQL's NOTIFY); past
 *  it, the driver goes on and the claim comes late, at a poll the model does not expect. */
const NOTIFY_WAIT_MS = 5_000;
/** Longer than any scenario: a job not final by then is reported as it stands. */
const MAX_STEPS = 400;

export type StoreFactory = (clock: Clock) => Promise<JobStore>;

export async function observeFate(
  createStore: StoreFactory,
  options: JobOptions,
  script: readonly HandlerAction[],
  program: readonly DurableOp[] = [],
  sends: readonly SignalSend[] = [],
): Promise<Fate> {
  const clock = createTestClock();
  const t0 = clock.now();
  const tracked = trackCalls(await createStore(clock));
  const store = tracked.store;
  let calls = 0;
  /** Runs that got past the program: the index of the script's next action. */
  let ends = 0;
  const stepRuns: Record<string, number> = {};
  const faulted = new Set<string>();
  const outbox = [...sends].sort((a, b) => a.atMs - b.atMs);
  const answers: SignalAnswer[] = [];
  /** A cancel, shutdown or crash the driver must bring about, to the worker that asked. */
  let external: { what: 'cancel' | 'shutdown' | 'crash'; worker: Worker } | undefined;

  const handlerOf = (worker: Worker) => async (job: Job) => {
    const { signal } = job;
    // A zombie of an earlier attempt wakes as this one starts: its write races this attempt.
    wake((w) => w.attempt < job.attempt);
    calls += 1;
    const run = calls;
    for (const op of program) {
      if (op.op === 'step') {
        await job.step(op.name, () => {
          stepRuns[op.name] = (stepRuns[op.name] ?? 0) + 1;
          if (!op.fault || faulted.has(op.name)) return run;
          faulted.add(op.name);
          external = { what: 'crash', worker };
          if (op.fault === 'crash') {
            worker.crashed = true;
            return new Promise<number>(() => {});
          }
          // The checkpoint, and every call after it, waits until the driver wakes the process.
          worker.frozen = { attempt: job.attempt, held: [] };
          return run;
        });
      } else if (op.op === 'sleep') {
        await job.sleep(op.name, op.ms);
      } else {
        await job.waitForSignal(op.name, op.timeoutMs === null ? {} : { timeoutMs: op.timeoutMs });
      }
    }
    const action = script[ends] ?? DEFAULT_ACTION;
    ends += 1;
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
      case 'crash':
        // From here on the process is gone: nothing of this worker reaches the store.
        worker.crashed = true;
        external = { what: 'crash', worker };
        return new Promise(() => {});
      case 'freeze':
        // Its write, and every call after it, waits until the driver wakes the process.
        worker.frozen = { attempt: job.attempt, held: [] };
        external = { what: 'crash', worker };
        return action.value;
      case 'cancel':
      case 'shutdown':
        external = { what: action.do, worker };
        return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));
    }
  };

  /** The queue as every worker and the enqueue see it: one handler per worker. */
  const fateQueue = (work: (job: Job) => Promise<unknown>) =>
    defineQueue('fate', { maxAttempts: options.maxAttempts, deadlineMs: options.deadlineMs, leaseMs: LEASE_MS, backoff: backoffMs, handlers: { work } });
  const workers: Worker[] = [];
  const startWorker = async (): Promise<void> => {
    const worker: Worker = { supervisor: undefined as never, crashed: false, frozen: undefined };
    const queue = fateQueue(handlerOf(worker));
    worker.supervisor = createSupervisor({
      store: crashable(worker, store), queues: [queue], clock, workerId: `w${workers.length + 1}`, pollIntervalMs: POLL_MS, reaperIntervalMs: NO_REAPER_TIMER_MS,
    });
    workers.push(worker);
    await worker.supervisor.start();
    await tracked.settle();
  };
  const up = () => workers.filter((w) => !w.crashed && !w.stopped && !w.frozen);
  /** Wakes the frozen workers `which` picks: their held calls go out now. */
  const wake = (which: (frozen: NonNullable<Worker['frozen']>) => boolean): boolean => {
    const woken = workers.filter((w) => w.frozen && which(w.frozen));
    for (const w of woken) {
      const held = w.frozen!.held;
      w.frozen = undefined;
      for (const send of held) send();
    }
    return woken.length > 0;
  };

  const expiresAt = options.expiresAtMs === null ? undefined : new Date(t0 + options.expiresAtMs);
  const { job } = await fateQueue(async () => {}).enqueue(store, 'work', {}, { expiresAt });
  /** Sends, in order, the signals due by now: each answered, and what it set off settled; stops
   *  when a run it woke asks the driver for a cancel, shutdown or crash (done first). */
  const sendDue = async (untilMs: number): Promise<void> => {
    while (!external && outbox.length > 0 && outbox[0]!.atMs <= untilMs) {
      const { name, payload } = outbox.shift()!;
      try {
        const { delivered } = await sendSignal(store, job.id, name, payload);
        answers.push(delivered);
        if (delivered === 'woke') await claimedOnNotify();
      } catch (error) {
        if (!(error instanceof JobEndedError)) throw error;
        answers.push('ended');
      }
      await tracked.settle();
    }
  };
  /** A woken job's NOTIFY reaches a worker, which claims it at once, the clock not moving. On
   *  PostgreSQL the notification comes over its own connection, after the calls set off here
   *  have their answers: wait for the claim itself (a real server, so real time, bounded). */
  const claimedOnNotify = async (): Promise<void> => {
    const deadline = performance.now() + NOTIFY_WAIT_MS;
    for (;;) {
      await tracked.settle();
      if ((await store.getJob({ id: job.id }))?.state !== 'pending' || performance.now() > deadline) return;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  await startWorker();
  await startWorker();
  try {
    for (let step = 0; step < MAX_STEPS; step++) {
      const asked = external;
      external = undefined;
      if (asked?.what === 'cancel') {
        await asked.worker.supervisor.cancel(job.id);
        await tracked.settle();
      } else if (asked?.what === 'shutdown') {
        await stopWorker(asked.worker, clock, tracked.settle);
        await startWorker();
      } else if (asked?.what === 'crash') {
        await startWorker();
      }
      if (external) continue;
      // This moment's signals, once its claims, runs and what they asked of the driver are done.
      await sendDue(clock.now() - t0);
      if (external) continue;
      const row = await store.getJob({ id: job.id });
      if (row && FINAL_JOB_STATES.includes(row.state)) {
        // A zombie whose job ended without another attempt (none left) wakes at the end.
        if (!wake(() => true)) break;
        await tracked.settle();
        continue;
      }
      // Waiting for a signal that no send will bring, with no timeout and no expiresAt: for ever.
      if (row?.state === 'sleeping' && row.runAt.getTime() === NEVER.getTime() && outbox.length === 0 && !expiresAt) break;
      clock.increment(STEP_MS);
      await tracked.settle();
      // The reaper's pass of this moment, once the polls of this moment have their answers:
      // run from here, not from each worker's timer, whose calls would race the polls.
      await up()[0]!.supervisor.reap();
      await tracked.settle();
    }
    // The job has ended: the signals still to send are refused.
    await sendDue(Infinity);
    const row = (await store.getJob({ id: job.id }))!;
    const history = (await store.getJobEvents({ id: job.id })).map(
      (e): FateRow => ({ from: e.fromState, to: e.toState, attempt: e.attempt, code: e.error?.code ?? null, atMs: e.at.getTime() - t0 }),
    );
    const ms = (at: Date) => at.getTime() - t0;
    const steps = row.steps.map((s): StoredCall => {
      if (s.kind === 'step') return { kind: 'step', name: s.name, atMs: ms(s.at), result: s.result as number };
      if (s.kind === 'sleep') return { kind: 'sleep', name: s.name, atMs: ms(s.at), untilMs: ms(s.until) };
      return { kind: 'signal', name: s.name, atMs: ms(s.at), status: s.status, payload: (s.payload as number | undefined) ?? null, untilMs: s.until && ms(s.until) };
    });
    return {
      state: row.state,
      code: row.error?.code ?? null,
      attempt: row.attempt,
      maxAttempts: row.maxAttempts,
      runAtMs: row.runAt.getTime() === NEVER.getTime() ? Infinity : ms(row.runAt),
      result: row.state === 'completed' ? (row.result as number) : null,
      history,
      calls,
      steps,
      stepRuns,
      signals: answers,
    };
  } finally {
    for (const worker of up()) await stopWorker(worker, clock, tracked.settle);
    await store.close();
  }
}

interface Worker {
  supervisor: Supervisor;
  crashed: boolean;
  /** Frozen after its handler of `attempt` returned; `held`: its calls, sent on waking. */
  frozen: { attempt: number; held: Array<() => void> } | undefined;
  stopped?: boolean;
}

/** The worker's store: once it crashed, a call neither goes out nor is answered; while it is
 *  frozen, a call waits for it to wake. */
function crashable(worker: Worker, store: JobStore): JobStore {
  return new Proxy(store, {
    get: (target, key) => {
      const value = Reflect.get(target, key);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (worker.crashed) return new Promise(() => {});
        if (worker.frozen) return new Promise((resolve) => worker.frozen!.held.push(() => resolve(value.apply(target, args))));
        return value.apply(target, args);
      };
    },
  });
}

/** stop() with no grace: the grace timer fires on the clock's next move, which is now. */
async function stopWorker(worker: Worker, clock: SimulatedClock, settleStore: () => Promise<void>): Promise<void> {
  worker.stopped = true;
  let stopped = false;
  const stopping = worker.supervisor.stop({ graceMs: 0 }).then(() => {
    stopped = true;
  });
  for (let i = 0; i < 20 && !stopped; i++) {
    clock.increment(0);
    await settleStore();
  }
  await stopping;
}

