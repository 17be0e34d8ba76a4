/**
 * Replays one path of the supervisor model on a real supervisor actor whose runtime talks to
 * a real store, the way supervisor.ts does: claims and the reaper call the store; a claim
 * stays in flight until the store answers, even after the machine stopped waiting for it;
 * `supervisor.slotsFreed` follows every claim and every finished job. The store answers when
 * the path says so, or is down. After every step: the actor is where the model said, the
 * runtime holds what the model said, and the store's rows agree with the runtime.
 */
import { expect } from 'vitest';
import { createActor, type InspectionEvent } from 'xstate';
import type { JobStore } from '../../src/adapters/store.js';
import { type ClaimRound, supervisorMachine, type SupervisorRuntime } from '../../src/supervisor/supervisor-machine.js';
import type { ClaimedJob, Clock } from '../../src/types.js';
import { createTestClock, deferred, settle } from '../support/sim.js';
import { CONCURRENCY, type FinishEvent, MACHINE_INPUT, type ModelSnapshot, STORE_DOWN, type SupervisorPath } from './supervisor-model.js';

export type StoreFactory = (clock: Clock) => Promise<JobStore>;

const WORKER = 'w1';
const QUEUE = 'q';
/** Longer than any path: the reaper must never find this supervisor's own jobs expired. */
const LEASE_MS = 3_600_000;

export async function replaySupervisorPath(
  path: SupervisorPath,
  createStore: StoreFactory,
  inspect: (event: InspectionEvent) => void,
): Promise<void> {
  const clock = createTestClock();
  const store = await createStore(clock);
  let storeUp = true;
  const held: ClaimedJob[] = [];
  const releasing = new Set<string>();
  const finished = { completed: 0, released: 0 };
  let pending = 0;
  let claim: { limit: number; answer: ReturnType<typeof deferred<ClaimRound>> } | undefined;
  let drainReap: ReturnType<typeof deferred<number>> | undefined;
  let drained = 0;
  let stopped = false;
  /** As the real supervisor: it listens to the store's wake-ups from start() until stopped. */
  let subscribed = false;

  const runtime: SupervisorRuntime = {
    hasFreeSlots: () => held.length < CONCURRENCY,
    busy: () => held.length > 0 || claim !== undefined,
    claim: () => {
      claim = { limit: CONCURRENCY - held.length, answer: deferred<ClaimRound>() };
      return claim.answer.promise;
    },
    reap: () => {
      // A started supervisor's periodic pass is answered at once (see the model); a drain's
      // waits for the path.
      if (actor.getSnapshot().matches({ running: { reaper: 'reaping' } })) return reapNow();
      drainReap = deferred<number>();
      return drainReap.promise;
    },
    abortAll: () => held.forEach((job) => releasing.add(job.id)),
    claimFailed: () => {},
    reapFailed: () => {},
    drained: () => {
      drained += 1;
    },
    stopped: () => {
      stopped = true;
      subscribed = false;
    },
  };
  const actor = createActor(supervisorMachine, { clock, inspect, input: { ...MACHINE_INPUT, runtime } });

  /** Reaper passes the store has not answered yet: a step is over once they are. */
  const reaping = new Set<Promise<unknown>>();

  async function reapNow(): Promise<number> {
    if (!storeUp) throw STORE_DOWN;
    const pass = store.rescueExpiredJobs();
    reaping.add(pass);
    try {
      return (await pass).length;
    } finally {
      reaping.delete(pass);
    }
  }

  /** As the real claim: the store call, its jobs held, then slotsFreed, then the answer. */
  async function answerClaim(): Promise<void> {
    const { limit, answer } = claim!;
    let round: ClaimRound | undefined;
    let error: unknown;
    try {
      if (!storeUp) throw STORE_DOWN;
      const jobs = limit > 0 ? await store.claimJobs({ workerId: WORKER, leaseMs: LEASE_MS, queues: [{ queue: QUEUE, limit }] }) : [];
      held.push(...jobs);
      pending -= jobs.length;
      round = { claimed: jobs.length, full: limit > 0 && jobs.length >= limit };
    } catch (e) {
      error = e;
    }
    claim = undefined;
    queueMicrotask(() => actor.send({ type: 'supervisor.slotsFreed' }));
    if (round) answer.resolve(round);
    else answer.reject(error);
  }

  async function finishJob(outcome: FinishEvent['outcome']): Promise<void> {
    const job = held.find((j) => releasing.has(j.id) === (outcome === 'released'))!;
    const write =
      outcome === 'completed'
        ? { id: job.id, leaseToken: job.leaseToken, state: 'completed' as const, result: null }
        : {
            id: job.id, leaseToken: job.leaseToken, state: 'retrying' as const, runAt: new Date(clock.now()),
            error: { code: 'worker_shutdown', message: 'the worker stopped before the attempt finished' },
          };
    expect(await store.setStatesIfRunning({ outcomes: [write] }), `the ${outcome} write of job ${job.id}`).toEqual([true]);
    held.splice(held.indexOf(job), 1);
    releasing.delete(job.id);
    finished[outcome] += 1;
    actor.send({ type: 'supervisor.slotsFreed' });
  }

  const check = async (at: string, model: ModelSnapshot) => {
    const snapshot = actor.getSnapshot();
    expect(snapshot.value, `${at}: supervisor state`).toEqual(model.machine.value);
    const { world } = model;
    expect(
      { held: held.length, releasing: releasing.size, pending, claimLimit: claim?.limit ?? null, drained: drained > 0, stopped },
      `${at}: runtime`,
    ).toEqual({
      held: world.held, releasing: world.releasing, pending: world.pending, claimLimit: world.claim?.limit ?? null,
      drained: world.drained > 0, stopped: world.stopped,
    });
    // Past the grace period every job this supervisor holds has been told to abort.
    if (snapshot.matches({ stopping: 'aborting' })) expect(releasing.size, `${at}: jobs left running after the grace period`).toBe(held.length);
    const counts = Object.fromEntries((await store.countJobs()).map((c) => [c.state, c.count]));
    expect(counts, `${at}: rows by state`).toEqual(
      Object.fromEntries(
        Object.entries({ pending, running: held.length, completed: finished.completed, retrying: finished.released }).filter(([, n]) => n > 0),
      ),
    );
    for (const job of held) {
      expect(await store.getJob({ id: job.id }), `${at}: held job ${job.id}`).toMatchObject({ state: 'running', workerId: WORKER, leaseToken: job.leaseToken });
    }
  };

  try {
    actor.start();
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
          await store.enqueueJobs({ jobs: [{ queue: QUEUE, kind: 'k', payload: { step: i }, maxAttempts: 3 }] });
          pending += 1;
          if (subscribed) actor.send({ type: 'supervisor.wake' });
          break;
        case 'supervisor.start':
          subscribed = true;
          actor.send({ type: 'supervisor.start' });
          break;
        case 'xstate.done.actor.claim':
        case 'xstate.error.actor.claim':
          await answerClaim();
          break;
        case 'xstate.done.actor.reap':
        case 'xstate.error.actor.reap':
          reapNow().then(drainReap!.resolve, drainReap!.reject);
          break;
        case 'job.finished':
          await finishJob((event as FinishEvent).outcome);
          break;
        default:
          if (event.type.startsWith('xstate.after.')) {
            const timer = before.timers.find((t) => t.event.type === event.type)!;
            clock.increment(timer.dueAt - before.now);
          } else {
            actor.send(event as never);
          }
      }
      await settle(3);
      while (reaping.size > 0) {
        await Promise.allSettled([...reaping]);
        await settle(3);
      }
      await check(`step ${i} (${event.type})`, state);
    }
    expect(actor.getSnapshot().status).toBe('done');
  } finally {
    actor.stop();
    await store.close();
  }
}
