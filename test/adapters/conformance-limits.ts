/**
 * Conformance for what bounds when jobs run: concurrency keys, queue rate limits and
 * schedules. Part of describeStoreConformance (conformance.ts), which calls it inside its
 * own describe with a getter for the test's store and clock.
 */
import { describe, expect, it, vi } from 'vitest';
import type { ClaimQueue, EnqueueJob, JobStore, ScheduleAdvance } from '../../src/adapters/store.js';
import type { ClaimedJob, JobRecord } from '../../src/types.js';
import type { TestClock } from './conformance.js';

const LEASE_MS = 30_000;

export function describeLimitsConformance(current: () => { store: JobStore; clock: TestClock }): void {
  const store = () => current().store;
  const clock = () => current().clock;

  async function enqueue(jobs: Partial<EnqueueJob>[]): Promise<JobRecord[]> {
    const results = await store().enqueueJobs({
      jobs: jobs.map((job) => ({ queue: 'q', kind: 'k', payload: {}, maxAttempts: 3, ...job })),
    });
    return results.map((r) => r.job);
  }

  async function claim(entry: Partial<ClaimQueue> = {}, workerId = 'w1'): Promise<ClaimedJob[]> {
    return store().claimJobs({ workerId, leaseMs: LEASE_MS, queues: [{ queue: 'q', limit: 10, ...entry }] });
  }

  const lease = (job: ClaimedJob) => ({ id: job.id, leaseToken: job.leaseToken });

  async function complete(job: ClaimedJob): Promise<void> {
    const [applied] = await store().setStatesIfRunning({ outcomes: [{ ...lease(job), state: 'completed', result: null }] });
    expect(applied).toBe(true);
  }

  const idsOf = (jobs: readonly { id: string }[]) => jobs.map((job) => job.id);

  describe('concurrency keys', () => {
    it('of the longest length the library allows (1,000 bytes) are stored, indexed as running and claimed', async () => {
      const unique = 'u'.repeat(1_000);
      const key = 'é'.repeat(500);
      const [a, b] = await enqueue([{ uniqueKey: unique, concurrencyKey: key }, { concurrencyKey: key }]);
      expect(a).toMatchObject({ uniqueKey: unique, concurrencyKey: key });
      expect(idsOf(await claim())).toEqual([a!.id]);
      const [running] = await claim();
      expect(running).toBeUndefined();
      expect((await store().getJob({ id: b!.id }))!.state).toBe('pending');
    });

    it('are stored on the row; by default one job per key runs, and jobs without a key are not limited', async () => {
      const [a1, b1, a2, n1, n2] = await enqueue([
        { concurrencyKey: 'a' },
        { concurrencyKey: 'b' },
        { concurrencyKey: 'a' },
        {},
        { concurrencyKey: null },
      ]);
      expect(a1).toMatchObject({ concurrencyKey: 'a' });
      expect(n1).toMatchObject({ concurrencyKey: null });
      const claimed = await claim();
      expect(idsOf(claimed)).toEqual(idsOf([a1!, b1!, n1!, n2!]));
      expect(claimed[0]).toMatchObject({ concurrencyKey: 'a' });
      expect(await claim()).toEqual([]);
      await complete(claimed[0]!);
      expect(idsOf(await claim())).toEqual([a2!.id]);
    });

    it('run up to perKeyLimit per key, counting the jobs already running', async () => {
      const [a1, a2, a3, a4] = await enqueue(Array.from({ length: 4 }, () => ({ concurrencyKey: 'a' })));
      expect(idsOf(await claim({ limit: 1, perKeyLimit: 3 }))).toEqual([a1!.id]);
      expect(idsOf(await claim({ perKeyLimit: 3 }))).toEqual([a2!.id, a3!.id]);
      expect(await claim({ perKeyLimit: 3 }, 'w2')).toEqual([]);
      expect(idsOf(await claim({ perKeyLimit: 4 }, 'w2'))).toEqual([a4!.id]);
    });

    it('are per queue', async () => {
      const [q1] = await enqueue([{ concurrencyKey: 'a' }]);
      const [q2] = await enqueue([{ queue: 'other', concurrencyKey: 'a' }]);
      const claimed = await store().claimJobs({
        workerId: 'w1',
        leaseMs: LEASE_MS,
        queues: [{ queue: 'q', limit: 5 }, { queue: 'other', limit: 5 }],
      });
      expect(idsOf(claimed)).toEqual([q1!.id, q2!.id]);
    });

    it('pass over a key at its limit to the jobs behind it', async () => {
      const [, a2, , b1] = await enqueue([
        { concurrencyKey: 'a' },
        { concurrencyKey: 'a', priority: 5 },
        { concurrencyKey: 'a', priority: 5 },
        { concurrencyKey: 'b' },
      ]);
      expect(idsOf(await claim({ limit: 1 }))).toEqual([a2!.id]);
      expect(idsOf(await claim({ limit: 1 }))).toEqual([b1!.id]);
      expect(await claim({ limit: 1 })).toEqual([]);
    });

    it('free the key on every way out of running: each outcome, and the reaper', async () => {
      for (const state of ['completed', 'retrying', 'dead', 'skipped', 'cancelled', 'rescued'] as const) {
        const key = `key-${state}`;
        const [first, second] = await enqueue([{ concurrencyKey: key }, { concurrencyKey: key }]);
        const [running] = await claim();
        expect(running?.id).toBe(first!.id);
        if (state === 'rescued') {
          clock().advance(LEASE_MS + 1);
          expect(idsOf(await store().rescueExpiredJobs())).toEqual([first!.id]);
        } else {
          const error = { code: 'x', message: 'x' };
          const outcome =
            state === 'completed'
              ? { ...lease(running!), state, result: null }
              : state === 'retrying'
                ? { ...lease(running!), state, error, delayMs: 3_600_000 }
                : { ...lease(running!), state, error };
          expect(await store().setStatesIfRunning({ outcomes: [outcome] })).toEqual([true]);
        }
        // The second job of the key runs: it comes first even beside a rescued first job, whose
        // runAt moved to the time of its rescue.
        const next = await claim();
        expect(idsOf(next), state).toEqual([second!.id]);
        await complete(next[0]!);
      }
    });
  });

  describe('rate limits', () => {
    const rateLimit = { max: 3, intervalMs: 1_000 };

    it('claim at most max per interval, counting every worker, in a sliding window', async () => {
      await enqueue(Array.from({ length: 12 }, () => ({})));
      expect(await claim({ limit: 2, rateLimit })).toHaveLength(2); // t = 0: 2
      expect(await claim({ limit: 2, rateLimit }, 'w2')).toHaveLength(1); // t = 0: 3
      expect(await claim({ rateLimit }, 'w3')).toHaveLength(0);
      clock().advance(999);
      expect(await claim({ rateLimit })).toHaveLength(0);
      clock().advance(1); // t = 1,000: the 3 claims of t = 0 leave the window
      expect(await claim({ limit: 1, rateLimit })).toHaveLength(1);
      clock().advance(500); // t = 1,500: the claim of t = 1,000 is inside
      expect(await claim({ rateLimit }, 'w2')).toHaveLength(2);
      clock().advance(999); // t = 2,499: the claim of t = 1,000 left, the 2 of t = 1,500 are inside
      expect(await claim({ rateLimit })).toHaveLength(1);
      expect(await claim({ rateLimit })).toHaveLength(0);
      clock().advance(1); // t = 2,500: the 2 of t = 1,500 left
      expect(await claim({ rateLimit })).toHaveLength(2);
    });

    it('are per queue; a queue without one is not limited, nor are later claims with none', async () => {
      await enqueue(Array.from({ length: 5 }, () => ({})));
      await enqueue(Array.from({ length: 5 }, () => ({ queue: 'free' })));
      const claimed = await store().claimJobs({
        workerId: 'w1',
        leaseMs: LEASE_MS,
        queues: [
          { queue: 'q', limit: 5, rateLimit: { max: 1, intervalMs: 60_000 } },
          { queue: 'free', limit: 5 },
        ],
      });
      expect(claimed.map((job) => job.queue)).toEqual(['q', 'free', 'free', 'free', 'free', 'free']);
      expect(await claim({ rateLimit: { max: 1, intervalMs: 60_000 } })).toHaveLength(0);
    });

    it('count a job claimed again after a retry as another start, and combine with keys', async () => {
      const [a1, , b1] = await enqueue([{ concurrencyKey: 'a' }, { concurrencyKey: 'a' }, { concurrencyKey: 'b' }]);
      const limited = { rateLimit: { max: 2, intervalMs: 10_000 } };
      // The window allows 2, so the claim looks at 2 jobs: a1, and a2, which waits for its key.
      const [first] = await claim(limited);
      expect(first?.id).toBe(a1!.id);
      expect(idsOf(await claim(limited))).toEqual([b1!.id]);
      const [retried] = await store().setStatesIfRunning({
        outcomes: [{ ...lease(first!), state: 'retrying', error: { code: 'x', message: 'x' }, delayMs: 0 }],
      });
      expect(retried).toBe(true);
      expect(await claim(limited)).toEqual([]);
      clock().advance(10_000);
      expect(idsOf(await claim(limited))).toEqual([a1!.id]);
    });
  });

  describe('schedules', () => {
    const t = (ms: number) => new Date(Date.UTC(2030, 0, 1) + ms);
    const tickJob = (n: number): EnqueueJob => ({
      queue: 'cron', kind: 'tick', payload: { n }, maxAttempts: 1, runAt: t(n), uniqueKey: `nightly@${n}`,
    });
    const advance = (schedule: string, previous: number | null, tick: number, jobs: EnqueueJob[] = []): ScheduleAdvance => ({
      schedule, previousTickAt: previous === null ? null : t(previous), tickAt: t(tick), jobs,
    });
    const advanceOne = async (a: ScheduleAdvance) => (await store().enqueueScheduledJobs({ advances: [a] }))[0];
    const schedules = async (names: string[]) => (await store().getSchedules({ names })).schedules;

    it('register once: the first advance with no previous tick applies, a second does not', async () => {
      expect(await schedules(['nightly'])).toEqual([]);
      expect(await advanceOne(advance('nightly', null, 0))).toBe(true);
      expect(await advanceOne(advance('nightly', null, 5))).toBe(false);
      expect(await schedules(['nightly', 'unknown'])).toEqual([{ name: 'nightly', lastTickAt: t(0), pausedAt: null }]);
    });

    it('advance by compare-and-set with their jobs: a stale previous tick applies and enqueues nothing', async () => {
      await advanceOne(advance('nightly', null, 0));
      // Every tick below is past by the store's clock.
      clock().advance(180_000);
      expect(await advanceOne(advance('nightly', 0, 60_000, [tickJob(60_000)]))).toBe(true);
      expect(await advanceOne(advance('nightly', 0, 60_000, [tickJob(60_000)]))).toBe(false);
      expect(await advanceOne(advance('nightly', 0, 120_000, [tickJob(120_000)]))).toBe(false);
      expect(await advanceOne(advance('nightly', 60_000, 180_000, [tickJob(120_000), tickJob(180_000)]))).toBe(true);
      const jobs = (await store().listJobs({ queue: 'cron' })).reverse();
      expect(jobs.map((job) => [job.payload, job.runAt, job.uniqueKey, job.state])).toEqual([
        [{ n: 60_000 }, t(60_000), 'nightly@60000', 'pending'],
        [{ n: 120_000 }, t(120_000), 'nightly@120000', 'pending'],
        [{ n: 180_000 }, t(180_000), 'nightly@180000', 'pending'],
      ]);
      expect((await store().getJobEvents({ id: jobs[0]!.id })).map((e) => e.toState)).toEqual(['pending']);
      expect(await schedules(['nightly'])).toEqual([{ name: 'nightly', lastTickAt: t(180_000), pausedAt: null }]);
    });

    it('pause: the schedule advances tick by tick and enqueues nothing until resumed; unknown names answer null', async () => {
      expect(await store().pauseSchedule({ name: 'nightly' })).toBeNull();
      expect(await store().resumeSchedule({ name: 'nightly' })).toBeNull();
      await advanceOne(advance('nightly', null, 0));
      clock().advance(180_000);
      const pausedAt = new Date(clock().now());
      expect(await store().pauseSchedule({ name: 'nightly' })).toEqual({ name: 'nightly', lastTickAt: t(0), pausedAt });
      clock().advance(1_000);
      // Paused again: it keeps the first pausedAt.
      expect(await store().pauseSchedule({ name: 'nightly' })).toEqual({ name: 'nightly', lastTickAt: t(0), pausedAt });
      expect(await advanceOne(advance('nightly', 0, 60_000, [tickJob(60_000)]))).toBe(true);
      expect(await schedules(['nightly'])).toEqual([{ name: 'nightly', lastTickAt: t(60_000), pausedAt }]);
      // A stale advance of a paused schedule still does not apply.
      expect(await advanceOne(advance('nightly', 0, 120_000, [tickJob(120_000)]))).toBe(false);
      expect(await store().listJobs({ queue: 'cron' })).toEqual([]);
      expect(await store().resumeSchedule({ name: 'nightly' })).toEqual({ name: 'nightly', lastTickAt: t(60_000), pausedAt: null });
      expect(await advanceOne(advance('nightly', 60_000, 120_000, [tickJob(120_000)]))).toBe(true);
      expect((await store().listJobs({ queue: 'cron' })).map((job) => job.payload)).toEqual([{ n: 120_000 }]);
    });

    it('never enqueue a tick again once it is past, even after its job finished', async () => {
      await advanceOne(advance('nightly', null, 0));
      clock().advance(60_000);
      expect(await advanceOne(advance('nightly', 0, 60_000, [tickJob(60_000)]))).toBe(true);
      const [job] = await store().claimJobs({ workerId: 'w1', leaseMs: LEASE_MS, queues: [{ queue: 'cron', limit: 1 }] });
      await complete(job!);
      expect(await advanceOne(advance('nightly', 0, 60_000, [tickJob(60_000)]))).toBe(false);
      expect(await store().listJobs({ queue: 'cron' })).toHaveLength(1);
    });

    it('answer per entry in input order; a live unique key keeps its job and the tick still counts', async () => {
      await store().enqueueScheduledJobs({ advances: [advance('a', null, 0), advance('b', null, 0)] });
      clock().advance(60_000);
      const [held] = await enqueue([{ queue: 'cron', kind: 'tick', uniqueKey: 'overlap' }]);
      const overlapping = { ...tickJob(60_000), uniqueKey: 'overlap' };
      expect(
        await store().enqueueScheduledJobs({
          advances: [advance('a', 5, 60_000, [tickJob(60_000)]), advance('b', 0, 60_000, [overlapping]), advance('c', null, 0)],
        }),
      ).toEqual([false, true, true]);
      expect(idsOf(await store().listJobs({ queue: 'cron' }))).toEqual([held!.id]);
      expect(await schedules(['c', 'b', 'a'])).toEqual([
        { name: 'a', lastTickAt: t(0), pausedAt: null },
        { name: 'b', lastTickAt: t(60_000), pausedAt: null },
        { name: 'c', lastTickAt: t(0), pausedAt: null },
      ]);
    });

    it('answer with the store\'s now, also when no schedule is named or known', async () => {
      clock().advance(1_234);
      expect(await store().getSchedules({ names: [] })).toEqual({ now: new Date(clock().now()), schedules: [] });
      await advanceOne(advance('nightly', null, 0));
      expect(await store().getSchedules({ names: ['nightly', 'unknown'] })).toEqual({
        now: new Date(clock().now()),
        schedules: [{ name: 'nightly', lastTickAt: t(0), pausedAt: null }],
      });
    });

    it('never write a tick before its time by the store\'s clock: it does not apply, nothing is enqueued, until the clock reaches it', async () => {
      await advanceOne(advance('nightly', null, 0));
      clock().advance(59_999);
      // The caller thinks it due (a clock ahead of the store's); the store says it is not.
      expect(
        await store().enqueueScheduledJobs({
          advances: [advance('nightly', 0, 60_000, [tickJob(60_000)]), advance('early', null, 60_000), advance('hourly', null, 59_999)],
        }),
      ).toEqual([false, false, true]);
      expect(await store().listJobs({ queue: 'cron' })).toEqual([]);
      expect(await schedules(['early', 'hourly', 'nightly'])).toEqual([
        { name: 'hourly', lastTickAt: t(59_999), pausedAt: null },
        { name: 'nightly', lastTickAt: t(0), pausedAt: null },
      ]);
      clock().advance(1);
      // At its time to the millisecond, it is written.
      expect(await advanceOne(advance('nightly', 0, 60_000, [tickJob(60_000)]))).toBe(true);
      expect((await store().listJobs({ queue: 'cron' })).map((job) => job.uniqueKey)).toEqual(['nightly@60000']);
      expect(await schedules(['nightly'])).toEqual([{ name: 'nightly', lastTickAt: t(60_000), pausedAt: null }]);
    });

    it('refuse a call that names a schedule twice', async () => {
      await expect(
        store().enqueueScheduledJobs({ advances: [advance('a', null, 0), advance('a', 0, 5)] }),
      ).rejects.toMatchObject({ code: 'invalid_option' });
    });

    it('wake the queues they enqueue into', async (ctx) => {
      if (!store().capabilities.notifications) ctx.skip();
      const woken: string[] = [];
      const unsubscribe = await store().subscribe((queue) => woken.push(queue ?? '(any queue)'));
      await advanceOne(advance('nightly', null, 0));
      clock().advance(60_000);
      await advanceOne(advance('nightly', 0, 60_000, [tickJob(60_000)]));
      await vi.waitFor(() => expect(woken).toEqual(['cron']), { timeout: 5_000, interval: 5 });
      await unsubscribe();
    });
  });
}
