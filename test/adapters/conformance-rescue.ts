/**
 * Conformance for the reaper's batches: `rescueExpiredJobs` changes at most `limit` rows per
 * call, expired leases first, each kind longest overdue first, so that a caller rescues a
 * large backlog in bounded transactions. Part of describeStoreConformance (conformance.ts),
 * which calls it inside its own describe with a getter for the test's store and clock.
 */
import { describe, expect, it } from 'vitest';
import type { JobStore } from '../../src/adapters/store.js';
import type { JobRecord } from '../../src/types.js';
import type { TestClock } from './conformance.js';

const LEASE_MS = 30_000;

export function describeRescueConformance(current: () => { store: JobStore; clock: TestClock }): void {
  const store = () => current().store;
  const clock = () => current().clock;

  async function enqueue(expiresInMs?: number): Promise<JobRecord> {
    const expiresAt = expiresInMs === undefined ? null : new Date(clock().now() + expiresInMs);
    const [result] = await store().enqueueJobs({ jobs: [{ queue: 'q', kind: 'k', payload: {}, maxAttempts: 3, expiresAt }] });
    return result!.job;
  }

  const ids = (jobs: readonly { id: string }[]) => jobs.map((job) => job.id);

  describe('rescueExpiredJobs in batches', () => {
    it('changes at most `limit` rows per call: expired leases first, each kind longest overdue first, answered by id', async () => {
      // Three leases, each claimed 1 s after the last with a lease 2 s shorter: the last
      // claimed expires first.
      const [a, b, c] = [await enqueue(), await enqueue(), await enqueue()];
      for (const leaseMs of [LEASE_MS, LEASE_MS - 2_000, LEASE_MS - 4_000]) {
        clock().advance(1_000);
        await store().claimJobs({ workerId: 'w1', leaseMs, queues: [{ queue: 'q', limit: 1 }] });
      }
      // Two waiting jobs past their expiresAt: `sooner` is overdue longer.
      const later = await enqueue(LEASE_MS + 20_000);
      const sooner = await enqueue(LEASE_MS + 10_000);
      clock().advance(LEASE_MS * 2);

      const first = await store().rescueExpiredJobs({ limit: 2 });
      expect(first).toMatchObject([
        { id: b!.id, state: 'retrying' },
        { id: c!.id, state: 'retrying' },
      ]);
      const second = await store().rescueExpiredJobs({ limit: 2 });
      expect(ids(second)).toEqual([a!.id, sooner.id]);
      const third = await store().rescueExpiredJobs({ limit: 2 });
      expect(third).toMatchObject([{ id: later.id, state: 'dead', error: { code: 'expired' } }]);
      expect(await store().rescueExpiredJobs({ limit: 2 })).toEqual([]);
    });

    it('a lapsed lease retries while its expiresAt is ahead, and is dead once expiresAt has come, to the millisecond', async () => {
      const ahead = await enqueue(LEASE_MS + 2);
      const due = await enqueue(LEASE_MS + 1);
      expect(await store().claimJobs({ workerId: 'w1', leaseMs: LEASE_MS, queues: [{ queue: 'q', limit: 2 }] })).toHaveLength(2);
      // Both leases ended 1 ms ago; `due`'s expiresAt is now, `ahead`'s 1 ms on.
      clock().advance(LEASE_MS + 1);
      expect(await store().rescueExpiredJobs()).toMatchObject([
        { id: ahead.id, state: 'retrying', attempt: 1, error: { code: 'lease_expired' } },
        { id: due.id, state: 'dead', attempt: 1, error: { code: 'lease_expired' } },
      ]);
    });

    it('refuses a limit that is not a positive integer', async () => {
      for (const limit of [0, -1, 1.5, Number.NaN]) {
        await expect(store().rescueExpiredJobs({ limit })).rejects.toMatchObject({ code: 'invalid_option' });
      }
    });

    it('rescues up to 1,000 rows by default', async () => {
      await store().enqueueJobs({ jobs: Array.from({ length: 1_001 }, () => ({ queue: 'q', kind: 'k', payload: {}, maxAttempts: 3 })) });
      expect(await store().claimJobs({ workerId: 'w1', leaseMs: LEASE_MS, queues: [{ queue: 'q', limit: 1_001 }] })).toHaveLength(1_001);
      clock().advance(LEASE_MS + 1);
      expect(await store().rescueExpiredJobs()).toHaveLength(1_000);
      expect(await store().rescueExpiredJobs()).toHaveLength(1);
    });
  });
}
