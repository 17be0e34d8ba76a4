/**
 * Conformance for the history: whole paths of one job, every job's events in order, and
 * transitions counted per queue, state and bucket.
 * Part of describeStoreConformance (conformance.ts), which calls it inside its own describe
 * with a getter for the test's store and clock.
 */
import { describe, expect, it } from 'vitest';
import { BOOM, conformanceKit, type CurrentStore, lease, LEASE_MS, step, T0 } from './conformance.js';

export function describeHistoryConformance(current: CurrentStore): void {
  const { store, clock, now, enqueue, claimOne, getJob, history, outcome, setState, jobIn } = conformanceKit(current);

  describe('history of whole paths', () => {
    it('fails twice, then dies on its last attempt', async () => {
      const created = await enqueue({ maxAttempts: 3 });
      const c1 = await claimOne('q', 'w1');
      clock().advance(1_000);
      expect(await setState({ ...lease(c1), state: 'retrying', error: BOOM, delayMs: 2_000 })).toBe(true);
      clock().advance(2_000);
      const c2 = await claimOne('q', 'w2');
      clock().advance(1_000);
      expect(await setState({ ...lease(c2), state: 'retrying', error: BOOM, delayMs: 0 })).toBe(true);
      const c3 = await claimOne('q', 'w1');
      clock().advance(1_000);
      expect(await setState({ ...lease(c3), state: 'dead', error: { code: 'deadline_exceeded', message: 'late' } })).toBe(true);
      expect(await history(created.id)).toEqual([
        step(null, 'pending', 0, null, T0),
        step('pending', 'running', 1, 'w1', T0),
        step('running', 'retrying', 1, 'w1', T0 + 1_000, 'handler_error'),
        step('retrying', 'running', 2, 'w2', T0 + 3_000),
        step('running', 'retrying', 2, 'w2', T0 + 4_000, 'handler_error'),
        step('retrying', 'running', 3, 'w1', T0 + 4_000),
        step('running', 'dead', 3, 'w1', T0 + 5_000, 'deadline_exceeded'),
      ]);
    });

    it('loses its worker, is rescued, runs again and completes; then is pruned with its history', async () => {
      const created = await enqueue();
      await claimOne('q', 'w1');
      clock().advance(LEASE_MS + 1);
      await store().rescueExpiredJobs();
      const c2 = await claimOne('q', 'w2');
      clock().advance(1_000);
      expect(await setState(outcome('completed', lease(c2)))).toBe(true);
      const t = T0 + LEASE_MS + 1;
      expect(await history(created.id)).toEqual([
        step(null, 'pending', 0, null, T0),
        step('pending', 'running', 1, 'w1', T0),
        step('running', 'retrying', 1, 'w1', t, 'lease_expired'),
        step('retrying', 'running', 2, 'w2', t),
        step('running', 'completed', 2, 'w2', t + 1_000),
      ]);
      expect(await store().pruneJobs({ completedBefore: new Date(t + 1_001) })).toBe(1);
      expect(await store().getJobEvents({ id: created.id })).toEqual([]);
    });

    it('dies, is retried by hand and completes', async () => {
      const created = await enqueue({ maxAttempts: 1 });
      const c1 = await claimOne();
      expect(await setState(outcome('dead', lease(c1)))).toBe(true);
      clock().advance(1_000);
      await store().retryJob({ id: created.id });
      const c2 = await claimOne('q', 'w2');
      expect(await setState(outcome('completed', lease(c2)))).toBe(true);
      expect(await getJob(created.id)).toMatchObject({ state: 'completed', attempt: 2, maxAttempts: 2, error: null });
      expect(await history(created.id)).toEqual([
        step(null, 'pending', 0, null, T0),
        step('pending', 'running', 1, 'w1', T0),
        step('running', 'dead', 1, 'w1', T0, 'permanent_error'),
        step('dead', 'pending', 1, null, T0 + 1_000),
        step('pending', 'running', 2, 'w2', T0 + 1_000),
        step('running', 'completed', 2, 'w2', T0 + 1_000),
      ]);
    });
  });

  describe('listJobEvents', () => {
    it('lists every job\'s transitions by event id, oldest first, after a given id; not their creations', async () => {
      const a = await enqueue({ queue: 'a' });
      clock().advance(1_000);
      const b = await enqueue({ queue: 'b' });
      const first = await claimOne('a');
      clock().advance(1_000);
      expect(await setState(outcome('completed', lease(first)))).toBe(true);
      const second = await claimOne('b');
      clock().advance(1_000);
      expect(await setState(outcome('completed', lease(second)))).toBe(true);

      const all = await store().listJobEvents({ afterId: '0' });
      expect(all.map((e) => [e.jobId, e.fromState, e.toState, e.attempt, e.workerId, e.at.getTime()])).toEqual([
        [a.id, 'pending', 'running', 1, 'w1', T0 + 1_000],
        [a.id, 'running', 'completed', 1, 'w1', T0 + 2_000],
        [b.id, 'pending', 'running', 1, 'w1', T0 + 2_000],
        [b.id, 'running', 'completed', 1, 'w1', T0 + 3_000],
      ]);
      const eventIds = all.map((e) => BigInt(e.id));
      expect(eventIds).toEqual([...eventIds].sort((x, y) => (x < y ? -1 : 1)));
      expect(new Set(eventIds).size).toBe(4);

      expect(await store().listJobEvents({ afterId: all[1]!.id })).toEqual(all.slice(2));
      expect(await store().listJobEvents({ afterId: all[0]!.id, limit: 1 })).toEqual([all[1]]);
      expect(await store().listJobEvents({ afterId: all[3]!.id })).toEqual([]);
      // The creations are in each job's story.
      expect((await history(a.id))[0]).toEqual(step(null, 'pending', 0, null, T0));
      expect((await history(b.id))[0]).toEqual(step(null, 'pending', 0, null, T0 + 1_000));
    });

    it('without afterId, gives the newest events, oldest first', async () => {
      expect(await store().listJobEvents({})).toEqual([]);
      await jobIn('completed');
      const all = await store().listJobEvents({ afterId: '0' });
      expect(await store().listJobEvents({ limit: 2 })).toEqual(all.slice(-2));
      expect(await store().listJobEvents({})).toEqual(all);
    });

    it('carries the error of a failed attempt', async () => {
      await jobIn('retrying');
      const events = await store().listJobEvents({ limit: 1 });
      expect(events[0]).toMatchObject({ fromState: 'running', toState: 'retrying', error: { code: 'handler_error' } });
    });
  });

  describe('listNewJobs', () => {
    it('lists jobs by id, oldest first, after a given id, each with its queue, the state it was created in and its creation time', async () => {
      expect(await store().listNewJobs({})).toEqual([]);
      const a = await enqueue({ queue: 'a' });
      clock().advance(1_000);
      const b = await enqueue({ queue: 'b' });
      const c = await enqueue({ queue: 'a' });
      // Read after it ran: shown created, as the first entry of its story.
      const ran = await claimOne('a');
      await setState({ id: ran.id, leaseToken: ran.leaseToken!, state: 'completed', result: null });
      const all = await store().listNewJobs({ afterId: '0' });
      expect(all).toEqual([
        { id: a.id, queue: 'a', state: 'pending', createdAt: new Date(T0) },
        { id: b.id, queue: 'b', state: 'pending', createdAt: new Date(T0 + 1_000) },
        { id: c.id, queue: 'a', state: 'pending', createdAt: new Date(T0 + 1_000) },
      ]);
      expect(await store().listNewJobs({ afterId: a.id })).toEqual(all.slice(1));
      expect(await store().listNewJobs({ afterId: a.id, limit: 1 })).toEqual([all[1]]);
      expect(await store().listNewJobs({ afterId: c.id })).toEqual([]);
      expect(await store().listNewJobs({ limit: 2 })).toEqual(all.slice(1));
      expect(await store().listNewJobs({ afterId: 'not-an-id' })).toEqual([]);
    });

    it('a flow\'s dependent reads as created waiting after it was released and ran', async () => {
      const base = { kind: 'k', payload: {}, maxAttempts: 3 };
      const flow = await store().enqueueFlow({
        name: 'f',
        jobs: [
          { ...base, queue: 'nf', node: 'x', dependsOn: [] },
          { ...base, queue: 'nf', node: 'y', dependsOn: [{ name: 'x', onFailure: 'cancel', index: 0 }] },
        ],
      });
      const [x, y] = flow.jobs.map((job) => job.id);
      for (const id of [x, y]) {
        const job = await claimOne('nf');
        expect(job.id).toBe(id);
        await setState({ id: job.id, leaseToken: job.leaseToken!, state: 'completed', result: null });
      }
      const listed = await store().listNewJobs({ afterId: '0' });
      expect(listed.map((job) => `${job.id}:${job.state}`)).toEqual([`${x}:pending`, `${y}:waiting`]);
      expect((await store().getJobEvents({ id: y! }))[0]).toMatchObject({ fromState: null, toState: 'waiting' });
    });

    it('leaves out a deleted job', async () => {
      const a = await enqueue();
      const b = await enqueue();
      await store().deleteJob({ id: a.id });
      expect((await store().listNewJobs({ afterId: '0' })).map((j) => j.id)).toEqual([b.id]);
    });
  });

  describe('countJobTransitions', () => {
    it('counts transitions since a time per queue, state entered and bucket', async () => {
      await enqueue({ queue: 'a' });
      clock().advance(60_000);
      const since = now();
      await enqueue({ queue: 'a' });
      await enqueue({ queue: 'b' });
      const first = await claimOne('a');
      clock().advance(59_999);
      await setState(outcome('completed', lease(first)));
      clock().advance(1);
      const second = await claimOne('a');
      await setState(outcome('dead', lease(second)));
      expect(await store().countJobTransitions({ since, bucketMs: 60_000 })).toEqual([
        { queue: 'a', toState: 'completed', bucket: 0, count: 1 },
        { queue: 'a', toState: 'dead', bucket: 1, count: 1 },
        { queue: 'a', toState: 'pending', bucket: 0, count: 1 },
        { queue: 'a', toState: 'running', bucket: 0, count: 1 },
        { queue: 'a', toState: 'running', bucket: 1, count: 1 },
        { queue: 'b', toState: 'pending', bucket: 0, count: 1 },
      ]);
      expect(await store().countJobTransitions({ since: now(), bucketMs: 1_000 })).toHaveLength(2);
      expect(await store().countJobTransitions({ since: new Date(T0 + 1_000_000), bucketMs: 1_000 })).toEqual([]);
    });

    it('reads at most maxEvents history rows', async () => {
      for (let i = 0; i < 5; i++) await enqueue();
      const counts = await store().countJobTransitions({ since: new Date(T0), bucketMs: 1_000, maxEvents: 3 });
      expect(counts.reduce((sum, c) => sum + c.count, 0)).toBe(3);
    });
  });
}
