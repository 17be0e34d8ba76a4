/**
 * Conformance for what an operator does to jobs: cancel, retry, delete, prune.
 * Part of describeStoreConformance (conformance.ts), which calls it inside its own describe
 * with a getter for the test's store and clock.
 */
import { describe, expect, it } from 'vitest';
import { conformanceKit, type CurrentStore, FINAL_OUTCOMES, lease, sortedIds, step, T0, UNKNOWN_ID } from './conformance.js';

export function describeAdminConformance(current: CurrentStore): void {
  const { store, clock, now, enqueue, enqueueOne, claim, claimOne, getJob, history, outcome, setState, jobIn } = conformanceKit(current);

  describe('cancelJob', () => {
    it('cancels a pending job', async () => {
      const created = await enqueue();
      clock().advance(1_000);
      const answer = await store().cancelJob({ id: created.id });
      expect(answer).toEqual({
        cancelled: true,
        job: {
          ...created,
          state: 'cancelled',
          error: { code: 'cancelled', message: 'cancelled by request' },
          updatedAt: now(),
          finishedAt: now(),
        },
      });
      expect(await getJob(created.id)).toEqual(answer!.job);
      expect(await history(created.id)).toEqual([
        step(null, 'pending', 0, null, T0),
        step('pending', 'cancelled', 0, null, T0 + 1_000, 'cancelled'),
      ]);
      expect(await claim()).toEqual([]);
    });

    it('cancels a retrying job', async () => {
      const created = await enqueue();
      const claimed = await claimOne();
      expect(await setState(outcome('retrying', lease(claimed)))).toBe(true);
      clock().advance(1_000);
      const answer = await store().cancelJob({ id: created.id });
      expect(answer?.cancelled).toBe(true);
      expect(answer?.job).toMatchObject({ state: 'cancelled', attempt: 1, finishedAt: now(), error: { code: 'cancelled' } });
      expect((await history(created.id)).at(-1)).toEqual(step('retrying', 'cancelled', 1, null, T0 + 1_000, 'cancelled'));
      clock().advance(60_000);
      expect(await claim()).toEqual([]);
    });

    it('leaves a running job to its worker, with the request on the row and no history row', async () => {
      await enqueue();
      const claimed = await claimOne();
      clock().advance(1_000);
      const requested = { ...claimed, cancelRequestedAt: now(), updatedAt: now() };
      expect(await store().cancelJob({ id: claimed.id })).toEqual({ cancelled: false, job: requested });
      expect(await getJob(claimed.id)).toEqual(requested);
      expect(await history(claimed.id)).toHaveLength(2);
      expect(await setState(outcome('completed', lease(claimed)))).toBe(true);
    });

    it.each(FINAL_OUTCOMES)('leaves a %s job alone', async (state) => {
      const job = await jobIn(state);
      const steps = await history(job.id);
      clock().advance(1_000);
      expect(await store().cancelJob({ id: job.id })).toEqual({ cancelled: false, job });
      expect(await getJob(job.id)).toEqual(job);
      expect(await history(job.id)).toEqual(steps);
    });

    it('answers null for an unknown id', async () => {
      expect(await store().cancelJob({ id: UNKNOWN_ID })).toBeNull();
    });
  });

  describe('retryJob', () => {
    it('sends a dead job back to pending, keeping its error, with one more attempt allowed', async () => {
      const created = await enqueue({ maxAttempts: 2 });
      const first = await claimOne();
      expect(await setState(outcome('retrying', lease(first), 0))).toBe(true);
      const second = await claimOne();
      const dead = outcome('dead', lease(second));
      expect(await setState(dead)).toBe(true);
      const deadRow = await getJob(created.id);
      clock().advance(60_000);
      const answer = await store().retryJob({ id: created.id });
      expect(answer).toEqual({
        retried: true,
        job: {
          ...deadRow,
          state: 'pending',
          attempt: 2,
          maxAttempts: 3,
          runAt: now(),
          error: 'error' in dead ? dead.error : null,
          finishedAt: null,
          leaseToken: null,
          leaseExpiresAt: null,
          updatedAt: now(),
        },
      });
      expect((await history(created.id)).slice(-2)).toEqual([
        step('running', 'dead', 2, 'w1', T0, 'permanent_error'),
        step('dead', 'pending', 2, null, T0 + 60_000),
      ]);
      expect(await claimOne()).toMatchObject({ id: created.id, attempt: 3, maxAttempts: 3 });
    });

    it('keeps maxAttempts when attempts are left (a cancelled job that never ran)', async () => {
      const created = await enqueue({ maxAttempts: 3 });
      await store().cancelJob({ id: created.id });
      clock().advance(1_000);
      const answer = await store().retryJob({ id: created.id });
      expect(answer?.retried).toBe(true);
      expect(answer?.job).toMatchObject({
        state: 'pending',
        attempt: 0,
        maxAttempts: 3,
        runAt: now(),
        finishedAt: null,
        error: { code: 'cancelled' },
      });
      expect(await history(created.id)).toEqual([
        step(null, 'pending', 0, null, T0),
        step('pending', 'cancelled', 0, null, T0, 'cancelled'),
        step('cancelled', 'pending', 0, null, T0 + 1_000),
      ]);
    });

    it('revives a skipped job', async () => {
      const job = await jobIn('skipped', { maxAttempts: 1 });
      const answer = await store().retryJob({ id: job.id });
      expect(answer?.retried).toBe(true);
      expect(answer?.job).toMatchObject({ state: 'pending', attempt: 1, maxAttempts: 2, error: { code: 'unknown_kind' } });
      expect((await history(job.id)).at(-1)).toEqual(step('skipped', 'pending', 1, null, T0));
    });

    it.each(['pending', 'running', 'retrying', 'completed'] as const)('leaves a %s job alone', async (state) => {
      const job = await jobIn(state);
      const steps = await history(job.id);
      clock().advance(1_000);
      expect(await store().retryJob({ id: job.id })).toEqual({ retried: false, job });
      expect(await getJob(job.id)).toEqual(job);
      expect(await history(job.id)).toEqual(steps);
    });

    it('answers null for an unknown id', async () => {
      expect(await store().retryJob({ id: UNKNOWN_ID })).toBeNull();
    });
  });

  describe('deleteJob', () => {
    it('deletes a job no worker holds, with its history, and frees its unique key', async () => {
      const pending = await enqueue({ uniqueKey: 'u1' });
      const dead = await jobIn('dead', { queue: 'other' });
      const kept = await enqueue();
      for (const job of [pending, dead]) {
        const answer = await store().deleteJob({ id: job.id });
        expect(answer).toMatchObject({ deleted: true, job: { id: job.id, state: job.state } });
        expect(await store().getJob({ id: job.id })).toBeNull();
        expect(await store().getJobEvents({ id: job.id })).toEqual([]);
      }
      const remaining = await store().listJobEvents({ afterId: '0' });
      expect(remaining.map((e) => e.jobId)).toEqual([kept.id]);
      expect((await enqueueOne({ uniqueKey: 'u1' })).created).toBe(true);
      expect(await store().deleteJob({ id: pending.id })).toBeNull();
    });

    it('leaves a running job to its worker, whose writes still apply', async () => {
      await enqueue();
      const claimed = await claimOne();
      const answer = await store().deleteJob({ id: claimed.id });
      expect(answer).toMatchObject({ deleted: false, job: { id: claimed.id, state: 'running' } });
      expect(await setState(outcome('completed', lease(claimed)))).toBe(true);
    });

    it('answers null for an unknown id', async () => {
      expect(await store().deleteJob({ id: UNKNOWN_ID })).toBeNull();
    });
  });

  describe('pruneJobs', () => {
    it('deletes finished jobs older than each cutoff, with their history, and nothing live', async () => {
      const completed = await jobIn('completed', { queue: 'p1' });
      const skipped = await jobIn('skipped', { queue: 'p2' });
      const dead = await jobIn('dead', { queue: 'p3' });
      const cancelled = await enqueue({ queue: 'p4' });
      await store().cancelJob({ id: cancelled.id });
      const live = [
        await jobIn('pending', { queue: 'p5' }),
        await jobIn('running', { queue: 'p6' }),
        await jobIn('retrying', { queue: 'p7' }),
      ];
      clock().advance(10_000);
      const laterCompleted = await jobIn('completed', { queue: 'p8' });
      const laterDead = await jobIn('dead', { queue: 'p9' });
      const cutoff = new Date(T0 + 10_000);

      expect(await store().pruneJobs({})).toBe(0);
      expect(await store().pruneJobs({ completedBefore: cutoff })).toBe(2);
      for (const job of [completed, skipped]) {
        expect(await store().getJob({ id: job.id })).toBeNull();
        expect(await store().getJobEvents({ id: job.id })).toEqual([]);
      }
      expect((await getJob(dead.id)).state).toBe('dead');
      expect((await getJob(laterCompleted.id)).state).toBe('completed');

      expect(await store().pruneJobs({ deadBefore: cutoff })).toBe(2);
      for (const job of [dead, cancelled]) {
        expect(await store().getJob({ id: job.id })).toBeNull();
        expect(await store().getJobEvents({ id: job.id })).toEqual([]);
      }

      const far = new Date(T0 + 1_000_000_000);
      expect(await store().pruneJobs({ completedBefore: far, deadBefore: far })).toBe(2);
      expect(sortedIds(await store().listJobs({}))).toEqual(sortedIds(live));
      for (const job of live) expect(await history(job.id)).not.toEqual([]);
      expect(await store().getJob({ id: laterDead.id })).toBeNull();
    });
  });
}
