/**
 * Conformance for taking jobs: claims (order, limits, runAt, no job to two claims, fresh tokens)
 * and lease renewals.
 * Part of describeStoreConformance (conformance.ts), which calls it inside its own describe
 * with a getter for the test's store and clock.
 */
import { describe, expect, it } from 'vitest';
import { conformanceKit, type CurrentStore, ids, lease, LEASE_MS, sortedIds, step, T0, UNKNOWN_ID, WRONG_TOKEN } from './conformance.js';

export function describeClaimConformance(current: CurrentStore): void {
  const { store, clock, now, enqueue, claim, claimOne, getJob, history, outcome, setState, write } = conformanceKit(current);

  describe('claimJobs', () => {
    it('leases a due job: running, attempt + 1, the worker, a fresh token and expiry; records it', async () => {
      const created = await enqueue();
      clock().advance(1_000);
      const [claimed, ...rest] = await store().claimJobs({ workerId: 'w1', leaseMs: 45_000, queues: [{ queue: 'q', limit: 10 }] });
      expect(rest).toEqual([]);
      expect(claimed).toEqual({
        ...created,
        state: 'running',
        attempt: 1,
        workerId: 'w1',
        leaseToken: expect.any(String),
        leaseExpiresAt: new Date(T0 + 1_000 + 45_000),
        updatedAt: new Date(T0 + 1_000),
      });
      expect(claimed!.leaseToken.length).toBeGreaterThan(0);
      expect(await getJob(created.id)).toEqual(claimed);
      expect(await history(created.id)).toEqual([
        step(null, 'pending', 0, null, T0),
        step('pending', 'running', 1, 'w1', T0 + 1_000),
      ]);
    });

    it('takes the highest priority first, then the earliest runAt, then the lowest id', async () => {
      // Two queues with the same jobs: one is drained one at a time, one in a single claim.
      for (const queue of ['one', 'many']) {
        const made: Record<string, string> = {};
        const spec: Array<[string, number, number]> = [
          ['j1', 0, -5_000],
          ['j2', 5, 0],
          ['j3', 0, -10_000],
          ['j4', 5, 0],
          ['j5', -1, -20_000],
          ['j6', 5, -1],
        ];
        for (const [label, priority, offset] of spec) {
          made[label] = (await enqueue({ queue, priority, runAt: new Date(T0 + offset), payload: label })).id;
        }
        const expected = ['j6', 'j2', 'j4', 'j3', 'j1', 'j5'].map((label) => made[label]!);
        if (queue === 'one') {
          const order: string[] = [];
          for (let i = 0; i < expected.length; i++) order.push((await claimOne(queue)).id);
          expect(order).toEqual(expected);
        } else {
          expect(sortedIds(await claim(queue, 3))).toEqual(sortedIds(expected.slice(0, 3).map((id) => ({ id }))));
        }
      }
    });

    it('takes at most limit jobs per queue, from several queues in one call, and skips limit 0', async () => {
      for (const queue of ['a', 'a', 'a', 'b', 'b', 'b', 'c', 'c', 'd']) await enqueue({ queue });
      const claimed = await store().claimJobs({
        workerId: 'w1',
        leaseMs: LEASE_MS,
        queues: [
          { queue: 'a', limit: 2 },
          { queue: 'b', limit: 5 },
          { queue: 'c', limit: 0 },
          { queue: 'empty', limit: 3 },
        ],
      });
      const byQueue = (queue: string) => claimed.filter((job) => job.queue === queue).length;
      expect([byQueue('a'), byQueue('b'), byQueue('c'), byQueue('d')]).toEqual([2, 3, 0, 0]);
      for (const job of claimed) expect(job).toMatchObject({ state: 'running', attempt: 1, workerId: 'w1' });
      expect(await store().listJobs({ state: 'pending' })).toHaveLength(4);
      expect(await store().listJobs({ queue: 'a', state: 'pending' })).toHaveLength(1);
    });

    it('does not take a job before its runAt, and takes it at runAt exactly', async () => {
      await enqueue({ runAt: new Date(T0 + 10_000) });
      expect(await claim()).toEqual([]);
      clock().advance(9_999);
      expect(await claim()).toEqual([]);
      clock().advance(1);
      expect(await claim()).toHaveLength(1);
    });

    it('never hands one job to two claims, one after another or at once', async () => {
      for (let i = 0; i < 5; i++) await enqueue();
      const first = await claim('q', 3);
      const second = await claim('q', 3, 'w2');
      expect(first).toHaveLength(3);
      expect(second).toHaveLength(2);
      expect(new Set([...ids(first), ...ids(second)]).size).toBe(5);
      expect(await claim('q', 10, 'w3')).toEqual([]);

      for (let i = 0; i < 20; i++) await enqueue({ queue: 'race' });
      const batches = await Promise.all(['r1', 'r2', 'r3', 'r4', 'r5'].map((w) => claim('race', 3, w)));
      for (const batch of batches) expect(batch.length).toBeLessThanOrEqual(3);
      const rest = await claim('race', 20, 'r6');
      const all = [...batches.flat(), ...rest];
      expect(all).toHaveLength(20);
      expect(new Set(ids(all)).size).toBe(20);
      for (const job of all) expect((await getJob(job.id)).workerId).toBe(job.workerId);
    });

    it('gives every attempt a fresh token', async () => {
      await enqueue();
      const first = await claimOne();
      expect(await setState(outcome('retrying', lease(first), 0))).toBe(true);
      const second = await claimOne('q', 'w2');
      expect(second.leaseToken).not.toBe(first.leaseToken);
      await enqueue();
      const other = await claimOne();
      expect(new Set([first.leaseToken, second.leaseToken, other.leaseToken]).size).toBe(3);
    });
  });

  describe('renewLeases', () => {
    it('pushes each lease to now + leaseMs, answering per lease in input order, without history', async () => {
      await enqueue();
      await enqueue();
      const [c1, c2] = await claim('q', 2);
      clock().advance(10_000);
      const applied = await store().renewLeases({
        leases: [lease(c2!), { id: c1!.id, leaseToken: WRONG_TOKEN }, lease(c1!), { id: UNKNOWN_ID, leaseToken: c1!.leaseToken }],
        leaseMs: 60_000,
      });
      expect(applied).toEqual(['renewed', 'lost', 'renewed', 'lost']);
      for (const c of [c1!, c2!]) {
        const job = await getJob(c.id);
        expect(job.leaseExpiresAt).toEqual(new Date(T0 + 70_000));
        expect(job).toMatchObject({ state: 'running', leaseToken: c.leaseToken, workerId: 'w1', attempt: 1 });
        expect(await history(c.id)).toHaveLength(2);
      }
      expect(await store().renewLeases({ leases: [], leaseMs: 1 })).toEqual([]);
    });

    it('still applies to an expired lease that nobody rescued yet', async () => {
      await enqueue();
      const claimed = await claimOne();
      clock().advance(LEASE_MS + 5_000);
      expect(await write('renew', lease(claimed))).toBe(true);
      expect((await getJob(claimed.id)).leaseExpiresAt).toEqual(new Date(clock().now() + LEASE_MS));
      expect(await store().rescueExpiredJobs()).toEqual([]);
    });
  });
}
