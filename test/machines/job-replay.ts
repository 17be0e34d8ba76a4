/**
 * Replays one enumerated path of the job model on a real job actor whose ports talk to a real
 * store, and checks after every step that the actor is where the model said, that the stored
 * row agrees with the actor (state, attempt, lease) and that the stored history is exactly the
 * one the path implies.
 *
 * The store answers a renewal or a write when the path says so: the request is held in the
 * port, then sent to the store at that step. "Not applied" is made true first (the worker's
 * clock stands still while the store's moves past the lease; the reaper rescues the row and
 * another worker claims it), so the store itself refuses.
 *
 * A pause (or a claim answered late) moves the wall clock, which `now()` and the store read,
 * ahead of the simulated clock that drives the actor's timers: nothing fires until the next
 * step, and a timer step first lets the timers catch up.
 */
import { ContinueAfter } from '../../src/machines/continue-after.js';
import { expect } from 'vitest';
import { createActor, type InspectionEvent } from 'xstate';
import type { JobOutcome, JobStore, Lease, SuspendAnswer, SuspendRequest } from '../../src/adapters/store.js';
import type { AttemptHandle } from '../../src/machines/attempt-handle.js';
import { jobMachine, type JobPorts } from '../../src/machines/job-machine.js';
import type { ClaimedJob, Clock, JobRecord } from '../../src/types.js';
import { createTestClock, deferred, settle, testWakes } from '../support/sim.js';
import {
  serializeEvent, type HistoryRow, IGNORED, isTimerEvent, SIGNAL_WAIT, type JobModelConfig, type JobPath, type JobSnapshot, type ModelSnapshot, policyOf, THIEF, TIMING,
  WORKER, type World,
} from './job-model.js';

export type StoreFactory = (clock: Clock) => Promise<JobStore>;

/** Each replay works in a queue of its own, so a shared database needs no cleaning between. */
let replays = 0;

interface InFlight<T, A = boolean> {
  request: T;
  answer: ReturnType<typeof deferred<A>>;
}

export async function replayJobPath(
  path: JobPath,
  config: JobModelConfig,
  createStore: StoreFactory,
  inspect: (event: InspectionEvent) => void,
): Promise<void> {
  const clock = createTestClock();
  const start = clock.now();
  let skew = 0;
  /** The store's now when it was last asked to write an outcome. */
  let writtenAt: number | undefined;
  let wallAhead = 0;
  const wallNow = () => clock.now() + wallAhead;
  const store = await createStore({ now: () => wallNow() + skew });
  const queue = `paths-${++replays}`;
  try {
    const expiresAt = config.expiresAtMs === undefined ? null : new Date(start + config.expiresAtMs);
    // A job must expire after it is due (every store refuses otherwise), so the one claimed
    // past its expiresAt was due a moment before.
    const runAt = expiresAt !== null && expiresAt.getTime() <= start ? new Date(expiresAt.getTime() - 1) : undefined;
    await store.enqueueJobs({ jobs: [{ queue, kind: 'k', payload: { placeId: 'p1' }, maxAttempts: config.maxAttempts, runAt, expiresAt }] });
    const [job] = await store.claimJobs({ workerId: WORKER, leaseMs: TIMING.leaseMs, queues: [{ queue, limit: 1 }] });
    // A claim answered late: the actor starts that much later by the wall clock.
    wallAhead = config.answeredAfterMs ?? 0;
    if (!job) throw new Error('the store claimed nothing');

    const handler = deferred<unknown>();
    const inFlight: { renewal?: InFlight<Lease>; write?: InFlight<JobOutcome>; suspend?: InFlight<SuspendRequest, SuspendAnswer> } = {};
    /** What the handler was given: its sleeps and waits go through it. */
    let attempt: AttemptHandle | undefined;
    let slotsFreed = 0;
    /** Every port call, to show an ignored event set nothing off. */
    let portCalls = 0;
    const ports: JobPorts = {
      runHandler: (_job, handle) => {
        portCalls += 1;
        attempt = handle;
        return handler.promise;
      },
      suspend: (request) => {
        portCalls += 1;
        inFlight.suspend = { request, answer: deferred<SuspendAnswer>() };
        return inFlight.suspend.answer.promise;
      },
      renewLease: (lease) => {
        portCalls += 1;
        inFlight.renewal = { request: lease, answer: deferred<boolean>() };
        return inFlight.renewal.answer.promise;
      },
      writeOutcome: (outcome) => {
        portCalls += 1;
        inFlight.write = { request: outcome, answer: deferred<boolean>() };
        return inFlight.write.answer.promise;
      },
      freeSlot: () => {
        slotsFreed += 1;
      },
      // The supervisor's timer, on this replay's clock: it sends the timer events the model's
      // paths take when the clock reaches them.
      ...testWakes(clock, wallNow),
      now: wallNow,
      backoffMs: () => TIMING.backoffMs,
    };
    const actor = createActor(jobMachine, {
      clock,
      inspect,
      input: {
        job, ports, policy: policyOf(config), hasHandler: config.hasHandler, waitForStart: config.waitForStart, leaseValidUntil: start + TIMING.leaseMs,
        // One clock for the store and the actor here: the claim's conversion is the identity.
        expiresAtMs: job.expiresAt?.getTime() ?? null,
      },
    }).start();

    /** The reaper's catch in this replay's queue (a shared database holds other replays' rows). */
    const rescuedHere = async () => (await store.rescueExpiredJobs()).filter((j) => j.queue === queue).map((j) => j.id);

    /** The worker is paused past its lease: the reaper rescues the row, another worker takes it. */
    const steal = async () => {
      const row = await store.getJob({ id: job.id });
      skew = row!.leaseExpiresAt!.getTime() - wallNow() + 1;
      expect(await rescuedHere()).toEqual([job.id]);
      if (config.maxAttempts > 1) {
        const taken = await store.claimJobs({ workerId: THIEF, leaseMs: TIMING.leaseMs, queues: [{ queue, limit: 1 }] });
        expect(taken.map((j) => j.id)).toEqual([job.id]);
      }
    };

    // Only the store calls below change the row, so it is read again only after them; the
    // actor is checked against it after every step.
    const read = async () => ({
      row: (await store.getJob({ id: job.id }))!,
      history: (await store.getJobEvents({ id: job.id })).map(
        (e): HistoryRow => [e.fromState, e.toState, e.attempt, e.workerId, e.error?.code ?? null],
      ),
    });
    let stored = await read();

    const check = (at: string, model: ModelSnapshot) => {
      const snapshot = actor.getSnapshot();
      expect(snapshot.value, `${at}: actor state`).toEqual(model.machine.value);
      if (snapshot.matches('claimed') || snapshot.matches('running')) {
        const lease = snapshot.context.leaseValidUntil - wallNow();
        expect(lease, `${at}: lease left by the actor's clock`).toBe(model.machine.context.leaseValidUntil - model.world.now);
      }
      // The handler's slot is given back once, as soon as the handler is over (or never ran).
      const handlerDone = !snapshot.matches('claimed') && !snapshot.matches('running');
      expect(slotsFreed, `${at}: slot given back`).toBe(handlerDone ? 1 : 0);
      expect(stored.history, `${at}: stored history`).toEqual(model.world.history);
      expectRowMatchesActor(at, stored.row, job, snapshot, wallNow() + skew, writtenAt, model.world);
    };

    /** Sends every event this state must ignore (IGNORED), checking that none changes the
     *  actor or sets anything off. */
    const sendIgnored = (at: string) => {
      const before = actor.getSnapshot();
      const top = typeof before.value === 'string' ? before.value : Object.keys(before.value)[0]!;
      const calls = [portCalls, slotsFreed];
      for (const event of IGNORED[top as keyof typeof IGNORED] ?? []) {
        actor.send(event);
        const after = actor.getSnapshot();
        const what = `${at}: ${serializeEvent(event)} in ${top}, to be ignored`;
        expect(after.value, `${what}: state`).toEqual(before.value);
        expect(after.context, `${what}: context`).toBe(before.context);
        expect([portCalls, slotsFreed], `${what}: ports called`).toEqual(calls);
      }
    };

    check('after the claim', path.steps[0]!.state);
    for (const [i, { event, state }] of path.steps.entries()) {
      if (i === 0) continue;
      sendIgnored(`before step ${i}`);
      const before = path.steps[i - 1]!.state.world;
      const touchesStore = event.type === 'lease.renewed' || event.type === 'write.done' || event.type === 'suspend.done';
      switch (event.type) {
        case 'handler.resolved':
          handler.resolve(event.result);
          break;
        case 'handler.rejected':
          handler.reject(event.error);
          break;
        case 'handler.continue':
          handler.resolve(new ContinueAfter(event.children));
          break;
        case 'handler.late':
          // Any answer: the actor judges it late by the clock and sends `handler.late` itself.
          handler.resolve({ photos: 20 });
          break;
        case 'process.busy':
          // The handler holds the loop: the wall clock moves, no timer fires.
          wallAhead += state.world.now - before.now;
          break;
        case 'lease.renewed': {
          const sent = inFlight.renewal!;
          if (!event.applied) await steal();
          const [answer] = await store.renewLeases({ leases: [sent.request], leaseMs: TIMING.leaseMs });
          const applied = answer !== 'lost';
          expect(applied, `step ${i}: the store's answer to the renewal`).toBe(event.applied);
          sent.answer.resolve(applied);
          break;
        }
        case 'write.done': {
          const sent = inFlight.write!;
          // A row that slept or ended under the actor refuses by itself.
          if (!event.applied && !before.landed) await steal();
          writtenAt = wallNow() + skew;
          const [applied] = await store.setStatesIfRunning({ outcomes: [sent.request] });
          expect(applied, `step ${i}: the store's answer to the ${sent.request.state} write`).toBe(event.applied);
          sent.answer.resolve(applied!);
          break;
        }
        case 'handler.suspend':
          // The handler's own call, as `job.waitForSignal` makes it.
          void attempt!.suspend(event.request).catch(() => {});
          break;
        case 'suspend.done': {
          const sent = inFlight.suspend!;
          // What makes the store answer as the path says: a signal already in the mailbox, a
          // cancel requested, the row stolen; none for a wait that sleeps.
          const wanted = event.answer.answer;
          if (wanted === 'received') expect(await store.sendSignal({ id: job.id, name: SIGNAL_WAIT.signal, payload: { ok: true } })).toEqual({ delivered: 'queued', state: 'running' });
          if (wanted === 'cancelled') expect(await store.cancelJob({ id: job.id })).toMatchObject({ cancelled: false });
          if (wanted === 'lost') await steal();
          writtenAt = wallNow() + skew;
          const answer = await store.suspendIfRunning(sent.request);
          expect(answer, `step ${i}: the store's answer to the wait`).toEqual(event.answer);
          sent.answer.resolve(answer);
          break;
        }
        case 'suspend.failed':
          inFlight.suspend!.answer.reject(event.error);
          break;
        case 'lease.renewFailed':
          inFlight.renewal!.answer.reject(event.error);
          break;
        case 'write.failed':
          inFlight.write!.answer.reject(event.error);
          break;
        case 'process.paused':
          // As the model: to just past the lease (its steps keep time relative to now only).
          wallAhead += actor.getSnapshot().context.leaseValidUntil + 1 - wallNow();
          break;
        default:
          if (isTimerEvent(event)) {
            const timer = before.timers.find((t) => t.event.type === event.type)!;
            // After a pause at most one timer is set (claimed's heartbeat, or a write's retry).
            clock.increment(wallAhead);
            wallAhead = 0;
            clock.increment(Math.max(0, timer.dueAt - before.now));
            // The supervisor's expiry timer, not the actor's: sent as it would send it.
            if (event.type === 'job.expire') actor.send({ type: 'job.expire' });
          } else {
            actor.send(event as never);
          }
      }
      await settle(2);
      if (touchesStore) stored = await read();
      check(`step ${i} (${event.type})`, state);
    }
    expect(actor.getSnapshot().status).toBe('done');
    if (actor.getSnapshot().value === 'lost' && !path.state.world.stolen && !path.state.world.landed) {
      // Lost by a lapsed lease, or by a write the store refused for good: the row is still
      // ours, and the reaper takes it once the lease has ended (the actor gives up at the
      // lease's last instant; the store sees it ended just after).
      skew = Math.max(skew, actor.getSnapshot().context.leaseValidUntil - wallNow() + 1);
      expect(await rescuedHere()).toEqual([job.id]);
    }
  } finally {
    await store.close();
  }
}

function expectRowMatchesActor(
  at: string,
  row: JobRecord,
  job: ClaimedJob,
  snapshot: JobSnapshot,
  storeNow: number,
  writtenAt: number | undefined,
  { stolen, writeRefused, decided, landed }: World,
): void {
  const { value, status, context } = snapshot;
  if (landed && (status === 'active' || value === 'lost')) {
    // The wait landed after the actor stopped waiting for it: the row is the store's answer,
    // and whatever the actor still writes is refused.
    expect(row, `${at}: a row that slept or ended under the actor`).toMatchObject({ state: landed.to, leaseToken: null, leaseExpiresAt: null });
  } else if (status === 'active') {
    // Claimed, running or writing: the row is running under this attempt's lease, and the
    // actor's idea of its lease is exactly the row's.
    expect(row, `${at}: row`).toMatchObject({ state: 'running', attempt: job.attempt, workerId: WORKER, leaseToken: job.leaseToken });
    expect(row.leaseExpiresAt!.getTime(), `${at}: row lease expiry`).toBe(context.leaseValidUntil);
  } else if (value === 'lost') {
    if (stolen) {
      expect(row.leaseToken, `${at}: a lost actor's row is someone else's`).not.toBe(job.leaseToken);
    } else if (writeRefused) {
      // Given up without waiting for the lease: the row is still ours, as the lease left it.
      expect(row, `${at}: a row whose write was refused`).toMatchObject({ state: 'running', leaseToken: job.leaseToken });
      expect(row.leaseExpiresAt!.getTime(), `${at}: its lease`).toBe(context.leaseValidUntil);
    } else {
      expect(row, `${at}: a lapsed row`).toMatchObject({ state: 'running', leaseToken: job.leaseToken });
      // Given up at the lease's last instant at the latest: before anyone else may take it.
      expect(row.leaseExpiresAt!.getTime(), `${at}: a lapsed lease`).toBeLessThanOrEqual(storeNow);
    }
  } else {
    // The model's decision (job-model.ts `decide`), not the actor's outcome: state, code and
    // the allowance are what the README promises for the events of the path.
    const expected = decided!;
    expect(row, `${at}: final row`).toMatchObject({ state: expected.to, attempt: job.attempt, leaseToken: null, leaseExpiresAt: null });
    if (expected.to === 'completed') expect(row.result, `${at}: result`).toEqual(expected.result);
    // A sleep's code is its history row's; the row itself keeps no error.
    else expect(row.error?.code ?? null, `${at}: error code`).toBe(expected.to === 'sleeping' ? null : expected.code);
    // A retry waits the backoff, a snooze its delay, a release nothing: after the store's now
    // when it wrote the outcome.
    const released = expected.code === 'worker_shutdown';
    if (expected.to === 'retrying' || expected.to === 'pending') {
      expect(row.runAt.getTime(), `${at}: runAt`).toBe(writtenAt! + (released ? 0 : TIMING.backoffMs));
    }
    // A sleep waits for its signal until its timeout, after the store's now when it wrote it.
    if (expected.to === 'sleeping') {
      expect(row.runAt.getTime(), `${at}: runAt`).toBe(writtenAt! + SIGNAL_WAIT.wake.delayMs);
      expect(row.waitingForSignal, `${at}: the signal it waits for`).toBe(SIGNAL_WAIT.signal);
    }
    // A snooze, a release, a wait for children or a sleep spends no attempt: one more is allowed.
    const spends = expected.to !== 'pending' && expected.to !== 'waiting' && expected.to !== 'sleeping' && !released;
    expect(row.maxAttempts, `${at}: maxAttempts`).toBe(job.maxAttempts + (spends ? 0 : 1));
  }
}
