/**
 * Replays one path of the supervisor model on a real supervisor (`createSupervisor`, one
 * queue of concurrency 2, no prefetch) over a real store, driven only from outside: the API
 * (start, drain, stop), enqueues, the simulated clock, the handlers' answers, and a store that
 * answers a claim, a drain's reaper pass or a release when the path says so, or is down.
 * After every step (once the store calls it let through have answered): the supervisor's
 * actor is where the model said, its counters and the claim it has in flight are what the
 * model said, and the store's rows agree. The store's wake-ups are delivered by the replay as
 * the store would send them, so that a SQL store's NOTIFY, which arrives in its own time, cannot
 * land in the wrong step.
 */
import { expect } from 'vitest';
import type { InspectionEvent } from 'xstate';
import type { ClaimParams, JobOutcome, JobStore } from '../../src/adapters/store.js';
import { defineQueue } from '../../src/queue.js';
import { createSupervisor } from '../../src/supervisor/supervisor.js';
import type { ClaimedJob, Clock } from '../../src/types.js';
import { createTestClock, deferred, settle } from '../support/sim.js';
import { interceptStore } from '../support/store-proxy.js';
import { CONCURRENCY, type FinishEvent, type ModelSnapshot, STORE_DOWN, type SupervisorPath, TIMING } from './supervisor-model.js';

export type StoreFactory = (clock: Clock) => Promise<JobStore>;

const QUEUE = 'q';

interface Held<T> {
  answer: ReturnType<typeof deferred<T>>;
}

export async function replaySupervisorPath(
  path: SupervisorPath,
  createStore: StoreFactory,
  inspect: (event: InspectionEvent) => void,
): Promise<void> {
  const clock = createTestClock();
  const base = await createStore(clock);
  let storeUp = true;
  /** The claim the supervisor has sent, waiting for the path to answer it. */
  let claim: (Held<void> & { params: ClaimParams }) | undefined;
  let drainReap: Held<void> | undefined;
  /** Release batches waiting for the path, each with the jobs it writes. */
  const releases: Array<Held<void> & { outcomes: readonly JobOutcome[] }> = [];
  const releasing = () => releases.reduce((n, r) => n + r.outcomes.length, 0);
  const handlers = new Map<string, ReturnType<typeof deferred<unknown>>>();
  const finished = { completed: 0 };
  let pending = 0;

  /** What the store was asked and is answering now: a step is over once these have. */
  const inFlight = new Set<Promise<unknown>>();
  const tracked = <T>(answer: Promise<T>): Promise<T> => {
    inFlight.add(answer);
    void answer.finally(() => inFlight.delete(answer)).catch(() => {});
    return answer;
  };
  const through = <T>(call: () => Promise<T>): Promise<T> => (storeUp ? tracked(call()) : Promise.reject(STORE_DOWN));
  /** The supervisor's wake-up callback, from its start until it stops. */
  let onWake: ((queue?: string) => void) | undefined;
  const store = interceptStore(base, {
    claimJobs: async (params) => {
      claim = { params, answer: deferred<void>() };
      await claim.answer.promise;
      claim = undefined;
      return through(() => base.claimJobs(params));
    },
    rescueExpiredJobs: async (params) => {
      // A started supervisor's periodic pass is answered at once (see the model); a drain's
      // waits for the path. The machine starts a pass as it enters the state, so which state
      // shows once that transition is over.
      await null;
      if (supervisor.actor.getSnapshot().matches('draining')) {
        drainReap = { answer: deferred<void>() };
        await drainReap.answer.promise;
        drainReap = undefined;
      }
      return through(() => base.rescueExpiredJobs(params));
    },
    setStatesIfRunning: async (params) => {
      // A release (stop past its grace period) is written when the path says so; a completion
      // as its handler answers, and so is the release of a job that never started (claimed
      // while stopping).
      const started = params.outcomes.some((outcome) => handlers.has(outcome.id));
      if (started && params.outcomes.some((outcome) => outcome.state !== 'completed')) {
        const release = { outcomes: params.outcomes, answer: deferred<void>() };
        releases.push(release);
        await release.answer.promise;
      }
      return through(() => base.setStatesIfRunning(params));
    },
    // Store calls that are part of a step though no path event answers them: a step is over
    // once they have their answers too (on a SQL store they take real time).
    nextDueIn: (params) => through(() => base.nextDueIn(params)),
    // The start's schema check is not part of the modelled outage (a real one makes start()
    // reject: docs/supervisor.md), only waited for.
    ...(base.checkSchema ? { checkSchema: () => tracked(base.checkSchema!()) } : {}),
    subscribe: async (wake) => {
      onWake = wake;
      return async () => {
        onWake = undefined;
      };
    },
  });

  const queue = defineQueue(QUEUE, {
    concurrency: CONCURRENCY,
    // No timer of a job's own fires during a path.
    leaseMs: 3_600_000,
    deadlineMs: null,
    handlers: {
      k: (job) => {
        const answer = deferred<unknown>();
        handlers.set(job.id, answer);
        return answer.promise;
      },
    },
  });
  const supervisor = createSupervisor({
    store,
    queues: [queue],
    clock,
    inspect,
    workerId: 'w1',
    prefetchWindowMs: 0,
    pollIntervalMs: TIMING.pollIntervalMs,
    reaperIntervalMs: TIMING.reaperIntervalMs,
    errorBackoffMs: TIMING.errorBackoffMs,
    maxErrorBackoffMs: TIMING.maxErrorBackoffMs,
  });

  const runningRows = async (): Promise<ClaimedJob[]> => (await base.listJobs({ queue: QUEUE, state: 'running' })) as ClaimedJob[];

  const check = async (at: string, model: ModelSnapshot) => {
    const snapshot = supervisor.actor.getSnapshot();
    expect(snapshot.value, `${at}: supervisor state`).toEqual(model.machine.value);
    const { world } = model;
    const running = supervisor.counters.getSnapshot().context.queues[QUEUE]!.running;
    expect(
      { held: running, releasing: releasing(), pending, claimLimit: claim?.params.queues[0]?.limit ?? null },
      `${at}: supervisor`,
    ).toEqual({ held: world.held, releasing: world.releasing, pending: world.pending, claimLimit: world.claim?.limit ?? null });
    // Past the grace period every job this supervisor holds has been told to stop: each
    // waits for its release to be written, or, claimed since, behind that write (the writer
    // sends one batch at a time).
    if (snapshot.matches({ stopping: 'aborting' })) expect(releasing() + world.behind, `${at}: jobs left running after the grace period`).toBe(running);
    const rows = { waiting: 0, running: 0, completed: 0 };
    for (const { state: rowState, count } of await base.countJobs()) {
      if (rowState === 'pending' || rowState === 'retrying') rows.waiting += count;
      else if (rowState === 'running' || rowState === 'completed') rows[rowState] += count;
      else throw new Error(`${at}: a row ${rowState}`);
    }
    // A job given back behind a release batch counts as waiting for the model; its row is
    // running until that batch's write goes through.
    expect(rows, `${at}: rows by state`).toEqual({ waiting: world.pending - world.behind, running: world.held, completed: finished.completed });
    for (const row of await runningRows()) expect(row.workerId, `${at}: running job ${row.id}`).toBe('w1');
  };

  try {
    await check('at the start', path.steps[0]!.state);
    for (const [i, { event, state }] of path.steps.entries()) {
      if (i === 0) continue;
      const before = path.steps[i - 1]!.state.world;
      switch (event.type) {
        case 'store.down':
        case 'store.up':
          storeUp = event.type === 'store.up';
          break;
        case 'job.enqueued':
          await base.enqueueJobs({ jobs: [{ queue: QUEUE, kind: 'k', payload: { step: i }, maxAttempts: 3 }] });
          pending += 1;
          onWake?.(QUEUE);
          break;
        case 'supervisor.start':
          void supervisor.start();
          break;
        case 'supervisor.drain':
          void supervisor.drain();
          break;
        case 'supervisor.stop':
          void supervisor.stop({ graceMs: TIMING.graceMs, storeWaitMs: TIMING.storeWaitMs });
          break;
        case 'claim.done':
        case 'claim.error': {
          const limit = claim!.params.queues[0]!.limit;
          // A supervisor that began to stop gives what the claim brings back at once.
          const stopping = supervisor.actor.getSnapshot().matches('stopping');
          claim!.answer.resolve();
          if (storeUp && !stopping) pending -= Math.min(pending, limit);
          break;
        }
        case 'reap.done':
        case 'reap.error':
          drainReap!.answer.resolve();
          break;
        case 'job.finished':
          if ((event as FinishEvent).outcome === 'released') {
            const release = releases.shift()!;
            release.answer.resolve();
            // Pending again: a claim that takes it now (one on its way while stopping) starts
            // nothing, and gives it back at once.
            for (const outcome of release.outcomes) handlers.delete(outcome.id);
            pending += release.outcomes.length;
          } else {
            // A job of this supervisor whose release is not waiting: its handler answers.
            const released = new Set(releases.flatMap((r) => r.outcomes.map((o) => o.id)));
            const job = (await runningRows()).find((row) => !released.has(row.id))!;
            handlers.get(job.id)!.resolve(null);
            finished.completed += 1;
          }
          break;
        default: {
          const timer = before.timers.find((t) => t.event.type === event.type)!;
          clock.increment(timer.dueAt - before.now);
        }
      }
      await settle();
      while (inFlight.size > 0) {
        await Promise.allSettled([...inFlight]);
        await settle();
      }
      await check(`step ${i} (${event.type})`, state);
    }
    expect(supervisor.actor.getSnapshot().status).toBe('done');
  } finally {
    for (const release of releases) release.answer.resolve();
    await base.close();
  }
}
