/**
 * Conformance for durable jobs (docs/durable-jobs.md): a step's checkpoint fenced by the lease,
 * a sleep or signal wait that gives the lease and the slot back without spending an attempt,
 * and signals: woken at once when awaited, kept in the job's mailbox (oldest first, one taken
 * per wait) when not, refused with a typed error for an ended or unknown job or bad input.
 * Part of describeStoreConformance (conformance.ts), which calls it inside its own describe
 * with a getter for the test's store and clock.
 */
import { describe, expect, it, vi } from 'vitest';
import { NEVER } from '../../src/adapters/store.js';
import type { Lease, SuspendRequest } from '../../src/adapters/store.js';
import { InvalidOptionError, InvalidPayloadError, JobEndedError, JobNotFoundError } from '../../src/errors.js';
import type { ClaimedJob } from '../../src/types.js';
import {
  conformanceKit,
  type CurrentStore,
  FINAL_OUTCOMES,
  lease,
  LEASE_MS,
  step,
  type StoreConformanceFactory,
  T0,
  UNKNOWN_ID,
  WRONG_TOKEN,
} from './conformance.js';

const HOUR = 3_600_000;

export function describeDurableConformance(current: CurrentStore, factory: Pick<StoreConformanceFactory, 'inTransaction'>): void {
  const { store, clock, enqueue, claim, claimOne, getJob, history, outcome, setState, jobIn } = conformanceKit(current);

  const sleep = (of: Lease, name: string, wake: SuspendRequest['wake']) => store().suspendIfRunning({ ...of, kind: 'sleep', name, wake });
  const wait = (of: Lease, signal: string, wake: SuspendRequest['wake'] = { at: NEVER }, name = signal) =>
    store().suspendIfRunning({ ...of, kind: 'signal', name, signal, wake });
  const signal = (id: string, name: string, payload: unknown = {}) => store().sendSignal({ id, name, payload });

  /** A job claimed by w1 that then waits for `name` until `wake`: sleeping. */
  async function waiting(name: string, wake: SuspendRequest['wake'] = { at: NEVER }): Promise<ClaimedJob> {
    await enqueue();
    const claimed = await claimOne();
    expect(await wait(lease(claimed), name, wake)).toEqual({ answer: 'sleeping' });
    return claimed;
  }

  describe('durable jobs: checkpointSteps', () => {
    it('stores steps in order under the lease; the next claim reads them back on the job', async () => {
      await enqueue();
      const claimed = await claimOne();
      expect(await store().checkpointSteps({ steps: [{ ...lease(claimed), name: 'charge', result: { chargeId: 'ch_1' } }] })).toEqual([true]);
      clock().advance(10);
      expect(await store().checkpointSteps({ steps: [{ ...lease(claimed), name: 'charge#2', result: [1, 'two', null] }] })).toEqual([true]);
      const steps = [
        { kind: 'step', name: 'charge', at: new Date(T0), result: { chargeId: 'ch_1' } },
        { kind: 'step', name: 'charge#2', at: new Date(T0 + 10), result: [1, 'two', null] },
      ];
      expect(await getJob(claimed.id)).toMatchObject({ state: 'running', steps });
      expect(await setState(outcome('retrying', lease(claimed), 0))).toBe(true);
      const again = await claimOne();
      expect(again).toMatchObject({ id: claimed.id, attempt: 2, steps });
    });

    it('writes nothing without the current lease: a wrong token, a rescued lease, a zombie, an ended attempt', async () => {
      await enqueue();
      const zombie = await claimOne('q', 'w1');
      const refused = async (of: Lease) => {
        const row = await getJob(of.id);
        expect(await store().checkpointSteps({ steps: [{ ...of, name: 'late', result: 1 }] })).toEqual([false]);
        expect(await getJob(of.id)).toEqual(row);
      };
      await refused({ id: zombie.id, leaseToken: WRONG_TOKEN });
      expect(await store().checkpointSteps({ steps: [{ id: UNKNOWN_ID, leaseToken: zombie.leaseToken, name: 'late', result: 1 }] })).toEqual([false]);
      clock().advance(LEASE_MS + 1);
      await store().rescueExpiredJobs();
      await refused(lease(zombie));
      const holder = await claimOne('q', 'w2');
      await refused(lease(zombie));
      expect(await store().checkpointSteps({ steps: [{ ...lease(holder), name: 'charge', result: 'ok' }] })).toEqual([true]);
      expect(await setState(outcome('completed', lease(holder)))).toBe(true);
      await refused(lease(holder));
      expect((await getJob(holder.id)).steps.map((s) => s.name)).toEqual(['charge']);
    });

    it('answers a batch per step, in order: the fenced-in ones are stored, the rest write nothing', async () => {
      await enqueue();
      await enqueue();
      await enqueue();
      const [a, b, c] = await claim('q', 3);
      expect(await setState(outcome('completed', lease(b!)))).toBe(true);
      const answers = await store().checkpointSteps({
        steps: [
          { ...lease(a!), name: 'one', result: 1 },
          { ...lease(b!), name: 'late', result: 2 },
          { id: c!.id, leaseToken: WRONG_TOKEN, name: 'forged', result: 3 },
          { ...lease(c!), name: 'three', result: 3 },
          { id: UNKNOWN_ID, leaseToken: a!.leaseToken, name: 'nobody', result: 4 },
        ],
      });
      expect(answers).toEqual([true, false, false, true, false]);
      expect((await getJob(a!.id)).steps.map((s) => s.name)).toEqual(['one']);
      expect((await getJob(b!.id)).steps).toEqual([]);
      expect((await getJob(c!.id)).steps.map((s) => s.name)).toEqual(['three']);
      expect(await store().checkpointSteps({ steps: [] })).toEqual([]);
    });
  });

  describe('durable jobs: suspendIfRunning, a sleep', () => {
    it('makes the row sleeping until the wake time: no lease, no attempt spent, history running → sleeping', async () => {
      const created = await enqueue({ maxAttempts: 1 });
      const claimed = await claimOne();
      clock().advance(5);
      expect(await sleep(lease(claimed), 'cool-off', { delayMs: HOUR })).toEqual({ answer: 'sleeping' });
      const until = new Date(T0 + 5 + HOUR);
      expect(await getJob(created.id)).toMatchObject({
        state: 'sleeping',
        runAt: until,
        attempt: 1,
        // One more allowed: the next claim adds the attempt the sleep did not spend.
        maxAttempts: 2,
        leaseToken: null,
        leaseExpiresAt: null,
        error: null,
        waitingForSignal: null,
        steps: [{ kind: 'sleep', name: 'cool-off', at: new Date(T0 + 5), until }],
      });
      expect((await history(created.id)).at(-1)).toEqual(step('running', 'sleeping', 1, 'w1', T0 + 5, 'sleep'));
      // The lease is given back: the old holder's writes are refused.
      expect(await store().renewLeases({ leases: [lease(claimed)], leaseMs: LEASE_MS })).toEqual(['lost']);
      expect(await store().setStatesIfRunning({ outcomes: [outcome('completed', lease(claimed))] })).toEqual([false]);
      // Claimable at the wake time by the store's clock, not a millisecond before.
      clock().advance(HOUR - 1);
      expect(await claim()).toEqual([]);
      clock().advance(1);
      const woken = await claimOne('q', 'w2');
      expect(woken).toMatchObject({ id: created.id, attempt: 2, maxAttempts: 2, workerId: 'w2', steps: [{ kind: 'sleep', name: 'cool-off', until }] });
      expect((await history(created.id)).at(-1)).toEqual(step('sleeping', 'running', 2, 'w2', until.getTime()));
    });

    it('a sleep whose time has come answers awake, stores it and keeps the row running', async () => {
      await enqueue();
      const claimed = await claimOne();
      expect(await sleep(lease(claimed), 'nap', { at: new Date(T0) })).toEqual({ answer: 'awake' });
      expect(await sleep(lease(claimed), 'nap#2', { delayMs: 0 })).toEqual({ answer: 'awake' });
      const job = await getJob(claimed.id);
      expect(job).toMatchObject({ state: 'running', leaseToken: claimed.leaseToken });
      expect(job.steps).toEqual([
        { kind: 'sleep', name: 'nap', at: new Date(T0), until: new Date(T0) },
        { kind: 'sleep', name: 'nap#2', at: new Date(T0), until: new Date(T0) },
      ]);
    });

    it('gives the key slot back while sleeping', async () => {
      const first = await enqueue({ concurrencyKey: 'acct-1' });
      const second = await enqueue({ concurrencyKey: 'acct-1' });
      const claimed = await claim('q', 2);
      expect(claimed.map((job) => job.id)).toEqual([first.id]);
      expect(await sleep(lease(claimed[0]!), 'nap', { delayMs: HOUR })).toEqual({ answer: 'sleeping' });
      expect((await claim('q', 2)).map((job) => job.id)).toEqual([second.id]);
    });

    it('is fenced: a stale lease answers lost and writes nothing', async () => {
      await enqueue();
      const zombie = await claimOne('q', 'w1');
      clock().advance(LEASE_MS + 1);
      await store().rescueExpiredJobs();
      const holder = await claimOne('q', 'w2');
      const row = await getJob(holder.id);
      expect(await sleep(lease(zombie), 'nap', { delayMs: HOUR })).toEqual({ answer: 'lost' });
      expect(await wait({ id: zombie.id, leaseToken: WRONG_TOKEN }, 'go')).toEqual({ answer: 'lost' });
      expect(await getJob(holder.id)).toEqual(row);
    });

    it('a cancel asked for while running wins over the sleep', async () => {
      await enqueue();
      const claimed = await claimOne();
      await store().cancelJob({ id: claimed.id });
      expect(await sleep(lease(claimed), 'nap', { delayMs: HOUR })).toEqual({ answer: 'cancelled' });
      expect(await getJob(claimed.id)).toMatchObject({ state: 'cancelled', leaseToken: null, error: { code: 'cancelled' } });
      expect((await history(claimed.id)).at(-1)).toEqual(step('running', 'cancelled', 1, 'w1', T0, 'cancelled'));
    });
  });

  describe('durable jobs: waits for a signal', () => {
    it('with none in the mailbox: sleeping until the timeout, waiting for that name', async () => {
      const claimed = await waiting('approved', { delayMs: HOUR });
      expect(await getJob(claimed.id)).toMatchObject({
        state: 'sleeping',
        runAt: new Date(T0 + HOUR),
        waitingForSignal: 'approved',
        steps: [{ kind: 'signal', name: 'approved', signal: 'approved', status: 'waiting', until: new Date(T0 + HOUR) }],
      });
      expect((await history(claimed.id)).at(-1)).toEqual(step('running', 'sleeping', 1, 'w1', T0, 'signal_wait'));
    });

    it('with no timeout: due at the latest time a job can have, shown as no timeout', async () => {
      const claimed = await waiting('approved');
      const job = await getJob(claimed.id);
      expect(job.runAt).toEqual(NEVER);
      expect(job.steps).toMatchObject([{ kind: 'signal', status: 'waiting', until: null }]);
    });

    it('a signal already in the mailbox is received at once, oldest first, one per wait; the row stays running', async () => {
      await enqueue();
      const claimed = await claimOne();
      expect(await signal(claimed.id, 'approved', { by: 'ana' })).toEqual({ delivered: 'queued', state: 'running' });
      expect(await signal(claimed.id, 'approved', { by: 'bo' })).toEqual({ delivered: 'queued', state: 'running' });
      expect(await signal(claimed.id, 'other', 1)).toEqual({ delivered: 'queued', state: 'running' });
      clock().advance(7);
      expect(await wait(lease(claimed), 'approved')).toEqual({ answer: 'received', payload: { by: 'ana' } });
      expect(await wait(lease(claimed), 'approved', { at: NEVER }, 'approved#2')).toEqual({ answer: 'received', payload: { by: 'bo' } });
      expect(await getJob(claimed.id)).toMatchObject({
        state: 'running',
        leaseToken: claimed.leaseToken,
        steps: [
          { kind: 'signal', name: 'approved', at: new Date(T0 + 7), signal: 'approved', status: 'received', payload: { by: 'ana' }, until: null },
          { kind: 'signal', name: 'approved#2', signal: 'approved', status: 'received', payload: { by: 'bo' } },
        ],
      });
      // Both taken: a third wait of that name sleeps; the other name's signal is still kept.
      expect(await wait(lease(claimed), 'approved', { delayMs: HOUR }, 'approved#3')).toEqual({ answer: 'sleeping' });
      clock().advance(HOUR);
      const again = await claimOne();
      expect(await wait(lease(again), 'other', { delayMs: 0 })).toEqual({ answer: 'received', payload: 1 });
    });

    it('a signal to the waiter wakes it: pending now, history sleeping → pending; the next run receives it', async () => {
      const claimed = await waiting('approved', { delayMs: HOUR });
      expect(await signal(claimed.id, 'not-this-one')).toEqual({ delivered: 'queued', state: 'sleeping' });
      clock().advance(1_000);
      expect(await signal(claimed.id, 'approved', { ok: true })).toEqual({ delivered: 'woke', state: 'pending' });
      // A second one of the name finds it awake already: kept for a later wait.
      expect(await signal(claimed.id, 'approved', { ok: 'again' })).toEqual({ delivered: 'queued', state: 'pending' });
      expect(await getJob(claimed.id)).toMatchObject({ state: 'pending', runAt: new Date(T0 + 1_000), waitingForSignal: null, attempt: 1 });
      expect((await history(claimed.id)).slice(-2)).toEqual([
        step('running', 'sleeping', 1, 'w1', T0, 'signal_wait'),
        step('sleeping', 'pending', 1, 'w1', T0 + 1_000, 'signal'),
      ]);
      const again = await claimOne('q', 'w2');
      expect(again).toMatchObject({ id: claimed.id, attempt: 2 });
      // The wait resumes with the timeout it had.
      expect(await wait(lease(again), 'approved', { at: new Date(T0 + HOUR) })).toEqual({ answer: 'received', payload: { ok: true } });
      expect(await wait(lease(again), 'approved', { delayMs: HOUR }, 'approved#2')).toEqual({ answer: 'received', payload: { ok: 'again' } });
      expect((await getJob(claimed.id)).steps.map((s) => [s.name, s.kind === 'signal' ? s.status : s.kind])).toEqual([
        ['approved', 'waiting'],
        ['approved', 'received'],
        ['approved#2', 'received'],
      ]);
    });

    it('the timeout makes it claimable, not before; the next run\'s wait answers timedOut and stores it', async () => {
      const claimed = await waiting('approved', { delayMs: 5_000 });
      clock().advance(4_999);
      expect(await claim()).toEqual([]);
      clock().advance(1);
      const again = await claimOne();
      expect(await wait(lease(again), 'approved', { at: new Date(T0 + 5_000) })).toEqual({ answer: 'timedOut' });
      const job = await getJob(claimed.id);
      expect(job.state).toBe('running');
      expect(job.steps.at(-1)).toEqual({
        kind: 'signal', name: 'approved', at: new Date(T0 + 5_000), signal: 'approved', status: 'timedOut', until: new Date(T0 + 5_000),
      });
      // Too late for that wait: a signal now is kept for a later one.
      expect(await signal(claimed.id, 'approved')).toEqual({ delivered: 'queued', state: 'running' });
    });

    it('a signal that comes after the timeout but before the job runs again is still received', async () => {
      const claimed = await waiting('approved', { delayMs: 5_000 });
      clock().advance(6_000);
      expect(await signal(claimed.id, 'approved', 'late')).toEqual({ delivered: 'woke', state: 'pending' });
      const again = await claimOne();
      expect(await wait(lease(again), 'approved', { at: new Date(T0 + 5_000) })).toEqual({ answer: 'received', payload: 'late' });
    });

    it('a signal to a job that sleeps (not for a signal) or is pending is kept, the row unchanged', async () => {
      await enqueue();
      const claimed = await claimOne();
      expect(await sleep(lease(claimed), 'nap', { delayMs: HOUR })).toEqual({ answer: 'sleeping' });
      const row = await getJob(claimed.id);
      expect(await signal(claimed.id, 'approved')).toEqual({ delivered: 'queued', state: 'sleeping' });
      expect(await getJob(claimed.id)).toEqual(row);
      const pending = await enqueue();
      expect(await signal(pending.id, 'approved')).toEqual({ delivered: 'queued', state: 'pending' });
    });
  });

  describe('durable jobs: sendSignal refuses', () => {
    it('a job that has ended (completed, dead, skipped, cancelled): JobEndedError naming its state', async () => {
      for (const state of FINAL_OUTCOMES) {
        const job = await jobIn(state);
        const error = await signal(job.id, 'approved').catch((e: unknown) => e);
        expect(error, state).toBeInstanceOf(JobEndedError);
        expect(error).toMatchObject({ jobId: job.id, state });
      }
    });

    it('an unknown job: JobNotFoundError', async () => {
      await expect(signal(UNKNOWN_ID, 'approved')).rejects.toBeInstanceOf(JobNotFoundError);
      await expect(signal('not-an-id', 'approved')).rejects.toBeInstanceOf(JobNotFoundError);
    });

    it('a bad name or payload with a typed error, delivering nothing', async () => {
      const claimed = await waiting('approved', { delayMs: 5_000 });
      for (const name of ['', 'has space', '-leading', 'x'.repeat(129), 42]) {
        await expect(store().sendSignal({ id: claimed.id, name: name as string, payload: {} })).rejects.toBeInstanceOf(InvalidOptionError);
      }
      await expect(signal(claimed.id, 'approved', 'x'.repeat(1_048_577))).rejects.toBeInstanceOf(InvalidPayloadError);
      await expect(signal(claimed.id, 'approved', { n: 1n })).rejects.toBeInstanceOf(InvalidPayloadError);
      await expect(signal(claimed.id, 'approved', { at: Number.NaN })).rejects.toBeInstanceOf(InvalidPayloadError);
      expect((await getJob(claimed.id)).state).toBe('sleeping');
      clock().advance(5_000);
      const again = await claimOne();
      expect(await wait(lease(again), 'approved', { at: new Date(T0 + 5_000) })).toEqual({ answer: 'timedOut' });
    });
  });

  describe('durable jobs: with the rest of the store', () => {
    it('wakes the queue\'s subscribers when a signal wakes a job', async (ctx) => {
      if (!store().capabilities.notifications) ctx.skip();
      const claimed = await waiting('approved');
      const woken: string[] = [];
      const unsubscribe = await store().subscribe((queue) => woken.push(queue ?? '(any queue)'));
      try {
        await signal(claimed.id, 'approved');
        await vi.waitFor(() => expect(woken).toContain('q'), { timeout: 5_000, interval: 5 });
      } finally {
        await unsubscribe();
      }
    });

    it('getQueueBacklogs counts sleeping jobs as sleeping, not as due', async () => {
      await waiting('approved', { delayMs: HOUR });
      expect(await store().getQueueBacklogs({})).toEqual([
        { queue: 'q', counts: { pending: 0, retrying: 0, running: 0, dead: 0, skipped: 0, cancelled: 0, waiting: 0, sleeping: 1 }, oldestRunAt: null, later: { scheduled: 0, snoozed: 0 } },
      ]);
    });

    it('nextDueIn: the first sleeping, retrying or later job of the queues within the window, by the store\'s clock', async () => {
      const sleeper = await waiting('approved', { delayMs: 5_000 });
      await enqueue();
      expect(await store().nextDueIn({ queues: ['q'], withinMs: 10_000 })).toBe(5_000);
      expect(await store().nextDueIn({ queues: ['q'], withinMs: 4_000 })).toBeNull();
      expect(await store().nextDueIn({ queues: ['other'], withinMs: 10_000 })).toBeNull();
      await enqueue({ runIn: 3_000 });
      clock().advance(1_000);
      expect(await store().nextDueIn({ queues: ['other', 'q'], withinMs: 10_000 })).toBe(2_000);
      // Due already: the claim's, not the timer's; unless it came due after the asking claim began.
      clock().advance(4_000);
      expect(await store().nextDueIn({ queues: ['q'], withinMs: 10_000 })).toBeNull();
      expect(await store().nextDueIn({ queues: ['q'], withinMs: 10_000, sinceMs: 500 })).toBe(0);
      expect(await store().nextDueIn({ queues: ['q'], withinMs: 10_000, sinceMs: 3_000 })).toBe(0);
      const again = await claim('q', 10);
      expect(again.map((j) => j.id)).toContain(sleeper.id);
    });

    it('cancel while sleeping ends the job; it is never claimed, and a signal to it is refused', async () => {
      const claimed = await waiting('approved', { delayMs: 5_000 });
      clock().advance(10);
      expect(await store().cancelJob({ id: claimed.id })).toMatchObject({ cancelled: true, job: { state: 'cancelled' } });
      expect((await history(claimed.id)).at(-1)).toEqual(step('sleeping', 'cancelled', 1, null, T0 + 10, 'cancelled'));
      expect((await getJob(claimed.id)).waitingForSignal).toBeNull();
      clock().advance(5_000);
      expect(await claim()).toEqual([]);
      await expect(signal(claimed.id, 'approved')).rejects.toBeInstanceOf(JobEndedError);
    });

    it('expiresAt that passes while waiting for a signal: the reaper makes it dead (expired)', async () => {
      const created = await enqueue({ expiresAt: new Date(T0 + 10_000) });
      const claimed = await claimOne();
      expect(await wait(lease(claimed), 'approved', { delayMs: HOUR })).toEqual({ answer: 'sleeping' });
      clock().advance(9_999);
      expect(await store().rescueExpiredJobs()).toEqual([]);
      clock().advance(1);
      expect(await store().rescueExpiredJobs()).toMatchObject([{ id: created.id, state: 'dead', error: { code: 'expired' }, waitingForSignal: null }]);
      await expect(signal(created.id, 'approved')).rejects.toBeInstanceOf(JobEndedError);
      expect((await history(created.id)).at(-1)).toMatchObject({ fromState: 'sleeping', toState: 'dead', error: 'expired' });
    });

    if (factory.inTransaction) {
      const inTransaction = factory.inTransaction;
      it('sendSignal in the caller\'s transaction: rolled back, nothing delivered; committed, the job wakes', async () => {
        const claimed = await waiting('approved', { delayMs: 5_000 });
        const row = await getJob(claimed.id);
        await inTransaction('rollback', async (client) => {
          expect(await store().sendSignal({ id: claimed.id, name: 'approved', payload: 1, client })).toEqual({ delivered: 'woke', state: 'pending' });
        });
        expect(await getJob(claimed.id)).toEqual(row);
        await inTransaction('commit', async (client) => {
          expect(await store().sendSignal({ id: claimed.id, name: 'approved', payload: 2, client })).toEqual({ delivered: 'woke', state: 'pending' });
        });
        const again = await claimOne();
        // Only the committed one is in the mailbox.
        expect(await wait(lease(again), 'approved', { at: new Date(T0 + 5_000) })).toEqual({ answer: 'received', payload: 2 });
        expect(await wait(lease(again), 'approved', { delayMs: 0 }, 'approved#2')).toEqual({ answer: 'timedOut' });
      });

      it('sendSignal in the caller\'s transaction still refuses an unknown job with JobNotFoundError', async () => {
        await inTransaction('rollback', async (client) => {
          await expect(store().sendSignal({ id: UNKNOWN_ID, name: 'approved', payload: 1, client })).rejects.toBeInstanceOf(JobNotFoundError);
        });
      });
    } else {
      it('refuses a SQL client when it cannot join a transaction', async () => {
        const claimed = await waiting('approved');
        const client = { query: async () => ({ rows: [] }) };
        await expect(store().sendSignal({ id: claimed.id, name: 'approved', payload: 1, client })).rejects.toBeInstanceOf(InvalidOptionError);
        expect((await getJob(claimed.id)).state).toBe('sleeping');
      });
    }
  });
}
