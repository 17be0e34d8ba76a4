import { describe, expect, it } from 'vitest';
import { createActor, type SimulatedClock, waitFor } from 'xstate';
import type { JobOutcome, Lease, SuspendAnswer, SuspendRequest } from '../../src/adapters/store.js';
import type { AttemptHandle } from '../../src/machines/attempt-handle.js';
import { SnoozeJobError } from '../../src/errors.js';
import { ContinueAfter } from '../../src/machines/continue-after.js';
import { jobMachine, type JobPorts } from '../../src/machines/job-machine.js';
import type { ClaimedJob } from '../../src/types.js';
import { advance, createTestClock, deferred, settle, testWakes } from '../support/sim.js';

/** A job actor with fake ports: the test decides what the handler and the store answer. */
function harness(
  options: {
    attempt?: number; maxAttempts?: number; deadlineMs?: number; hasHandler?: boolean; expiresInMs?: number; heartbeatMs?: number;
  } = {},
) {
  const clock = createTestClock();
  const handler = deferred<unknown>();
  const writes: JobOutcome[] = [];
  const renewals: Lease[] = [];
  let writeAnswer: () => Promise<boolean> = async () => true;
  let renewAnswer: () => Promise<boolean> = async () => true;
  const suspends: SuspendRequest[] = [];
  let suspendAnswer: () => Promise<SuspendAnswer> = async () => ({ answer: 'sleeping' });
  let signal: AbortSignal | undefined;
  let attempt: AttemptHandle | undefined;
  let slotsFreed = 0;
  const job: ClaimedJob = {
    id: '7', queue: 'q', kind: 'k', payload: {}, state: 'running', priority: 0, runAt: new Date(clock.now()),
    attempt: options.attempt ?? 1, maxAttempts: options.maxAttempts ?? 3, uniqueKey: null, concurrencyKey: null, workerId: 'w1',
    leaseToken: 'token-1', leaseExpiresAt: new Date(clock.now() + 3_000), result: null, error: null,
    createdAt: new Date(clock.now()), updatedAt: new Date(clock.now()), finishedAt: null,
    expiresAt: options.expiresInMs === undefined ? null : new Date(clock.now() + options.expiresInMs),
    cancelRequestedAt: null, progress: null, traceContext: null, steps: [], waitingForSignal: null, tenant: null, debounceKey: null,
  };
  const ports: JobPorts = {
    runHandler: (_job, abort) => { attempt = abort; signal = abort.signal; return handler.promise; },
    writeOutcome: (outcome) => { writes.push(outcome); return writeAnswer(); },
    renewLease: (lease) => { renewals.push(lease); return renewAnswer(); },
    suspend: (request) => { suspends.push(request); return suspendAnswer(); },
    freeSlot: () => { slotsFreed += 1; },
    ...testWakes(clock),
    now: () => clock.now(),
    backoffMs: (attempt) => attempt * 1_000,
  };
  const actor = createActor(jobMachine, {
    clock,
    input: {
      job, ports, hasHandler: options.hasHandler ?? true, waitForStart: true, leaseValidUntil: clock.now() + 3_000,
      expiresAtMs: job.expiresAt?.getTime() ?? null,
      policy: { leaseMs: 3_000, heartbeatMs: options.heartbeatMs ?? 1_000, deadlineMs: options.deadlineMs ?? 10_000, writeRetryMs: 500 },
    },
  }).start();
  return {
    clock: clock as SimulatedClock, actor, handler, writes, renewals, suspends,
    get signal() { return signal; },
    /** The handle the handler was given: its sleeps and waits. */
    get attempt() { return attempt!; },
    answerSuspends(fn: () => Promise<SuspendAnswer>) { suspendAnswer = fn; },
    get slotsFreed() { return slotsFreed; },
    answerWrites(fn: () => Promise<boolean>) { writeAnswer = fn; },
    answerRenewals(fn: () => Promise<boolean>) { renewAnswer = fn; },
    value: () => actor.getSnapshot().value,
    /** Resolves when the actor is final, whatever turns the writes take (no settle(n)). */
    done: () => waitFor(actor, (snapshot) => snapshot.status === 'done'),
  };
}

describe('job machine', () => {
  it('waits in claimed until started, then runs the handler', async () => {
    const h = harness();
    expect(h.value()).toBe('claimed');
    expect(h.signal).toBeUndefined();
    h.actor.send({ type: 'job.start' });
    expect(h.value()).toEqual({ running: 'working' });
    h.handler.resolve({ ok: 1 });
    await h.done();
    expect(h.writes).toEqual([{ id: '7', leaseToken: 'token-1', state: 'completed', result: { ok: 1 } }]);
    expect(h.value()).toBe('completed');
  });

  it('stays in its write state until the store answers, and retries a write that threw', async () => {
    const h = harness();
    let calls = 0;
    const answer = deferred<boolean>();
    h.answerWrites(() => (++calls === 1 ? Promise.reject(new Error('ECONNRESET')) : answer.promise));
    h.actor.send({ type: 'job.start' });
    expect(h.slotsFreed).toBe(0);
    h.handler.resolve('r');
    await waitFor(h.actor, (s) => s.matches({ completing: 'retryWait' }));
    expect(h.value()).toEqual({ completing: 'retryWait' });
    // The handler is over: its slot is free while the write is still pending.
    expect(h.slotsFreed).toBe(1);
    await advance(h.clock, 500);
    expect(calls).toBe(2);
    expect(h.value()).toEqual({ completing: 'waiting' });
    // A deadline that passes during the write changes nothing.
    await advance(h.clock, 10_000);
    expect(h.value()).toEqual({ completing: 'waiting' });
    answer.resolve(true);
    await h.done();
    expect(h.value()).toBe('completed');
  });

  it('ends lost, writing nothing more, when the store says the lease is not ours', async () => {
    const h = harness();
    h.answerWrites(async () => false);
    h.actor.send({ type: 'job.start' });
    h.handler.resolve('r');
    await h.done();
    expect(h.value()).toBe('lost');
    expect(h.writes).toHaveLength(1);
  });

  it('renews the lease every heartbeat and ends lost when a renewal is refused', async () => {
    const h = harness();
    h.actor.send({ type: 'job.start' });
    await advance(h.clock, 3_000, 500);
    expect(h.renewals).toHaveLength(3);
    expect(h.value()).toEqual({ running: 'working' });
    h.answerRenewals(async () => false);
    await advance(h.clock, 1_000, 500);
    expect(h.value()).toBe('lost');
    expect(h.signal?.aborted).toBe(true);
    expect(h.actor.getSnapshot().context.error).toMatchObject({ code: 'lease_lost' });
  });

  it('gives up a lease when it lapses, not at the next heartbeat, when renewals get no answer', async () => {
    // A heartbeat that does not divide the lease: renewals at 1,900 and 3,800 ms, the lease ends at 3,000.
    const h = harness({ heartbeatMs: 1_900 });
    h.answerRenewals(() => new Promise(() => {}));
    h.actor.send({ type: 'job.start' });
    await advance(h.clock, 2_999, 100);
    expect(h.actor.getSnapshot().matches('running')).toBe(true);
    expect(h.renewals).toHaveLength(1);
    await advance(h.clock, 1);
    expect(h.actor.getSnapshot().value).toBe('lost');
    expect(h.signal?.aborted).toBe(true);
    expect(h.writes).toEqual([]);
  });

  it('keeps a lease a renewal pushed on, and renews on its heartbeat', async () => {
    const h = harness({ heartbeatMs: 1_900 });
    h.actor.send({ type: 'job.start' });
    // Up to just before the 10 s deadline: renewals at 1.9, 3.8, 5.7, 7.6 and 9.5 s.
    await advance(h.clock, 9_900, 100);
    expect(h.actor.getSnapshot().matches('running')).toBe(true);
    // One renewal per heartbeat, however often the lease's old end woke the actor.
    expect(h.renewals).toHaveLength(5);
  });

  it('fails the attempt at the deadline with backoff, or goes dead on the last attempt', async () => {
    const retry = harness({ deadlineMs: 2_000 });
    retry.actor.send({ type: 'job.start' });
    await advance(retry.clock, 2_000, 500);
    expect(retry.signal?.aborted).toBe(true);
    expect(retry.writes[0]).toMatchObject({ state: 'retrying', error: { code: 'deadline_exceeded' } });
    expect(retry.writes[0]).toMatchObject({ delayMs: 1_000 });

    const last = harness({ deadlineMs: 2_000, attempt: 3, maxAttempts: 3 });
    last.actor.send({ type: 'job.start' });
    await advance(last.clock, 2_000, 500);
    expect(last.writes[0]).toMatchObject({ state: 'dead', error: { code: 'deadline_exceeded' } });
    // A late result changes nothing. Nothing to wait for: settle() gives it the turns it
    // would take to do harm.
    last.handler.resolve('late');
    await settle();
    expect(last.writes).toHaveLength(1);
    expect(last.value()).toBe('dead');
  });

  it('skips a job that has no handler without running anything', async () => {
    const h = harness({ hasHandler: false });
    h.actor.send({ type: 'job.start' });
    await h.done();
    expect(h.signal).toBeUndefined();
    expect(h.writes[0]).toMatchObject({ state: 'skipped', error: { code: 'unknown_kind' } });
    expect(h.value()).toBe('skipped');
  });

  it('cancels and releases: abort the handler and write the outcome', async () => {
    const cancelled = harness();
    cancelled.actor.send({ type: 'job.start' });
    cancelled.actor.send({ type: 'job.cancel' });
    await cancelled.done();
    expect(cancelled.signal?.aborted).toBe(true);
    expect(cancelled.value()).toBe('cancelled');

    const released = harness();
    released.actor.send({ type: 'job.start' });
    released.actor.send({ type: 'job.abort' });
    await released.done();
    expect(released.writes[0]).toMatchObject({ state: 'released', error: { code: 'worker_shutdown' } });
    expect(released.value()).toBe('retrying');
  });
});

describe('job machine: claimed ahead of a free slot', () => {
  it('renews its lease while it waits, and starts on job.start', async () => {
    const h = harness();
    await advance(h.clock, 3_000, 500);
    expect(h.value()).toBe('claimed');
    expect(h.renewals).toHaveLength(3);
    h.actor.send({ type: 'job.start' });
    expect(h.value()).toEqual({ running: 'working' });
  });

  it('is cancelled before it runs: the handler never starts, its place is freed', async () => {
    const h = harness();
    h.actor.send({ type: 'job.cancel' });
    await h.done();
    expect(h.signal).toBeUndefined();
    expect(h.slotsFreed).toBe(1);
    expect(h.writes).toMatchObject([{ state: 'cancelled', error: { code: 'cancelled' } }]);
    expect(h.value()).toBe('cancelled');
  });

  it('ends lost, and frees its place, when its lease is refused while it waits', async () => {
    const h = harness();
    h.answerRenewals(async () => false);
    await advance(h.clock, 1_000, 500);
    expect(h.value()).toBe('lost');
    expect(h.slotsFreed).toBe(1);
    expect(h.signal).toBeUndefined();
  });
});

describe('job machine: snooze', () => {
  it('writes a snooze for the delay, no stack, and ends snoozed', async () => {
    const h = harness({ maxAttempts: 1 });
    h.actor.send({ type: 'job.start' });
    h.handler.reject(new SnoozeJobError(5_000));
    await h.done();
    expect(h.writes).toEqual([
      {
        id: '7', leaseToken: 'token-1', state: 'snoozed', delayMs: 5_000,
        error: { code: 'snoozed', message: 'snoozed for 5000 ms', name: 'SnoozeJobError' },
      },
    ]);
    expect(h.value()).toBe('snoozed');
  });

  it('refuses a delay that is not a number of ms from 0 to a hundred years', () => {
    for (const bad of [-1, Number.NaN, Infinity, 1e13]) expect(() => new SnoozeJobError(bad)).toThrow(/snooze delayMs/);
    expect(new SnoozeJobError(0).delayMs).toBe(0);
  });
});

describe('job machine: expiresAt, the deadline across all attempts', () => {
  it('a job claimed past it never runs: dead with code expired, its place freed', async () => {
    const h = harness({ expiresInMs: 0 });
    await h.done();
    expect(h.signal).toBeUndefined();
    expect(h.slotsFreed).toBe(1);
    expect(h.writes).toEqual([
      { id: '7', leaseToken: 'token-1', state: 'dead', error: { code: 'expired', message: expect.stringContaining('JobExpired'), name: 'JobExpired' } },
    ]);
    expect(h.value()).toBe('dead');
  });

  it('job.expire aborts a running attempt and writes dead, whatever attempts remain', async () => {
    const h = harness({ maxAttempts: 5, expiresInMs: 1_000 });
    h.actor.send({ type: 'job.start' });
    h.actor.send({ type: 'job.expire' });
    expect(h.signal?.aborted).toBe(true);
    await h.done();
    expect(h.writes).toMatchObject([{ state: 'dead', error: { code: 'expired' } }]);
    expect(h.value()).toBe('dead');
  });

  it('job.expire ends a job waiting for a slot before it runs', async () => {
    const h = harness({ expiresInMs: 1_000 });
    h.actor.send({ type: 'job.expire' });
    await h.done();
    expect(h.signal).toBeUndefined();
    expect(h.slotsFreed).toBe(1);
    expect(h.writes).toMatchObject([{ state: 'dead', error: { code: 'expired' } }]);
  });

  it('past it, a failure is dead with its own error, whatever attempts remain', async () => {
    const h = harness({ maxAttempts: 5, expiresInMs: 1_000 });
    h.actor.send({ type: 'job.start' });
    h.clock.increment(1_000);
    h.handler.reject(new Error('upstream 503'));
    await h.done();
    expect(h.writes).toMatchObject([{ state: 'dead', error: { code: 'handler_error', message: 'upstream 503' } }]);
  });

  it('before it, a failure with attempts left retries as usual', async () => {
    const h = harness({ maxAttempts: 5, expiresInMs: 1_000 });
    h.actor.send({ type: 'job.start' });
    h.clock.increment(999);
    h.handler.reject(new Error('upstream 503'));
    await h.done();
    expect(h.writes).toMatchObject([{ state: 'retrying', error: { code: 'handler_error' } }]);
  });
});

describe('job machine: outcomes that cannot be written', () => {
  it('a result the store cannot hold fails the attempt as invalid_result, retried while attempts are left', async () => {
    const retry = harness();
    retry.actor.send({ type: 'job.start' });
    retry.handler.resolve({ big: 10n });
    await retry.done();
    expect(retry.writes).toEqual([
      expect.objectContaining({ state: 'retrying', delayMs: 1_000, error: expect.objectContaining({ code: 'invalid_result', name: 'InvalidResultError' }) }),
    ]);
    expect(retry.actor.getSnapshot().context.error!.message).toMatch(/result/);

    const last = harness({ attempt: 3, maxAttempts: 3 });
    last.actor.send({ type: 'job.start' });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    last.handler.resolve(cyclic);
    await last.done();
    expect(last.writes).toEqual([expect.objectContaining({ state: 'dead', error: expect.objectContaining({ code: 'invalid_result' }) })]);
    expect(last.value()).toBe('dead');
  });

  it('writes a result as it was when the handler returned, and no result as null, falsy values kept', async () => {
    const changed = harness();
    changed.actor.send({ type: 'job.start' });
    const result = { n: 1 };
    changed.handler.resolve(result);
    await waitFor(changed.actor, (s) => s.matches('completing'));
    result.n = 2;
    await changed.done();
    expect(changed.writes[0]).toMatchObject({ state: 'completed', result: { n: 1 } });

    for (const [returned, written] of [[undefined, null], [0, 0], ['', ''], [false, false]] as const) {
      const h = harness();
      h.actor.send({ type: 'job.start' });
      h.handler.resolve(returned);
      await h.done();
      expect(h.writes).toEqual([{ id: '7', leaseToken: 'token-1', state: 'completed', result: written }]);
    }
  });

  it('a write the store refuses for good ends lost as write_refused, tried once, its slot freed', async () => {
    for (const refusal of [Object.assign(new Error('value too long'), { code: '22001' }), Object.assign(new Error('check violation'), { code: '23514' })]) {
      const h = harness();
      h.answerWrites(() => Promise.reject(refusal));
      h.actor.send({ type: 'job.start' });
      h.handler.resolve('r');
      await h.done();
      expect(h.value()).toBe('lost');
      expect(h.writes).toHaveLength(1);
      expect(h.slotsFreed).toBe(1);
      const { error } = h.actor.getSnapshot().context;
      expect(error).toMatchObject({ code: 'write_refused', name: 'Error' });
      expect(error!.message).toBe('job 7 attempt 1: the store refused its outcome for good; the reaper gives the row back when its lease ends');
      // Nothing more is tried later either.
      await advance(h.clock, 5_000, 500);
      expect(h.writes).toHaveLength(1);
    }
  });

  it('a write that keeps throwing is tried every writeRetryMs until the lease lapses by our clock, then ends lost', async () => {
    const h = harness();
    h.answerWrites(() => Promise.reject(new Error('ECONNRESET')));
    h.actor.send({ type: 'job.start' });
    h.handler.resolve('r');
    await waitFor(h.actor, (s) => s.matches({ completing: 'retryWait' }));
    // The lease runs to 3,000 ms: writes at 0, 500 … 2,500; at 3,000 it has lapsed.
    await advance(h.clock, 2_999, 100);
    expect(h.writes).toHaveLength(6);
    expect(h.actor.getSnapshot().matches('completing')).toBe(true);
    await advance(h.clock, 1);
    expect(h.value()).toBe('lost');
    expect(h.writes).toHaveLength(6);
    expect(h.actor.getSnapshot().context.error).toEqual({
      code: 'lease_lost',
      message: 'job 7 attempt 1: its outcome could not be written before its lease ended; the reaper gives the row back',
    });
  });
});

describe('job machine: continue after children', () => {
  it('a handler that returns continueAfter writes waiting with its children, spends no attempt, frees its slot', async () => {
    const h = harness();
    h.actor.send({ type: 'job.start' });
    const children = [{ queue: 'q', kind: 'k', payload: { n: 1 }, key: 'a', onFailure: 'cancel' }] as unknown as ContinueAfter['children'];
    h.handler.resolve(new ContinueAfter(children));
    await h.done();
    expect(h.writes).toEqual([{ id: '7', leaseToken: 'token-1', state: 'waiting', children }]);
    expect(h.value()).toBe('waiting');
    expect(h.slotsFreed).toBe(1);
    expect(h.actor.getSnapshot().context.error).toBeNull();
  });
});

describe('job machine: sleeps and signal waits (docs/durable-jobs.md)', () => {
  const sleep = { kind: 'sleep', name: 'nap', wake: { delayMs: 60_000 } } as const;

  it('a sleep the store took ends the actor `sleeping`: slot freed, handler aborted, no outcome written', async () => {
    const h = harness();
    h.actor.send({ type: 'job.start' });
    const asked = h.attempt.suspend(sleep);
    expect(h.value()).toEqual({ running: 'suspending' });
    expect(h.suspends).toEqual([{ id: '7', leaseToken: 'token-1', ...sleep }]);
    await h.done();
    expect(h.value()).toBe('sleeping');
    expect(h.writes).toEqual([]);
    expect(h.slotsFreed).toBe(1);
    expect(h.signal!.aborted).toBe(true);
    // The handler's sleep never settles: its code after the sleep runs in the next run only.
    let settled = false;
    void asked.then(() => (settled = true), () => (settled = true));
    await settle();
    expect(settled).toBe(false);
  });

  it('a signal found in the mailbox answers the handler, which runs on under its lease to completion', async () => {
    const h = harness();
    h.answerSuspends(async () => ({ answer: 'received', payload: { ok: true } }));
    h.actor.send({ type: 'job.start' });
    const answer = await h.attempt.suspend({ kind: 'signal', name: 'go', signal: 'go', wake: { delayMs: 5_000 } });
    expect(answer).toEqual({ answer: 'received', payload: { ok: true } });
    expect(h.value()).toEqual({ running: 'working' });
    h.handler.resolve('done');
    await h.done();
    expect(h.writes).toEqual([{ id: '7', leaseToken: 'token-1', state: 'completed', result: 'done' }]);
  });

  it('the heartbeat goes on after a wait that timed out at once', async () => {
    const h = harness();
    h.answerSuspends(async () => ({ answer: 'timedOut' }));
    h.actor.send({ type: 'job.start' });
    expect(await h.attempt.suspend({ kind: 'signal', name: 'go', signal: 'go', wake: { delayMs: 0 } })).toEqual({ answer: 'timedOut' });
    await advance(h.clock, 1_000);
    expect(h.renewals).toHaveLength(1);
  });

  it('a store that threw makes the handler\'s call throw; the attempt goes on and fails as the handler decides', async () => {
    const h = harness();
    h.answerSuspends(async () => { throw new Error('ECONNRESET'); });
    h.actor.send({ type: 'job.start' });
    await expect(h.attempt.suspend(sleep)).rejects.toThrow('ECONNRESET');
    expect(h.value()).toEqual({ running: 'working' });
    h.handler.reject(new Error('ECONNRESET'));
    await h.done();
    expect(h.writes[0]).toMatchObject({ state: 'retrying' });
  });

  it.each([
    ['cancelled', 'cancelled'],
    ['lost', 'lost'],
  ] as const)('a suspend answered %s ends the actor %s without a write', async (answer, final) => {
    const h = harness();
    h.answerSuspends(async () => ({ answer }));
    h.actor.send({ type: 'job.start' });
    void h.attempt.suspend(sleep);
    await h.done();
    expect(h.value()).toBe(final);
    expect(h.writes).toEqual([]);
    expect(h.signal!.aborted).toBe(true);
  });

  it('a second sleep while one is on its way is refused; a sleep after the attempt ended too', async () => {
    const h = harness();
    const answer = deferred<SuspendAnswer>();
    h.answerSuspends(() => answer.promise);
    h.actor.send({ type: 'job.start' });
    void h.attempt.suspend(sleep);
    await expect(h.attempt.suspend(sleep)).rejects.toThrow(/another sleep or wait/);
    answer.resolve({ answer: 'sleeping' });
    await h.done();
    await expect(h.attempt.suspend(sleep)).rejects.toThrow(/the attempt has ended/);
  });

  it('the deadline passing while a sleep is on its way writes its outcome, fenced (a sleep that landed makes it lost)', async () => {
    const h = harness({ deadlineMs: 2_000 });
    const answer = deferred<SuspendAnswer>();
    h.answerSuspends(() => answer.promise);
    h.answerWrites(async () => false);
    h.actor.send({ type: 'job.start' });
    void h.attempt.suspend(sleep);
    await advance(h.clock, 2_000);
    answer.resolve({ answer: 'sleeping' });
    await h.done();
    expect(h.writes[0]).toMatchObject({ state: 'retrying', error: { code: 'deadline_exceeded' } });
    expect(h.value()).toBe('lost');
  });
});

