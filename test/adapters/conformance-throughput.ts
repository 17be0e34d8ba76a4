/**
 * Conformance for throughput over time (getThroughput): on a known history, the exact counts
 * and run time percentiles per queue and bucket. The throughput summary
 * (getThroughputSummary, saveThroughputSummary): closed buckets saved once, pruned in bounded
 * batches. And the inspector's throughput on each store: a fresh inspector reads the summary
 * an earlier one saved, shows the numbers that one read from the history, and still shows
 * them once the jobs are pruned.
 * Part of describeStoreConformance (conformance.ts), which calls it inside its own describe
 * with a getter for the test's store and clock.
 */
import { describe, expect, it } from 'vitest';
import { type GetThroughputParams, type JobStore, type QueueActivity, THROUGHPUT_SUMMARY_PRUNE_BATCH } from '../../src/adapters/store.js';
import { ThroughputStats } from '../../src/inspector/throughput.js';
import { conformanceKit, type CurrentStore, lease, type OutcomeState } from './conformance.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

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
        // Run times binned (run-time-bins.ts): [bin, count, longest].
        { queue: 'a', bucket: 0, completed: 2, retried: 1, dead: 1, attempts: 4, p50Ms: 4_000, p95Ms: 61_990, events: 4,
          runTimes: [[63, 1, 1_000], [79, 1, 4_000], [87, 1, 8_000], [111, 1, 61_990]] },
        { queue: 'a', bucket: 1, completed: 0, retried: 0, dead: 0, attempts: 2, p50Ms: 500, p95Ms: 1_500, events: 2, runTimes: [[55, 1, 500], [68, 1, 1_500]] },
        { queue: 'b', bucket: 1, completed: 0, retried: 0, dead: 1, attempts: 0, p50Ms: null, p95Ms: null, events: 1, runTimes: [] },
      ]);
      // Finer buckets from a later start: only the rescue and bucket 1's attempts, apart.
      expect(await store().getThroughput({ since: new Date(since.getTime() + 60_000), bucketMs: 1_000 })).toEqual([
        { queue: 'a', bucket: 5, completed: 0, retried: 0, dead: 0, attempts: 1, p50Ms: 500, p95Ms: 500, events: 1, runTimes: [[55, 1, 500]] },
        { queue: 'a', bucket: 7, completed: 0, retried: 0, dead: 0, attempts: 1, p50Ms: 1_500, p95Ms: 1_500, events: 1, runTimes: [[68, 1, 1_500]] },
        { queue: 'b', bucket: 5, completed: 0, retried: 0, dead: 1, attempts: 0, p50Ms: null, p95Ms: null, events: 1, runTimes: [] },
      ]);
      expect(await store().getThroughput({ since: new Date(now().getTime() + 1), bucketMs: 60_000 })).toEqual([]);
      // With an end: bucket 0 alone.
      expect(await store().getThroughput({ since, until: new Date(since.getTime() + 60_000), bucketMs: 60_000 })).toEqual([
        expect.objectContaining({ queue: 'a', bucket: 0, completed: 2, retried: 1, dead: 1, attempts: 4, events: 4 }),
      ]);
    });

    it('nearest-rank percentiles over twenty attempts', async () => {
      const since = now();
      for (let ms = 100; ms <= 2_000; ms += 100) {
        await enqueue();
        const claimed = await claimOne();
        clock().advance(ms);
        await setState(outcome('completed', lease(claimed)));
      }
      // Binned, 1,600 and 1,700 ms share a bin, and so do 1,900 and 2,000.
      const runTimes = [
        [37, 1, 100], [45, 1, 200], [49, 1, 300], [53, 1, 400], [55, 1, 500], [57, 1, 600], [59, 1, 700], [61, 1, 800], [62, 1, 900],
        [63, 1, 1_000], [64, 1, 1_100], [65, 1, 1_200], [66, 1, 1_300], [67, 1, 1_400], [68, 1, 1_500], [69, 2, 1_700], [70, 1, 1_800], [71, 2, 2_000],
      ];
      expect(await store().getThroughput({ since, bucketMs: 3_600_000 })).toEqual([
        { queue: 'q', bucket: 0, completed: 20, retried: 0, dead: 0, attempts: 20, p50Ms: 1_000, p95Ms: 1_900, runTimes, events: 20 },
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

  describe('the throughput summary', () => {
    const activity = (queue: string, completed: number): QueueActivity => ({
      queue,
      completed,
      retried: 0,
      dead: 0,
      attempts: completed,
      p50Ms: 40,
      p95Ms: 45,
      runTimes: [[43, completed, 45]],
    });

    it('keeps each closed bucket as first saved, per width, an idle one too', async () => {
      const t = now().getTime();
      const pruneBefore = new Date(t - HOUR);
      await store().saveThroughputSummary({
        bucketMs: MINUTE,
        pruneBefore,
        buckets: [
          { start: new Date(t), queues: [activity('a', 2), activity('b', 1)] },
          { start: new Date(t + MINUTE), queues: [] },
        ],
      });
      await store().saveThroughputSummary({
        bucketMs: MINUTE,
        pruneBefore,
        buckets: [
          { start: new Date(t + MINUTE), queues: [activity('a', 9)] },
          { start: new Date(t + 2 * MINUTE), queues: [activity('c', 3)] },
        ],
      });
      await store().saveThroughputSummary({ bucketMs: HOUR, pruneBefore, buckets: [{ start: new Date(t), queues: [activity('a', 5)] }] });

      expect(await store().getThroughputSummary({ bucketMs: MINUTE, since: new Date(t), until: new Date(t + 3 * MINUTE) })).toEqual([
        { start: new Date(t), queues: [activity('a', 2), activity('b', 1)] },
        { start: new Date(t + MINUTE), queues: [] },
        { start: new Date(t + 2 * MINUTE), queues: [activity('c', 3)] },
      ]);
      expect(await store().getThroughputSummary({ bucketMs: MINUTE, since: new Date(t + MINUTE), until: new Date(t + 2 * MINUTE) })).toEqual([
        { start: new Date(t + MINUTE), queues: [] },
      ]);
      expect(await store().getThroughputSummary({ bucketMs: HOUR, since: new Date(t - HOUR), until: new Date(t + HOUR) })).toEqual([
        { start: new Date(t), queues: [activity('a', 5)] },
      ]);
    });

    it('deletes at most a batch of saved buckets older than pruneBefore per save, of its width only, and saves none older', async () => {
      const t = now().getTime();
      const old = Array.from({ length: THROUGHPUT_SUMMARY_PRUNE_BATCH + 1 }, (_, i) => ({ start: new Date(t + i * MINUTE), queues: [activity('a', 1)] }));
      await store().saveThroughputSummary({ bucketMs: MINUTE, pruneBefore: new Date(t), buckets: old });
      await store().saveThroughputSummary({ bucketMs: HOUR, pruneBefore: new Date(t), buckets: [{ start: new Date(t), queues: [] }] });
      const later = t + old.length * MINUTE;
      const starts = async (bucketMs: number) =>
        (await store().getThroughputSummary({ bucketMs, since: new Date(t - HOUR), until: new Date(later + HOUR) })).map((b) => b.start.getTime());

      await store().saveThroughputSummary({
        bucketMs: MINUTE,
        pruneBefore: new Date(later),
        buckets: [
          { start: new Date(t - MINUTE), queues: [activity('a', 1)] },
          { start: new Date(later), queues: [activity('a', 1)] },
        ],
      });
      expect(await starts(MINUTE)).toEqual([later - MINUTE, later]);
      await store().saveThroughputSummary({ bucketMs: MINUTE, pruneBefore: new Date(later), buckets: [] });
      expect(await starts(MINUTE)).toEqual([later]);
      expect(await starts(HOUR)).toEqual([t]);
    });
  });

  describe("the inspector's throughput", () => {
    /** A job of `queue` that runs `ms` and ends in `state` (a retry runs again at once). */
    async function run(queue: string, ms: number, state: OutcomeState = 'completed'): Promise<void> {
      await enqueue({ queue });
      const claimed = await claimOne(queue);
      clock().advance(ms);
      await setState(outcome(state, lease(claimed), 0));
    }

    /** The store with the `since` of each getThroughput call recorded. */
    function watched(reads: GetThroughputParams[]): JobStore {
      return new Proxy(store(), {
        get(target, name) {
          if (name === 'getThroughput') return (params: GetThroughputParams) => (reads.push(params), target.getThroughput(params));
          const value = Reflect.get(target, name) as unknown;
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    }

    it('a fresh inspector reads what an earlier one saved, the same numbers, and they outlive pruned jobs', async () => {
      // T0 is a whole hour. Four hours of history, some in the last two minutes.
      const T = now().getTime();
      const at = async (offset: number) => clock().advance(T + offset - now().getTime());
      await at(5 * MINUTE);
      await run('a', 1_900);
      await run('a', 2_000);
      await run('b', 30, 'dead');
      await at(HOUR + 5 * MINUTE);
      await run('a', 20, 'retrying');
      const again = await claimOne('a');
      clock().advance(10);
      await setState(outcome('completed', lease(again)));
      await at(2 * HOUR + 10 * MINUTE);
      await run('b', 17);
      await run('a', 2_500);
      await at(3 * HOUR + 20 * MINUTE);
      await run('a', 123);
      await at(3 * HOUR + 44 * MINUTE + 40_000);
      await run('b', 50);
      await at(3 * HOUR + 45 * MINUTE + 30_000);
      const read = async (reads: GetThroughputParams[] = []) => {
        const stats = new ThroughputStats(watched(reads), 0, () => clock().now());
        return { hour: await stats.read('1h'), day: await stats.read('24h') };
      };

      const first = await read();
      const day = (queue: string) => first.day.queues.find((q) => q.queue === queue)!;
      expect(day('a').completed.slice(-5)).toEqual([0, 2, 1, 1, 1]);
      expect(day('a').retried.slice(-5)).toEqual([0, 0, 1, 0, 0]);
      // An hour's percentiles come from its run time bins: 1,900 and 2,000 ms share one, so
      // the first hour's p50 is 2,000 (exact: 1,900).
      expect(day('a').p50Ms.slice(-5)).toEqual([null, 2_000, 10, 2_500, 123]);
      expect(day('a').p95Ms.slice(-5)).toEqual([null, 2_000, 20, 2_500, 123]);
      expect(day('b').dead.slice(-5)).toEqual([0, 1, 0, 0, 0]);
      expect(day('b').completed.slice(-5)).toEqual([0, 0, 0, 1, 1]);
      expect(first.hour.queues.find((q) => q.queue === 'a')!.completed[34]).toBe(1);

      // A fresh inspector: the summary, and from the history only the last two minutes.
      const reads: GetThroughputParams[] = [];
      expect(await read(reads)).toEqual(first);
      const open = Math.floor(now().getTime() / MINUTE) * MINUTE - MINUTE;
      expect(reads.length).toBeGreaterThan(0);
      for (const params of reads) expect(params.since.getTime()).toBeGreaterThanOrEqual(open);

      // The jobs that ended before the open minutes go with their history; not their throughput.
      await store().pruneJobs({ completedBefore: new Date(open), deadBefore: new Date(open) });
      expect(await store().getThroughput({ since: new Date(T), bucketMs: HOUR })).toEqual([expect.objectContaining({ queue: 'b', completed: 1 })]);
      expect(await read()).toEqual(first);
    });
  });
}
