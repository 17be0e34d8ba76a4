/**
 * Conformance for the reads the CLI and the inspector make: list, count, scan and backlogs.
 * Part of describeStoreConformance (conformance.ts), which calls it inside its own describe
 * with a getter for the test's store and clock.
 */
import { describe, expect, it } from 'vitest';
import { toJobListing } from '../../src/adapters/job-listing.js';
import type { JobListing, ScanJobsParams } from '../../src/adapters/store.js';
import type { JobRecord, JobState } from '../../src/types.js';
import { conformanceKit, type CurrentStore, ids, lease, T0 } from './conformance.js';

export function describeReadConformance(current: CurrentStore): void {
  const { store, clock, now, enqueue, claimOne, getJob, jobIn, setState } = conformanceKit(current);

  describe('listJobs', () => {
    it('lists newest first, 50 by default', async () => {
      await store().enqueueJobs({
        jobs: Array.from({ length: 55 }, (_, i) => ({ queue: 'q', kind: 'k', payload: i, maxAttempts: 1 })),
      });
      const page = await store().listJobs({});
      expect(page).toHaveLength(50);
      expect(page.map((job) => job.payload)).toEqual(Array.from({ length: 50 }, (_, i) => 54 - i));
    });

    it('pages with beforeId', async () => {
      const made: string[] = [];
      for (let i = 0; i < 7; i++) made.push((await enqueue()).id);
      const newestFirst = [...made].reverse();
      const p1 = await store().listJobs({ limit: 3 });
      expect(ids(p1)).toEqual(newestFirst.slice(0, 3));
      const p2 = await store().listJobs({ limit: 3, beforeId: p1.at(-1)!.id });
      expect(ids(p2)).toEqual(newestFirst.slice(3, 6));
      const p3 = await store().listJobs({ limit: 3, beforeId: p2.at(-1)!.id });
      expect(ids(p3)).toEqual(newestFirst.slice(6));
      expect(await store().listJobs({ limit: 3, beforeId: p3.at(-1)!.id })).toEqual([]);
      expect(p1[0]).toEqual(await getJob(p1[0]!.id));
    });

    it('filters by queue, state and kind, alone or together', async () => {
      const a1 = await enqueue({ queue: 'a', kind: 'x' });
      const a2 = await enqueue({ queue: 'a', kind: 'y' });
      const b1 = await enqueue({ queue: 'b', kind: 'x' });
      const a3 = await enqueue({ queue: 'a', kind: 'x' });
      const running = await claimOne('b');
      expect(running.id).toBe(b1.id);
      await store().cancelJob({ id: a1.id });

      expect(ids(await store().listJobs({ queue: 'a' }))).toEqual([a3.id, a2.id, a1.id]);
      expect(ids(await store().listJobs({ kind: 'x' }))).toEqual([a3.id, b1.id, a1.id]);
      expect(ids(await store().listJobs({ state: 'pending' }))).toEqual([a3.id, a2.id]);
      expect(ids(await store().listJobs({ state: 'running' }))).toEqual([b1.id]);
      expect(ids(await store().listJobs({ queue: 'a', kind: 'x', state: 'pending' }))).toEqual([a3.id]);
      expect(ids(await store().listJobs({ queue: 'a', kind: 'x', limit: 1, beforeId: a3.id }))).toEqual([a1.id]);
      expect(await store().listJobs({ queue: 'nope' })).toEqual([]);
    });
  });

  describe('countJobs', () => {
    it('counts by queue and state, leaving out zero counts', async () => {
      expect(await store().countJobs()).toEqual([]);
      await jobIn('running', { queue: 'a' });
      await jobIn('completed', { queue: 'a' });
      await jobIn('pending', { queue: 'a' });
      await jobIn('pending', { queue: 'a' });
      await jobIn('dead', { queue: 'b' });
      const counts = await store().countJobs();
      const sorted = [...counts].sort((x, y) => `${x.queue}/${x.state}`.localeCompare(`${y.queue}/${y.state}`));
      expect(sorted).toEqual([
        { queue: 'a', state: 'completed', count: 1 },
        { queue: 'a', state: 'pending', count: 2 },
        { queue: 'a', state: 'running', count: 1 },
        { queue: 'b', state: 'dead', count: 1 },
      ]);
    });
  });

  describe('scanJobs', () => {
    /** Every page from the newest on, until the store says there is no next one. */
    async function allPages(params: ScanJobsParams): Promise<{ pages: JobListing[][]; jobs: JobListing[] }> {
      const pages: JobListing[][] = [];
      let beforeId: string | undefined;
      for (let i = 0; i < 100; i++) {
        const page = await store().scanJobs({ ...params, ...(beforeId === undefined ? {} : { beforeId }) });
        pages.push(page.jobs);
        if (page.nextBeforeId === null) return { pages, jobs: pages.flat() };
        beforeId = page.nextBeforeId;
      }
      throw new Error('scanJobs never reached the last page');
    }

    it('pages newest first through every match of the filters, whatever the page and scan sizes', async () => {
      // Pending jobs last: jobIn claims the only due job of its queue.
      await jobIn('completed', { queue: 'a', kind: 'x', uniqueKey: 'k1' });
      await jobIn('dead', { queue: 'b', kind: 'x' });
      await jobIn('dead', { queue: 'a', kind: 'y' });
      await jobIn('running', { queue: 'b', kind: 'y', uniqueKey: 'k1' });
      await jobIn('cancelled', { queue: 'a', kind: 'x' });
      await jobIn('skipped', { queue: 'c', kind: 'x' });
      await jobIn('retrying', { queue: 'b', kind: 'x' });
      await jobIn('dead', { queue: 'c', kind: 'x' });
      await jobIn('completed', { queue: 'b', kind: 'y' });
      await jobIn('running', { queue: 'a', kind: 'x' });
      await jobIn('pending', { queue: 'a', kind: 'y' });
      await jobIn('pending', { queue: 'b', kind: 'x', uniqueKey: 'k2' });
      const everyJob = await store().listJobs({ limit: 1_000 });
      expect(everyJob).toHaveLength(12);

      const filters: ScanJobsParams[] = [
        {},
        { queue: 'a' },
        { kind: 'x', queue: 'b' },
        { state: 'pending' },
        { state: 'completed' },
        { state: 'retrying' },
        { state: 'running' },
        { state: 'running', queue: 'a' },
        { state: 'dead' },
        { state: 'dead', queue: 'a' },
        { state: 'dead', kind: 'x' },
        { state: 'cancelled' },
        { state: 'skipped', queue: 'c' },
        { uniqueKey: 'k1' },
        { uniqueKey: 'k1', queue: 'b', state: 'running' },
        { queue: 'nope' },
        { state: 'dead', queue: 'nope' },
      ];
      for (const filter of filters) {
        const expected = everyJob.filter(
          (job) =>
            (filter.queue === undefined || job.queue === filter.queue) &&
            (filter.state === undefined || job.state === filter.state) &&
            (filter.kind === undefined || job.kind === filter.kind) &&
            (filter.uniqueKey === undefined || job.uniqueKey === filter.uniqueKey),
        );
        for (const sizes of [{}, { limit: 2, maxScan: 3 }, { limit: 1, maxScan: 1 }, { limit: 3, maxScan: 100 }]) {
          const { pages, jobs } = await allPages({ ...filter, ...sizes });
          expect({ filter, sizes, ids: ids(jobs) }).toEqual({ filter, sizes, ids: ids(expected) });
          for (const page of pages) expect(page.length).toBeLessThanOrEqual(sizes.limit ?? 50);
        }
      }
      const newestRunning = everyJob.find((job) => job.state === 'running')!;
      expect((await store().scanJobs({ state: 'running' })).jobs[0]).toEqual(toJobListing(await getJob(newestRunning.id)));
    });

    it('answers every match in one page when they fit, with no next page', async () => {
      for (let i = 0; i < 5; i++) await enqueue();
      const page = await store().scanJobs({ queue: 'q' });
      expect(page.jobs).toHaveLength(5);
      expect(page.nextBeforeId).toBeNull();
      expect(await store().scanJobs({ beforeId: page.jobs[4]!.id })).toEqual({ jobs: [], nextBeforeId: null });
    });

    it('stops after maxScan jobs with a short page, and goes on from where it stopped', async () => {
      const old = await enqueue({ queue: 'rare' });
      const common = [];
      for (let i = 0; i < 4; i++) common.push(await enqueue({ queue: 'common' }));
      const first = await store().scanJobs({ queue: 'rare', maxScan: 2 });
      expect(first.jobs).toEqual([]);
      // Newest first: the two newest examined, the page goes on below the older of them.
      expect(first.nextBeforeId).toBe(common[2]!.id);
      const second = await store().scanJobs({ queue: 'rare', beforeId: first.nextBeforeId!, maxScan: 10 });
      expect(ids(second.jobs)).toEqual([old.id]);
    });

    it('lists a job without its payload, result, steps, lease token or trace context, its error as code and message', async () => {
      const dead = await jobIn('dead', { queue: 'big' });
      const big = await enqueue({ queue: 'big', payload: { blob: 'x'.repeat(100_000) } });
      const [listedBig, listedDead] = (await store().scanJobs({ queue: 'big' })).jobs;
      expect(listedBig).toEqual(toJobListing(await getJob(big.id)));
      for (const name of ['payload', 'result', 'steps', 'leaseToken', 'traceContext']) expect(listedBig).not.toHaveProperty(name);
      const error = (await getJob(dead.id)).error!;
      expect(listedDead!.error).toEqual({ code: error.code, message: error.message });
      expect((await store().scanJobs({ state: 'dead' })).jobs[0]).toEqual(listedDead);
    });

    it('finds jobs by unique key, live or finished, in every queue', async () => {
      const finished = await jobIn('completed', { queue: 'a', uniqueKey: 'order-7' });
      const live = await enqueue({ queue: 'a', uniqueKey: 'order-7' });
      const other = await enqueue({ queue: 'b', uniqueKey: 'order-7' });
      await enqueue({ queue: 'a', uniqueKey: 'order-8' });
      expect(ids((await store().scanJobs({ uniqueKey: 'order-7' })).jobs)).toEqual([other.id, live.id, finished.id]);
      expect(ids((await store().scanJobs({ uniqueKey: 'order-7', queue: 'a' })).jobs)).toEqual([live.id, finished.id]);
      expect((await store().scanJobs({ uniqueKey: 'order-9' })).jobs).toEqual([]);
    });

    it('finds jobs whose payload contains some JSON, as jsonb @> does', async () => {
      const payloads = [
        { user: { id: 7, tags: ['a', 'b'] }, n: 1 },
        { user: { id: 8 }, n: 1 },
        [1, 2, [3]],
        'text',
        { list: [1, { x: 2 }] },
        null,
      ];
      const made: string[] = [];
      for (const payload of payloads) made.push((await enqueue({ queue: 'p', payload })).id);
      const found = async (payloadContains: ScanJobsParams['payloadContains'], extra: ScanJobsParams = {}) =>
        ids((await store().scanJobs({ payloadContains, ...extra })).jobs).map((id) => made.indexOf(id)).sort();
      expect(await found({ user: { id: 7 } })).toEqual([0]);
      expect(await found({ user: { tags: ['b'] } })).toEqual([0]);
      expect(await found({ user: { tags: ['b', 'a', 'a'] }, n: 1 })).toEqual([0]);
      expect(await found({ n: 1 })).toEqual([0, 1]);
      expect(await found({})).toEqual([0, 1, 4]);
      expect(await found([2, [3]])).toEqual([2]);
      expect(await found(2)).toEqual([2]);
      expect(await found([3])).toEqual([]);
      expect(await found('text')).toEqual([3]);
      expect(await found({ list: [{ x: 2 }] })).toEqual([4]);
      expect(await found({ list: 1 })).toEqual([]);
      expect(await found({ user: { id: '7' } })).toEqual([]);
      expect(await found(null)).toEqual([5]);
      expect(await found({ n: 1 }, { queue: 'p', limit: 1 })).toEqual([1]);
      expect(await found({ n: 1 }, { queue: 'other' })).toEqual([]);
      // Bounded as every window: the newest maxScan jobs, then the page says where to go on.
      const first = await store().scanJobs({ payloadContains: { user: { id: 7 } }, maxScan: 2 });
      expect(first).toEqual({ jobs: [], nextBeforeId: made[4] });
    });

    it('finds jobs whose error message contains some text, ignoring case, with % and _ as themselves', async () => {
      const messages = ['Upstream timed out', 'disk 100% full', 'no_such_user', 'place is gone'];
      const made: string[] = [];
      for (const message of messages) {
        const created = await enqueue({ queue: 'e' });
        const claimed = await claimOne('e');
        expect(await setState({ ...lease(claimed), state: 'dead', error: { code: 'handler_error', message } })).toBe(true);
        made.push(created.id);
      }
      await enqueue({ queue: 'e' });
      const found = async (errorContains: string, extra: ScanJobsParams = {}) =>
        ids((await store().scanJobs({ errorContains, ...extra })).jobs).map((id) => made.indexOf(id)).sort();
      expect(await found('TIMED OUT')).toEqual([0]);
      expect(await found('%')).toEqual([1]);
      expect(await found('ed_out')).toEqual([]);
      expect(await found('_such_')).toEqual([2]);
      expect(await found('\\')).toEqual([]);
      expect(await found('o', { state: 'dead', queue: 'e' })).toEqual([0, 2, 3]);
      expect(await found('gone', { state: 'retrying' })).toEqual([]);
    });
  });

  describe('countJobsUpTo', () => {
    it('counts the jobs every filter matches, exactly up to max, then says it is capped', async () => {
      await jobIn('dead', { queue: 'a', kind: 'x' });
      await jobIn('dead', { queue: 'b', kind: 'y' });
      await jobIn('completed', { queue: 'a', kind: 'x' });
      await jobIn('running', { queue: 'b', kind: 'x' });
      await jobIn('cancelled', { queue: 'a', kind: 'y' });
      for (let i = 0; i < 3; i++) await enqueue({ queue: 'a', kind: i === 0 ? 'y' : 'x' });
      const every = await store().listJobs({ limit: 1_000 });
      const cases: Array<{ queue?: string; state?: JobState; kind?: string }> = [
        {}, { queue: 'a' }, { kind: 'x' }, { queue: 'a', kind: 'x' }, { state: 'pending' }, { state: 'pending', kind: 'x' },
        { state: 'dead' }, { state: 'dead', queue: 'b' }, { state: 'dead', kind: 'y' }, { state: 'completed' },
        { state: 'completed', queue: 'a', kind: 'x' }, { state: 'running', queue: 'b' }, { state: 'waiting' }, { state: 'sleeping' },
        { state: 'retrying', queue: 'nope' },
      ];
      for (const filters of cases) {
        const exact = every.filter(
          (job) =>
            (filters.queue === undefined || job.queue === filters.queue) &&
            (filters.state === undefined || job.state === filters.state) &&
            (filters.kind === undefined || job.kind === filters.kind),
        ).length;
        expect({ filters, answer: await store().countJobsUpTo({ ...filters, max: 100 }) }).toEqual({ filters, answer: { count: exact, capped: false } });
        if (exact > 1) {
          expect({ filters, answer: await store().countJobsUpTo({ ...filters, max: exact - 1 }) }).toEqual({ filters, answer: { count: exact - 1, capped: true } });
        }
      }
    });
  });

  describe('retryJobsMatching and cancelJobsMatching', () => {
    it('retries the newest dead, cancelled or skipped jobs matching, up to max, one per unique key', async () => {
      const older = await jobIn('dead', { queue: 'a', uniqueKey: 'k' });
      const newer = await jobIn('dead', { queue: 'a', uniqueKey: 'k' });
      const cancelled = await jobIn('cancelled', { queue: 'a' });
      const otherQueue = await jobIn('dead', { queue: 'b' });
      const done = await jobIn('completed', { queue: 'a' });
      expect(await store().retryJobsMatching({ queue: 'a', state: 'completed', max: 10 })).toEqual({ matched: 0, applied: 0, capped: false });
      expect(await store().retryJobsMatching({ queue: 'a', max: 2 })).toEqual({ matched: 2, applied: 2, capped: true });
      expect((await getJob(cancelled.id)).state).toBe('pending');
      expect((await getJob(newer.id)).state).toBe('pending');
      // The key is live again: its older holder stays dead.
      expect(await store().retryJobsMatching({ queue: 'a', max: 10 })).toEqual({ matched: 1, applied: 0, capped: false });
      expect((await getJob(older.id)).state).toBe('dead');
      expect((await getJob(otherQueue.id)).state).toBe('dead');
      expect((await getJob(done.id)).state).toBe('completed');
      const retried = await store().getJobEvents({ id: cancelled.id });
      expect(retried.at(-1)).toMatchObject({ fromState: 'cancelled', toState: 'pending' });
    });

    it('cancels the jobs no worker holds and asks the workers of running ones, leaving their rows to them', async () => {
      const dead = await jobIn('dead', { queue: 'a' });
      const running = await jobIn('running', { queue: 'a' });
      const pending = await enqueue({ queue: 'a', kind: 'x' });
      const otherKind = await enqueue({ queue: 'a', kind: 'y' });
      expect(await store().cancelJobsMatching({ queue: 'a', kind: 'x', max: 10 })).toEqual({ matched: 1, applied: 1, capped: false });
      expect(await getJob(pending.id)).toMatchObject({ state: 'cancelled', error: { code: 'cancelled' } });
      expect((await getJob(otherKind.id)).state).toBe('pending');
      expect(await store().cancelJobsMatching({ queue: 'a', max: 10 })).toEqual({ matched: 2, applied: 2, capped: false });
      const stillRunning = await getJob(running.id);
      expect(stillRunning).toMatchObject({ state: 'running', leaseToken: running.leaseToken });
      expect(stillRunning.cancelRequestedAt).not.toBeNull();
      expect((await getJob(otherKind.id)).state).toBe('cancelled');
      expect((await getJob(dead.id)).state).toBe('dead');
      expect(await store().cancelJobsMatching({ queue: 'a', state: 'dead', max: 10 })).toEqual({ matched: 0, applied: 0, capped: false });
      const history = await store().getJobEvents({ id: pending.id });
      expect(history.at(-1)).toMatchObject({ fromState: 'pending', toState: 'cancelled', workerId: null });
    });
  });

  describe('groupDeadJobs', () => {
    const timeout = { code: 'handler_error', message: 'upstream timed out' };
    const gone = { code: 'permanent_error', message: 'place is gone' };

    /** A job of `queue` that died of `error`, `afterMs` after the last one. */
    async function deadOf(queue: string, error: { code: string; message: string }, afterMs = 1_000): Promise<JobRecord> {
      current().clock.advance(afterMs);
      const created = await enqueue({ queue });
      const claimed = await claimOne(queue);
      expect(claimed.id).toBe(created.id);
      expect(await setState({ ...lease(claimed), state: 'dead', error })).toBe(true);
      return getJob(created.id);
    }

    it("groups a queue's dead jobs by code and message, most first, with the first and last death and the newest job", async () => {
      const t1 = await deadOf('a', timeout);
      await deadOf('a', gone);
      await deadOf('b', timeout);
      await jobIn('cancelled', { queue: 'a' });
      const t2 = await deadOf('a', timeout, 60_000);
      const g2 = await deadOf('a', gone);
      const t3 = await deadOf('a', timeout);
      await deadOf('a', { code: 'handler_error', message: 'upstream timed out!' });
      const answer = await store().groupDeadJobs({ queue: 'a' });
      expect(answer).toEqual({
        groups: [
          { ...timeout, count: 3, firstAt: t1.finishedAt, lastAt: t3.finishedAt, newestJobId: t3.id },
          { ...gone, count: 2, firstAt: expect.any(Date), lastAt: g2.finishedAt, newestJobId: g2.id },
          { code: 'handler_error', message: 'upstream timed out!', count: 1, firstAt: expect.any(Date), lastAt: expect.any(Date), newestJobId: expect.any(String) },
        ],
        examined: 6,
        partial: false,
      });
      expect(t2.finishedAt!.getTime()).toBeGreaterThan(t1.finishedAt!.getTime());
      expect((await store().groupDeadJobs({ queue: 'a', limit: 1 })).groups).toHaveLength(1);
      expect(await store().groupDeadJobs({ queue: 'nope' })).toEqual({ groups: [], examined: 0, partial: false });
    });

    it('reads the newest maxScan dead jobs only, and says so', async () => {
      await deadOf('a', gone);
      const newer = [await deadOf('a', timeout), await deadOf('a', timeout)];
      expect(await store().groupDeadJobs({ queue: 'a', maxScan: 2 })).toEqual({
        groups: [{ ...timeout, count: 2, firstAt: newer[0]!.finishedAt, lastAt: newer[1]!.finishedAt, newestJobId: newer[1]!.id }],
        examined: 2,
        partial: true,
      });
      expect((await store().groupDeadJobs({ queue: 'a', maxScan: 3 })).partial).toBe(false);
    });

    it('retryJobsMatching with an error retries that group alone', async () => {
      const timedOut = [await deadOf('a', timeout), await deadOf('a', timeout)];
      const other = await deadOf('a', gone);
      const otherQueue = await deadOf('b', timeout);
      const near = await deadOf('a', { code: 'other', message: timeout.message });
      expect(await store().retryJobsMatching({ queue: 'a', state: 'dead', error: timeout, max: 100 })).toEqual({ matched: 2, applied: 2, capped: false });
      for (const job of timedOut) expect((await getJob(job.id)).state).toBe('pending');
      for (const job of [other, otherQueue, near]) expect((await getJob(job.id)).state).toBe('dead');
      // A tie in count: the group with the newer job first.
      expect((await store().groupDeadJobs({ queue: 'a' })).groups.map((g) => g.code)).toEqual(['other', gone.code]);
      expect(await store().retryJobsMatching({ queue: 'a', error: { code: null, message: null }, max: 100 })).toEqual({ matched: 0, applied: 0, capped: false });
    });
  });

  describe('getQueueBacklogs', () => {
    const zero = { pending: 0, retrying: 0, running: 0, dead: 0, skipped: 0, cancelled: 0, waiting: 0, sleeping: 0 };

    it('counts every state but completed per queue, and leaves out queues with none', async () => {
      expect(await store().getQueueBacklogs({})).toEqual([]);
      await jobIn('running', { queue: 'a' });
      await jobIn('completed', { queue: 'a' });
      await jobIn('dead', { queue: 'a' });
      await jobIn('pending', { queue: 'a' });
      await jobIn('pending', { queue: 'a' });
      await jobIn('retrying', { queue: 'b' });
      await jobIn('skipped', { queue: 'b' });
      const cancelled = await enqueue({ queue: 'b' });
      await store().cancelJob({ id: cancelled.id });
      await jobIn('completed', { queue: 'c' });
      const retryAt = (await store().getQueueBacklogs({})).find((q) => q.queue === 'b')?.oldestRunAt;
      expect(await store().getQueueBacklogs({})).toEqual([
        { queue: 'a', counts: { ...zero, pending: 2, running: 1, dead: 1 }, oldestRunAt: now(), later: { scheduled: 0, snoozed: 0 } },
        { queue: 'b', counts: { ...zero, retrying: 1, skipped: 1, cancelled: 1 }, oldestRunAt: retryAt, later: { scheduled: 0, snoozed: 0 } },
      ]);
      expect(retryAt?.getTime()).toBe(T0 + 5_000);
    });

    it('stops each count at maxCount', async () => {
      for (let i = 0; i < 2; i++) await jobIn('dead', { queue: 'a' });
      for (let i = 0; i < 5; i++) await enqueue({ queue: 'a' });
      const [backlog] = await store().getQueueBacklogs({ maxCount: 3 });
      expect(backlog?.counts).toEqual({ ...zero, pending: 3, dead: 2 });
    });

    it('tells the pending jobs not yet due apart: scheduled (never ran) and snoozed (ran before); the rest are due', async () => {
      await enqueue({ queue: 'a' });
      await enqueue({ queue: 'a', runAt: new Date(T0 - 1_000) });
      await enqueue({ queue: 'a', priority: 3, runAt: new Date(T0 + 60_000) });
      await enqueue({ queue: 'a', runAt: new Date(T0 + 1) });
      await enqueue({ queue: 'b' });
      const held = await claimOne('b');
      expect(await setState({ id: held.id, leaseToken: held.leaseToken!, state: 'snoozed', error: { code: 'snoozed', message: 'later' }, delayMs: 30_000 })).toBe(true);
      expect((await store().getQueueBacklogs({})).map((q) => [q.queue, q.counts.pending, q.later])).toEqual([
        ['a', 4, { scheduled: 2, snoozed: 0 }],
        ['b', 1, { scheduled: 0, snoozed: 1 }],
      ]);
      expect((await store().getQueueBacklogs({ maxCount: 1 }))[0]!.later).toEqual({ scheduled: 1, snoozed: 0 });
      // Due once their time comes.
      clock().advance(60_000);
      expect((await store().getQueueBacklogs({})).map((q) => q.later)).toEqual([
        { scheduled: 0, snoozed: 0 },
        { scheduled: 0, snoozed: 0 },
      ]);
    });

    it('gives the earliest runAt of the pending and retrying jobs, due or not, across priorities', async () => {
      await enqueue({ queue: 'a', priority: 5, runAt: new Date(T0 + 10_000) });
      await enqueue({ queue: 'a', priority: -1, runAt: new Date(T0 - 7_000) });
      await enqueue({ queue: 'a', priority: 0, runAt: new Date(T0 - 3_000) });
      await enqueue({ queue: 'later', runAt: new Date(T0 + 60_000) });
      expect((await store().getQueueBacklogs({})).map((q) => [q.queue, q.oldestRunAt?.getTime()])).toEqual([
        ['a', T0 - 7_000],
        ['later', T0 + 60_000],
      ]);
    });
  });

  describe('getQueueDepths', () => {
    const zero = { pending: 0, retrying: 0, running: 0, dead: 0, skipped: 0, cancelled: 0, waiting: 0, sleeping: 0 };

    it('counts every state but completed per queue, exactly, and leaves out queues with none', async () => {
      expect(await store().getQueueDepths()).toEqual([]);
      await jobIn('running', { queue: 'a' });
      await jobIn('completed', { queue: 'a' });
      await jobIn('dead', { queue: 'a' });
      for (let i = 0; i < 12; i++) await enqueue({ queue: 'a' });
      await jobIn('retrying', { queue: 'b' });
      await jobIn('skipped', { queue: 'b' });
      const cancelled = await enqueue({ queue: 'b' });
      await store().cancelJob({ id: cancelled.id });
      await jobIn('completed', { queue: 'c' });
      expect(await store().getQueueDepths()).toEqual([
        { queue: 'a', counts: { ...zero, pending: 12, running: 1, dead: 1 }, oldestDueAgeSeconds: 0 },
        // The retrying job is due in 5 s: no age yet.
        { queue: 'b', counts: { ...zero, retrying: 1, skipped: 1, cancelled: 1 }, oldestDueAgeSeconds: 0 },
      ]);
    });

    it('gives the age by the store\'s clock of the oldest due pending or retrying job, across priorities', async () => {
      await enqueue({ queue: 'a', priority: 5, runAt: new Date(T0 + 10_000) });
      await enqueue({ queue: 'a', priority: -1, runAt: new Date(T0 - 7_000) });
      await enqueue({ queue: 'a', priority: 0, runAt: new Date(T0 - 3_000) });
      await enqueue({ queue: 'later', runAt: new Date(T0 + 60_000) });
      const ages = async () => (await store().getQueueDepths()).map((q) => [q.queue, q.oldestDueAgeSeconds]);
      const t = (now().getTime() - T0) / 1000;
      expect(await ages()).toEqual([['a', t + 7], ['later', 0]]);
      clock().advance(61_500);
      expect(await ages()).toEqual([['a', t + 68.5], ['later', t + 1.5]]);
    });
  });
}
