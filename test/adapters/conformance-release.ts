/**
 * Conformance for a `released` outcome: the worker stopped (its grace period ran out) before
 * the attempt finished. Like a snooze it spends no attempt: the row waits as `retrying` with
 * one more attempt allowed, so `attempt` never passes `maxAttempts` (no "attempt 3 of 2").
 * Part of describeStoreConformance (conformance.ts), which calls it inside its own describe
 * with a getter for the test's store and clock.
 */
import { describe, expect, it } from 'vitest';
import type { JobOutcome, JobStore } from '../../src/adapters/store.js';
import type { ClaimedJob, JobErrorInfo, JobRecord } from '../../src/types.js';
import type { TestClock } from './conformance.js';

const LEASE_MS = 30_000;
const SHUTDOWN: JobErrorInfo = { code: 'worker_shutdown', message: 'the worker stopped before the attempt finished' };

export function describeReleaseConformance(current: () => { store: JobStore; clock: TestClock }): void {
  const store = () => current().store;
  const clock = () => current().clock;
  const now = () => new Date(clock().now());

  async function enqueue(maxAttempts: number): Promise<JobRecord> {
    const [result] = await store().enqueueJobs({ jobs: [{ queue: 'q', kind: 'k', payload: {}, maxAttempts }] });
    return result!.job;
  }

  async function claimOne(workerId = 'w1'): Promise<ClaimedJob> {
    const claimed = await store().claimJobs({ workerId, leaseMs: LEASE_MS, queues: [{ queue: 'q', limit: 1 }] });
    expect(claimed).toHaveLength(1);
    return claimed[0]!;
  }

  async function write(outcome: JobOutcome): Promise<boolean> {
    const [applied] = await store().setStatesIfRunning({ outcomes: [outcome] });
    return applied!;
  }

  const released = (job: ClaimedJob): JobOutcome => ({ id: job.id, leaseToken: job.leaseToken, state: 'released', error: SHUTDOWN, delayMs: 0 });

  describe('release (a worker stopped past its grace period)', () => {
    it('sends the job back to retrying with one more attempt allowed, and records it', async () => {
      const created = await enqueue(2);
      const first = await claimOne();
      clock().advance(1_000);
      expect(await write(released(first))).toBe(true);
      expect(await store().getJob({ id: created.id })).toEqual({
        ...first,
        state: 'retrying',
        runAt: now(),
        maxAttempts: 3,
        error: SHUTDOWN,
        leaseToken: null,
        leaseExpiresAt: null,
        updatedAt: now(),
        finishedAt: null,
      });
      const history = await store().getJobEvents({ id: created.id });
      expect(history.at(-1)).toMatchObject({ fromState: 'running', toState: 'retrying', attempt: 1, error: { code: 'worker_shutdown' } });
    });

    it('however often it happens, the attempt never passes maxAttempts', async () => {
      const created = await enqueue(2);
      for (let attempt = 1; attempt <= 4; attempt++) {
        const claimed = await claimOne(`w${attempt}`);
        expect(claimed.attempt).toBeLessThanOrEqual(claimed.maxAttempts);
        expect(await write(released(claimed))).toBe(true);
      }
      expect(await store().getJob({ id: created.id })).toMatchObject({ state: 'retrying', attempt: 4, maxAttempts: 6 });
      // What is left of the original allowance is still there: two attempts that may fail.
      const fifth = await claimOne('w5');
      expect(fifth).toMatchObject({ attempt: 5, maxAttempts: 6 });
    });

    it('is fenced like every outcome', async () => {
      await enqueue(2);
      const claimed = await claimOne();
      expect(await write({ ...released(claimed), leaseToken: '00000000-0000-4000-8000-000000000000' })).toBe(false);
      expect(await store().getJob({ id: claimed.id })).toEqual(claimed);
    });

    it('loses to a cancel requested meanwhile: the job is cancelled, never run again', async () => {
      const created = await enqueue(2);
      const claimed = await claimOne();
      await store().cancelJob({ id: claimed.id });
      expect(await write(released(claimed))).toBe(true);
      expect(await store().getJob({ id: created.id })).toMatchObject({ state: 'cancelled', maxAttempts: 2, error: { code: 'cancelled' } });
    });
  });
}
