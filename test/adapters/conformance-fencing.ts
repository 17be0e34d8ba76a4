/**
 * Conformance for leases that end badly: every fenced write is refused without the job's
 * current lease, and the reaper rescues exactly the expired leases.
 * Part of describeStoreConformance (conformance.ts), which calls it inside its own describe
 * with a getter for the test's store and clock.
 */
import { describe, expect, it } from 'vitest';
import type { Lease } from '../../src/adapters/store.js';
import { conformanceKit, type CurrentStore, FENCED_WRITES, type FencedWrite, ids, lease, LEASE_MS, sortedIds, step, T0, WRONG_TOKEN } from './conformance.js';

export function describeFencingConformance(current: CurrentStore): void {
  const { store, clock, now, enqueue, claim, claimOne, getJob, history, outcome, setState, write } = conformanceKit(current);

  describe('fencing: a write applies only while the row is running under its lease', () => {
    async function expectRejected(kind: FencedWrite, of: Lease): Promise<void> {
      const row = await getJob(of.id);
      const steps = await history(of.id);
      clock().advance(1_000);
      expect(await write(kind, of)).toBe(false);
      expect(await getJob(of.id)).toEqual(row);
      expect(await history(of.id)).toEqual(steps);
    }

    it.each(FENCED_WRITES)('%s: rejected with a wrong token', async (kind) => {
      await enqueue();
      const claimed = await claimOne();
      await expectRejected(kind, { id: claimed.id, leaseToken: WRONG_TOKEN });
      expect(await write(kind, lease(claimed))).toBe(true);
    });

    it.each(FENCED_WRITES)('%s: rejected for a job that was never claimed', async (kind) => {
      const created = await enqueue();
      await expectRejected(kind, { id: created.id, leaseToken: WRONG_TOKEN });
    });

    it.each(FENCED_WRITES)('%s: rejected once the lease expired and the job was rescued', async (kind) => {
      await enqueue();
      const claimed = await claimOne();
      clock().advance(LEASE_MS + 1);
      expect(await store().rescueExpiredJobs()).toHaveLength(1);
      await expectRejected(kind, lease(claimed));
      expect((await getJob(claimed.id)).state).toBe('retrying');
    });

    it.each(FENCED_WRITES)('%s: rejected from a zombie whose job another worker claimed again', async (kind) => {
      await enqueue();
      const zombie = await claimOne('q', 'w1');
      clock().advance(LEASE_MS + 1);
      await store().rescueExpiredJobs();
      const current = await claimOne('q', 'w2');
      expect(current).toMatchObject({ id: zombie.id, attempt: 2, workerId: 'w2' });
      await expectRejected(kind, lease(zombie));
      expect(await write(kind, lease(current))).toBe(true);
    });

    it.each(FENCED_WRITES)('%s: rejected once the attempt has written its outcome', async (kind) => {
      await enqueue();
      const claimed = await claimOne();
      expect(await setState(outcome('completed', lease(claimed)))).toBe(true);
      await expectRejected(kind, lease(claimed));
    });
  });

  describe('rescueExpiredJobs', () => {
    it('leaves a lease that has not expired, also one expiring exactly now', async () => {
      await enqueue();
      const claimed = await claimOne();
      clock().advance(LEASE_MS);
      expect(await store().rescueExpiredJobs()).toEqual([]);
      expect((await getJob(claimed.id)).state).toBe('running');
      clock().advance(1);
      expect(ids(await store().rescueExpiredJobs())).toEqual([claimed.id]);
    });

    it('sends an expired job with attempts left to retrying, due now, naming the worker', async () => {
      const created = await enqueue({ maxAttempts: 2 });
      const claimed = await claimOne('q', 'worker-7');
      clock().advance(LEASE_MS + 1);
      const rescued = await store().rescueExpiredJobs();
      expect(rescued).toEqual([
        {
          ...claimed,
          state: 'retrying',
          runAt: now(),
          error: { code: 'lease_expired', message: expect.stringContaining('worker-7') },
          leaseToken: null,
          leaseExpiresAt: null,
          workerId: 'worker-7',
          updatedAt: now(),
          finishedAt: null,
        },
      ]);
      expect(await getJob(created.id)).toEqual(rescued[0]);
      expect(await history(created.id)).toEqual([
        step(null, 'pending', 0, null, T0),
        step('pending', 'running', 1, 'worker-7', T0),
        step('running', 'retrying', 1, 'worker-7', T0 + LEASE_MS + 1, 'lease_expired'),
      ]);
      expect(await claimOne('q', 'w2')).toMatchObject({ id: created.id, attempt: 2 });
    });

    it('sends an expired job whose attempts are spent to dead', async () => {
      const created = await enqueue({ maxAttempts: 2 });
      const first = await claimOne();
      expect(await setState(outcome('retrying', lease(first), 0))).toBe(true);
      await claimOne('q', 'w2');
      clock().advance(LEASE_MS + 1);
      const [rescued, ...rest] = await store().rescueExpiredJobs();
      expect(rest).toEqual([]);
      expect(rescued).toMatchObject({
        id: created.id,
        state: 'dead',
        attempt: 2,
        workerId: 'w2',
        leaseToken: null,
        leaseExpiresAt: null,
        runAt: new Date(T0),
        finishedAt: now(),
        error: { code: 'lease_expired' },
      });
      expect(rescued!.error!.message).toContain('w2');
      expect(await getJob(created.id)).toEqual(rescued);
      expect((await history(created.id)).at(-1)).toEqual(step('running', 'dead', 2, 'w2', now().getTime(), 'lease_expired'));
      expect(await claim()).toEqual([]);
    });

    it('does not rescue a renewed lease', async () => {
      await enqueue();
      const claimed = await claimOne();
      clock().advance(LEASE_MS - 1);
      expect(await write('renew', lease(claimed))).toBe(true);
      clock().advance(2);
      expect(await store().rescueExpiredJobs()).toEqual([]);
      clock().advance(LEASE_MS);
      expect(ids(await store().rescueExpiredJobs())).toEqual([claimed.id]);
    });

    it('rescues every expired job at once, and only running ones', async () => {
      await enqueue();
      await enqueue();
      await enqueue({ queue: 'later' });
      const pending = await enqueue({ queue: 'idle' });
      const done = await enqueue({ queue: 'done' });
      const early = await claim('q', 2);
      const finished = await claimOne('done');
      expect(await setState(outcome('completed', lease(finished)))).toBe(true);
      clock().advance(10_000);
      const late = await claimOne('later');
      clock().advance(LEASE_MS - 10_000 + 1);
      expect(sortedIds(await store().rescueExpiredJobs())).toEqual(sortedIds(early));
      expect(await store().rescueExpiredJobs()).toEqual([]);
      expect((await getJob(late.id)).state).toBe('running');
      expect((await getJob(pending.id)).state).toBe('pending');
      expect((await getJob(done.id)).state).toBe('completed');
    });
  });
}
