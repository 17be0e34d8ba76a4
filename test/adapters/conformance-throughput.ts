/**
 * Conformance for throughput over time (getThroughput): on a known history, the exact counts
 * and run time percentiles per queue and bucket.
 * Part of describeStoreConformance (conformance.ts), which calls it inside its own describe
 * with a getter for the test's store and clock.
 */
import { describe, expect, it } from 'vitest';
import { conformanceKit, type CurrentStore, lease } from './conformance.js';

export function describeThroughputConformance(current: CurrentStore): void {
  const { store, clock, now, enqueue, claimOne, setState, outcome } = conformanceKit(current);

  describe('getThroughput', () => {
    it('counts completed, retried and dead jobs, and the run time percentiles, per queue and bucket', async () => {
      // Before the window: a whole attempt (not counted), and the start of one that ends in it.
      await enqueue({ queue: 'a' });
      const whole = await claimOne('a');
      clock().advance(10);
      await setState(outcome('completed', lease(whole)));
      const early = await enqueue({ queue: 'a' });
      const earlyClaim = await claimOne('a');
      expect(earlyClaim.id).toBe(early.id);
      clock().advance(59_990);
      const since = now();

      // Bucket 0 of queue a: 61,990 ms (started before the window), 4,000 (failed), 8,000
      // (its second attempt) and 1,000 ms (died).
      clock().advance(2_000);
      await setState(outcome('completed', lease(earlyClaim)));
      await enqueue({ queue: 'a' });
      const first = await claimOne('a');
      clock().advance(4_000);
      await setState(outcome('retrying', lease(first), 0));
      const second = await claimOne('a');
      expect(second).toMatchObject({ id: first.id, attempt: 2 });
      clock().advance(8_000);
      await setState(outcome('completed', lease(second)));
      await enqueue({ queue: 'a' });
      const dying = await claimOne('a');
      clock().advance(1_000);
      await setState(outcome('dead', lease(dying)));

      // Queue b: a job past its expiresAt dies while pending, in bucket 1 (no attempt).
      await enqueue({ queue: 'b', expiresAt: new Date(since.getTime() + 30_000) });
      clock().advance(50_000);
      await store().rescueExpiredJobs();
      // Bucket 1 of queue a: attempts that end otherwise count for the run time only.
      await enqueue({ queue: 'a' });
      const cancelled = await claimOne('a');
      clock().advance(500);
      await setState(outcome('cancelled', lease(cancelled)));
      await enqueue({ queue: 'a' });
      const skipped = await claimOne('a');
      clock().advance(1_500);
      await setState(outcome('skipped', lease(skipped)));
      // A job retried by hand, and one only claimed: nothing to count.
      await store().retryJob({ id: dying.id });
      await claimOne('a');

      expect(await store().getThroughput({ since, bucketMs: 60_000 })).toEqual([
        { queue: 'a', bucket: 0, completed: 2, retried: 1, dead: 1, attempts: 4, p50Ms: 4_000, p95Ms: 61_990, events: 4 },
        { queue: 'a', bucket: 1, completed: 0, retried: 0, dead: 0, attempts: 2, p50Ms: 500, p95Ms: 1_500, events: 2 },
        { queue: 'b', bucket: 1, completed: 0, retried: 0, dead: 1, attempts: 0, p50Ms: null, p95Ms: null, events: 1 },
      ]);
      // Finer buckets from a later start: only the rescue and bucket 1's attempts, apart.
      expect(await store().getThroughput({ since: new Date(since.getTime() + 60_000), bucketMs: 1_000 })).toEqual([
        { queue: 'a', bucket: 5, completed: 0, retried: 0, dead: 0, attempts: 1, p50Ms: 500, p95Ms: 500, events: 1 },
        { queue: 'a', bucket: 7, completed: 0, retried: 0, dead: 0, attempts: 1, p50Ms: 1_500, p95Ms: 1_500, events: 1 },
        { queue: 'b', bucket: 5, completed: 0, retried: 0, dead: 1, attempts: 0, p50Ms: null, p95Ms: null, events: 1 },
      ]);
      expect(await store().getThroughput({ since: new Date(now().getTime() + 1), bucketMs: 60_000 })).toEqual([]);
    });

    it('nearest-rank percentiles over twenty attempts', async () => {
      const since = now();
      for (let ms = 100; ms <= 2_000; ms += 100) {
        await enqueue();
        const claimed = await claimOne();
        clock().advance(ms);
        await setState(outcome('completed', lease(claimed)));
      }
      expect(await store().getThroughput({ since, bucketMs: 3_600_000 })).toEqual([
        { queue: 'q', bucket: 0, completed: 20, retried: 0, dead: 0, attempts: 20, p50Ms: 1_000, p95Ms: 1_900, events: 20 },
      ]);
    });

    it('reads at most maxEvents history rows', async () => {
      const since = now();
      for (let i = 0; i < 5; i++) {
        await enqueue();
        await setState(outcome('completed', lease(await claimOne())));
      }
      const buckets = await store().getThroughput({ since, bucketMs: 1_000, maxEvents: 3 });
      expect(buckets.reduce((sum, b) => sum + b.completed, 0)).toBe(3);
      expect(buckets.reduce((sum, b) => sum + b.events, 0)).toBe(3);
    });
  });
}
