/**
 * Conformance for what controls a job from outside its handler's return value: snooze,
 * cancel requests for running jobs, progress, the deadline across all attempts, and the
 * trace context kept from enqueue. Part of describeStoreConformance (conformance.ts), which
 * calls it inside its own describe with a getter for the test's store and clock.
 */
import { describe, expect, it, vi } from 'vitest';
import type { EnqueueJob, JobOutcome, JobStore, Lease } from '../../src/adapters/store.js';
import type { ClaimedJob, JobErrorInfo, JobRecord } from '../../src/types.js';
import type { TestClock } from './conformance.js';

const LEASE_MS = 30_000;
const BOOM: JobErrorInfo = { code: 'handler_error', message: 'boom', name: 'Error', stack: 'Error: boom\n    at h (h.ts:1:1)' };
const SNOOZE: JobErrorInfo = { code: 'snoozed', message: 'snoozed for 5000 ms', name: 'SnoozeJobError' };

export function describeControlConformance(current: () => { store: JobStore; clock: TestClock }): void {
  const store = () => current().store;
  const clock = () => current().clock;
  const now = () => new Date(clock().now());

  async function enqueue(job: Partial<EnqueueJob> = {}): Promise<JobRecord> {
    const [result] = await store().enqueueJobs({ jobs: [{ queue: 'q', kind: 'k', payload: {}, maxAttempts: 3, ...job }] });
    return result!.job;
  }

  async function claimOne(workerId = 'w1'): Promise<ClaimedJob> {
    const claimed = await store().claimJobs({ workerId, leaseMs: LEASE_MS, queues: [{ queue: 'q', limit: 1 }] });
    expect(claimed).toHaveLength(1);
    return claimed[0]!;
  }

  async function noneDue(): Promise<void> {
    expect(await store().claimJobs({ workerId: 'w9', leaseMs: LEASE_MS, queues: [{ queue: 'q', limit: 10 }] })).toEqual([]);
  }

  async function write(outcome: JobOutcome): Promise<boolean> {
    const [applied] = await store().setStatesIfRunning({ outcomes: [outcome] });
    return applied!;
  }

  async function row(id: string): Promise<JobRecord> {
    return (await store().getJob({ id }))!;
  }

  async function path(id: string): Promise<string[]> {
    return (await store().getJobEvents({ id })).map((e) => `${e.fromState ?? ''}>${e.toState}:${e.attempt}:${e.error?.code ?? ''}`);
  }

  const lease = (job: ClaimedJob): Lease => ({ id: job.id, leaseToken: job.leaseToken });

  describe('snooze', () => {
    it('sends the job back to pending until runAt with one more attempt allowed, and records it', async () => {
      const created = await enqueue({ maxAttempts: 1 });
      const first = await claimOne();
      clock().advance(1_000);
      const runAt = new Date(clock().now() + 5_000);
      expect(await write({ ...lease(first), state: 'snoozed', error: SNOOZE, delayMs: 5_000 })).toBe(true);
      expect(await row(created.id)).toEqual({
        ...first,
        state: 'pending',
        runAt,
        maxAttempts: 2,
        error: SNOOZE,
        leaseToken: null,
        leaseExpiresAt: null,
        updatedAt: now(),
        finishedAt: null,
      });
      expect(await path(created.id)).toEqual(['>pending:0:', 'pending>running:1:', 'running>pending:1:snoozed']);
      clock().advance(4_999);
      await noneDue();
      clock().advance(1);
      expect(await claimOne('w2')).toMatchObject({ id: created.id, attempt: 2, maxAttempts: 2 });
    });

    it('keeps the unique key taken while the job waits again', async () => {
      const created = await enqueue({ uniqueKey: 'u' });
      const claimed = await claimOne();
      await write({ ...lease(claimed), state: 'snoozed', error: SNOOZE, delayMs: 0 });
      const [again] = await store().enqueueJobs({ jobs: [{ queue: 'q', kind: 'k', payload: {}, maxAttempts: 3, uniqueKey: 'u' }] });
      expect(again).toMatchObject({ created: false, job: { id: created.id, state: 'pending' } });
    });

    it('is fenced like every outcome', async () => {
      await enqueue();
      const claimed = await claimOne();
      const wrong = { id: claimed.id, leaseToken: '00000000-0000-4000-8000-000000000000' };
      expect(await write({ ...wrong, state: 'snoozed', error: SNOOZE, delayMs: 0 })).toBe(false);
      expect(await row(claimed.id)).toEqual(claimed);
    });
  });

  describe('cancel requests for running jobs', () => {
    it('keep the time of the first request; the renewal reports them and still renews', async () => {
      await enqueue();
      const claimed = await claimOne();
      const requestedAt = now();
      expect((await store().cancelJob({ id: claimed.id }))?.job.cancelRequestedAt).toEqual(requestedAt);
      clock().advance(1_000);
      expect(await store().cancelJob({ id: claimed.id })).toMatchObject({ cancelled: false, job: { cancelRequestedAt: requestedAt } });
      clock().advance(1_000);
      const wrong = { id: claimed.id, leaseToken: '00000000-0000-4000-8000-000000000000' };
      expect(await store().renewLeases({ leases: [lease(claimed), wrong], leaseMs: LEASE_MS })).toEqual(['cancel', 'lost']);
      expect((await row(claimed.id)).leaseExpiresAt).toEqual(new Date(clock().now() + LEASE_MS));
    });

    it('the holder writes cancelled, fenced as usual', async () => {
      const created = await enqueue();
      const claimed = await claimOne();
      await store().cancelJob({ id: claimed.id });
      const error = { code: 'cancelled', message: 'cancelled while running' };
      expect(await write({ ...lease(claimed), state: 'cancelled', error })).toBe(true);
      expect(await row(created.id)).toMatchObject({ state: 'cancelled', error, finishedAt: now() });
      expect(await path(created.id)).toEqual(['>pending:0:', 'pending>running:1:', 'running>cancelled:1:cancelled']);
    });

    it.each(['retrying', 'snoozed'] as const)('win over a %s outcome: the job is cancelled, never run again', async (state) => {
      const created = await enqueue();
      const claimed = await claimOne();
      await store().cancelJob({ id: claimed.id });
      clock().advance(1_000);
      const error = state === 'retrying' ? BOOM : SNOOZE;
      expect(await write({ ...lease(claimed), state, error, delayMs: 0 })).toBe(true);
      expect(await row(created.id)).toMatchObject({
        state: 'cancelled',
        maxAttempts: 3,
        error: { code: 'cancelled' },
        finishedAt: now(),
        leaseToken: null,
      });
      expect((await path(created.id)).at(-1)).toBe('running>cancelled:1:cancelled');
      await noneDue();
    });

    it.each(['completed', 'dead'] as const)('leave a %s outcome as it is: the attempt ended first', async (state) => {
      await enqueue();
      const claimed = await claimOne();
      await store().cancelJob({ id: claimed.id });
      const outcome: JobOutcome =
        state === 'completed' ? { ...lease(claimed), state, result: 1 } : { ...lease(claimed), state, error: BOOM };
      expect(await write(outcome)).toBe(true);
      expect((await row(claimed.id)).state).toBe(state);
    });

    it('a job whose worker died with a cancel requested is cancelled by the reaper', async () => {
      const created = await enqueue();
      const claimed = await claimOne();
      await store().cancelJob({ id: claimed.id });
      clock().advance(LEASE_MS + 1);
      expect(await store().rescueExpiredJobs()).toEqual([
        expect.objectContaining({ id: created.id, state: 'cancelled', error: expect.objectContaining({ code: 'cancelled' }), finishedAt: now() }),
      ]);
      expect((await path(created.id)).at(-1)).toBe('running>cancelled:1:cancelled');
    });

    it('retryJob clears the request', async () => {
      await enqueue();
      const claimed = await claimOne();
      await store().cancelJob({ id: claimed.id });
      await write({ ...lease(claimed), state: 'cancelled', error: { code: 'cancelled', message: 'x' } });
      expect((await store().retryJob({ id: claimed.id }))?.job).toMatchObject({ state: 'pending', cancelRequestedAt: null });
      const again = await claimOne();
      expect(await store().renewLeases({ leases: [lease(again)], leaseMs: LEASE_MS })).toEqual(['renewed']);
    });

    it('reach subscribers that listen for them; cancelling a waiting job tells no one', async (ctx) => {
      if (!store().capabilities.notifications) ctx.skip();
      const cancels: string[] = [];
      const woken: string[] = [];
      const stop = await store().subscribe((queue) => woken.push(queue ?? '(any queue)'), (id) => cancels.push(id));
      const deaf: string[] = [];
      const stopDeaf = await store().subscribe((queue) => deaf.push(queue ?? '(any queue)'));
      const pending = await enqueue({ queue: 'other' });
      await enqueue();
      const claimed = await claimOne();
      await store().cancelJob({ id: pending.id });
      await store().cancelJob({ id: claimed.id });
      await vi.waitFor(() => expect(cancels).toEqual([claimed.id]), { timeout: 5_000, interval: 5 });
      await vi.waitFor(() => expect(deaf).toContain('q'), { timeout: 5_000, interval: 5 });
      for (const queues of [woken, deaf]) expect(queues.every((q) => q === 'q' || q === 'other')).toBe(true);
      await stop();
      await stopDeaf();
    });
  });

  describe('progress', () => {
    it('is stored while the lease holds, with no history row; of two for one job the last stays', async () => {
      const created = await enqueue();
      const claimed = await claimOne();
      clock().advance(1_000);
      const wrong = { id: claimed.id, leaseToken: '00000000-0000-4000-8000-000000000000' };
      const answers = await store().setProgressIfRunning({
        updates: [
          { ...lease(claimed), percent: 10, message: 'first' },
          { ...wrong, percent: 99, message: 'zombie' },
          { ...lease(claimed), percent: 42.5, message: null },
          { id: '987654321', leaseToken: claimed.leaseToken, percent: 1, message: null },
        ],
      });
      expect(answers).toEqual([true, false, true, false]);
      expect(await row(created.id)).toEqual({ ...claimed, progress: { percent: 42.5, message: null, at: now() }, updatedAt: now() });
      expect(await path(created.id)).toHaveLength(2);
      expect(await store().setProgressIfRunning({ updates: [] })).toEqual([]);
    });

    it('goes in with the outcome when given, else the last one stays, across attempts', async () => {
      const created = await enqueue();
      const first = await claimOne();
      await store().setProgressIfRunning({ updates: [{ ...lease(first), percent: 30, message: 'a' }] });
      clock().advance(1_000);
      await write({ ...lease(first), state: 'retrying', error: BOOM, delayMs: 0 });
      expect((await row(created.id)).progress).toEqual({ percent: 30, message: 'a', at: new Date(clock().now() - 1_000) });
      const second = await claimOne();
      expect(second.progress).toEqual({ percent: 30, message: 'a', at: new Date(clock().now() - 1_000) });
      clock().advance(1_000);
      await write({ ...lease(second), state: 'completed', result: 'ok', lastProgress: { percent: 100, message: 'done' } });
      expect((await row(created.id)).progress).toEqual({ percent: 100, message: 'done', at: now() });
    });

    it('is refused once the attempt has written its outcome', async () => {
      await enqueue();
      const claimed = await claimOne();
      await write({ ...lease(claimed), state: 'completed', result: null });
      const before = await row(claimed.id);
      clock().advance(1_000);
      expect(await store().setProgressIfRunning({ updates: [{ ...lease(claimed), percent: 50, message: null }] })).toEqual([false]);
      expect(await row(claimed.id)).toEqual(before);
    });
  });

  describe('expiresAt: the deadline across all attempts', () => {
    it('is stored on enqueue and claimed with the job', async () => {
      const expiresAt = new Date(clock().now() + 60_000);
      const created = await enqueue({ expiresAt });
      expect(created.expiresAt).toEqual(expiresAt);
      expect((await claimOne()).expiresAt).toEqual(expiresAt);
    });

    it('the reaper sends waiting jobs past it to dead with code expired, from the moment it comes', async () => {
      const expiresAt = new Date(clock().now() + 10_000);
      // Unclaimed since it came due; the retrying one below is not due before its expiry.
      const pending = await enqueue({ expiresAt, runAt: new Date(clock().now() + 5_000) });
      const retrying = await enqueue({ expiresAt });
      const claimed = await claimOne();
      await write({ ...lease(claimed), state: 'retrying', error: BOOM, delayMs: 60_000 });
      const later = await enqueue({ expiresAt: new Date(clock().now() + 10_001) });
      const none = await enqueue({ runAt: new Date(clock().now() + 60_000) });
      clock().advance(9_999);
      expect(await store().rescueExpiredJobs()).toEqual([]);
      clock().advance(1);
      const reaped = await store().rescueExpiredJobs();
      expect(reaped.map((job) => [job.id, job.state, job.error?.code, job.finishedAt])).toEqual([
        [pending.id, 'dead', 'expired', now()],
        [retrying.id, 'dead', 'expired', now()],
      ]);
      expect(reaped[0]!.error!.message).toContain(expiresAt.toISOString());
      expect(await row(pending.id)).toEqual(reaped[0]);
      expect((await path(pending.id)).at(-1)).toBe('pending>dead:0:expired');
      expect((await store().getJobEvents({ id: retrying.id })).at(-1)).toMatchObject({
        fromState: 'retrying', toState: 'dead', attempt: 1, workerId: null, at: now(),
      });
      for (const id of [later.id, none.id]) expect((await row(id)).state).toBe('pending');
    });

    it('leaves a running job to its worker while its lease holds; past it, a lapsed lease is dead', async () => {
      const created = await enqueue({ expiresAt: new Date(clock().now() + 10_000), maxAttempts: 5 });
      const claimed = await claimOne();
      clock().advance(10_000);
      expect(await store().rescueExpiredJobs()).toEqual([]);
      expect((await row(created.id)).state).toBe('running');
      clock().advance(LEASE_MS);
      expect(await store().rescueExpiredJobs()).toEqual([
        expect.objectContaining({ id: claimed.id, state: 'dead', attempt: 1, error: expect.objectContaining({ code: 'lease_expired' }) }),
      ]);
    });

    it('retryJob clears it once passed, and keeps it before', async () => {
      const passed = await enqueue({ expiresAt: new Date(clock().now() + 1_000) });
      const future = await enqueue({ expiresAt: new Date(clock().now() + 60_000), queue: 'other' });
      await store().cancelJob({ id: future.id });
      clock().advance(1_000);
      await store().rescueExpiredJobs();
      expect((await store().retryJob({ id: passed.id }))?.job).toMatchObject({ state: 'pending', expiresAt: null });
      expect((await store().retryJob({ id: future.id }))?.job).toMatchObject({ state: 'pending', expiresAt: future.expiresAt });
    });
  });

  describe('trace context', () => {
    it('is kept from enqueue and claimed with the job', async () => {
      const traceContext = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
      const created = await enqueue({ traceContext });
      expect(created.traceContext).toEqual(traceContext);
      expect((await claimOne()).traceContext).toEqual(traceContext);
    });
  });
}
