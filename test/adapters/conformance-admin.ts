/**
 * Conformance for what an operator does to jobs: cancel, retry, delete, prune.
 * Part of describeStoreConformance (conformance.ts), which calls it inside its own describe
 * with a getter for the test's store and clock.
 */
import { describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../../src/errors.js';
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
      expect((await store().listNewJobs({ afterId: '0' })).map((j) => j.id)).toEqual([kept.id]);
      expect((await store().listJobEvents({ afterId: '0' })).map((e) => e.jobId)).toEqual([]);
      expect(await store().getJobEvents({ id: kept.id })).toHaveLength(1);
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

    /** 7 completed and 5 dead jobs past the cutoff; live ones; a finished parent a waiting job
     *  waits for, and one a sleeping job depends on. */
    async function pruneScene() {
      const finished = [];
      for (let i = 0; i < 7; i++) finished.push(await jobIn(i % 2 ? 'skipped' : 'completed', { queue: `c${i}` }));
      for (let i = 0; i < 5; i++) finished.push(await jobIn('dead', { queue: `d${i}` }));
      const live = [await jobIn('pending', { queue: 'l1' }), await jobIn('running', { queue: 'l2' }), await jobIn('retrying', { queue: 'l3' })];
      const node = (queue: string, name: string, dependsOn: { index: number; name: string; onFailure: 'cancel' }[] = []) =>
        ({ queue, kind: 'k', payload: {}, maxAttempts: 3, node: name, dependsOn });
      const waited = await store().enqueueFlow({
        name: 'waited',
        jobs: [node('fa', 'a'), node('fb', 'b'), node('fc', 'c', [{ index: 0, name: 'a', onFailure: 'cancel' }, { index: 1, name: 'b', onFailure: 'cancel' }])],
      });
      expect(await setState(outcome('completed', lease(await claimOne('fa'))))).toBe(true);
      const slept = await store().enqueueFlow({ name: 'slept', jobs: [node('sp', 'p'), node('ss', 's', [{ index: 0, name: 'p', onFailure: 'cancel' }])] });
      expect(await setState(outcome('completed', lease(await claimOne('sp'))))).toBe(true);
      const sleeper = await claimOne('ss');
      expect(await store().suspendIfRunning({ ...lease(sleeper), kind: 'sleep', name: 'nap', wake: { delayMs: 3_600_000 } })).toEqual({ answer: 'sleeping' });
      clock().advance(10_000);
      const [a, b, c] = waited.jobs;
      const [p, sleeping] = slept.jobs;
      return { finished, kept: [...live, a!, b!, c!, p!, sleeping!], a: a!, b: b!, p: p! };
    }

    it('deletes in batches of batchSize what one prune deletes, reporting each batch, and keeps what it keeps', async () => {
      const { finished, kept } = await pruneScene();
      const cutoff = now();
      const progress: { deleted: number; total: number }[] = [];
      const pruned = await store().pruneJobs({ completedBefore: cutoff, deadBefore: cutoff, batchSize: 5, onBatch: (at) => progress.push(at) });
      expect(pruned).toBe(12);
      expect(progress).toEqual([{ deleted: 5, total: 5 }, { deleted: 5, total: 10 }, { deleted: 2, total: 12 }]);
      for (const job of finished) {
        expect(await store().getJob({ id: job.id })).toBeNull();
        expect(await store().getJobEvents({ id: job.id })).toEqual([]);
      }
      expect(sortedIds(await store().listJobs({}))).toEqual(sortedIds(kept));
      for (const job of kept) expect(await history(job.id)).not.toEqual([]);
      // Nothing left to find: one empty batch, no report.
      expect(await store().pruneJobs({ completedBefore: cutoff, deadBefore: cutoff, batchSize: 5, onBatch: (at) => progress.push(at) })).toBe(0);
      expect(progress).toHaveLength(3);
    });

    it('keeps its rules in every batch: a parent goes once no job waits for it, batch size 1 or exactly the count', async () => {
      const { a, b, p } = await pruneScene();
      const cutoff = now();
      // Exactly a batch's worth: a second batch finds nothing and the prune stops.
      expect(await store().pruneJobs({ completedBefore: cutoff, deadBefore: cutoff, batchSize: 12 })).toBe(12);
      expect((await getJob(a.id)).state).toBe('completed');
      expect((await getJob(p.id)).state).toBe('completed');
      expect(await setState(outcome('completed', lease(await claimOne('fb'))))).toBe(true);
      expect((await getJob(b.id)).state).toBe('completed');
      clock().advance(10_000);
      const progress: number[] = [];
      const later = now();
      expect(await store().pruneJobs({ completedBefore: later, deadBefore: later, batchSize: 1, onBatch: ({ total }) => progress.push(total) })).toBe(2);
      expect(progress).toEqual([1, 2]);
      for (const job of [a, b]) expect(await store().getJob({ id: job.id })).toBeNull();
      // p: its dependent still sleeps.
      expect((await getJob(p.id)).state).toBe('completed');
    });

    it('refuses a batchSize that is not a positive integer, deleting nothing', async () => {
      const old = await jobIn('completed');
      clock().advance(10_000);
      for (const batchSize of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '10' as unknown as number]) {
        const error = await store().pruneJobs({ completedBefore: now(), batchSize }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(InvalidOptionError);
        expect(error).toMatchObject({ option: 'batchSize' });
        await expect(store().pruneJobs({ batchSize })).rejects.toBeInstanceOf(InvalidOptionError);
      }
      expect((await getJob(old.id)).state).toBe('completed');
    });
  });
}
