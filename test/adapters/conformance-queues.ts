/**
 * Conformance for queues as the store knows them: recorded by their first enqueue and kept by
 * prune; paused, a queue keeps its jobs and no claim takes any of them, until resumed. And the
 * workers on the store: each supervisor's heartbeat row.
 * Part of describeStoreConformance (conformance.ts), which calls it inside its own describe
 * with a getter for the test's store and clock.
 */
import { describe, expect, it, vi } from 'vitest';
import { WORKER_FORGET_MS } from '../../src/adapters/store.js';
import { conformanceKit, type CurrentStore, lease, T0 } from './conformance.js';

export function describeQueueConformance(current: CurrentStore): void {
  const { store, clock, now, enqueue, claim, claimOne, getJob, outcome, setState } = conformanceKit(current);

  describe('queues', () => {
    it('records a queue with its first job, once, and lists the queues by name', async () => {
      expect(await store().listQueues()).toEqual([]);
      await enqueue({ queue: 'zeta' });
      clock().advance(1_000);
      await store().enqueueJobs({
        jobs: [
          { queue: 'alpha', kind: 'k', payload: 1, maxAttempts: 1 },
          { queue: 'zeta', kind: 'k', payload: 2, maxAttempts: 1 },
          { queue: 'alpha', kind: 'k', payload: 3, maxAttempts: 1 },
        ],
      });
      expect(await store().listQueues()).toEqual([
        { name: 'alpha', createdAt: new Date(T0 + 1_000), pausedAt: null },
        { name: 'zeta', createdAt: new Date(T0), pausedAt: null },
      ]);
    });

    it('keeps a queue after prune took every job of it', async () => {
      const job = await enqueue({ queue: 'mail' });
      expect(await store().cancelJob({ id: job.id })).toMatchObject({ cancelled: true });
      clock().advance(1_000);
      expect(await store().pruneJobs({ deadBefore: now() })).toBe(1);
      expect(await store().getJob({ id: job.id })).toBeNull();
      expect(await store().listQueues()).toEqual([{ name: 'mail', createdAt: new Date(T0), pausedAt: null }]);
    });

    it('records the queue of a schedule tick', async () => {
      const applied = await store().enqueueScheduledJobs({
        advances: [{ schedule: 's', previousTickAt: null, tickAt: now(), jobs: [{ queue: 'ticks', kind: 'k', payload: {}, maxAttempts: 1 }] }],
      });
      expect(applied).toEqual([true]);
      expect((await store().listQueues()).map((q) => q.name)).toEqual(['ticks']);
    });
  });

  describe('pauseQueue and resumeQueue', () => {
    it('a paused queue keeps its jobs and no claim takes them; other queues go on', async () => {
      const held = await enqueue({ queue: 'a' });
      const other = await enqueue({ queue: 'b' });
      clock().advance(1_000);
      expect(await store().pauseQueue({ queue: 'a' })).toEqual({ name: 'a', createdAt: new Date(T0), pausedAt: now() });
      clock().advance(60_000);
      const claimed = await store().claimJobs({
        workerId: 'w1',
        leaseMs: 30_000,
        queues: [
          { queue: 'a', limit: 5 },
          { queue: 'b', limit: 5 },
        ],
      });
      expect(claimed.map((job) => job.id)).toEqual([other.id]);
      expect(await getJob(held.id)).toEqual(held);
      expect(await claim('a', 5, 'w2')).toEqual([]);
    });

    it('pausing again keeps the first pause time; resume makes the jobs claimable again', async () => {
      const job = await enqueue({ queue: 'a' });
      const first = await store().pauseQueue({ queue: 'a' });
      clock().advance(5_000);
      expect(await store().pauseQueue({ queue: 'a' })).toEqual(first);
      expect((await store().listQueues())[0]).toEqual(first);
      expect(await store().resumeQueue({ queue: 'a' })).toEqual({ name: 'a', createdAt: new Date(T0), pausedAt: null });
      expect(await store().resumeQueue({ queue: 'a' })).toEqual({ name: 'a', createdAt: new Date(T0), pausedAt: null });
      expect((await claimOne('a')).id).toBe(job.id);
    });

    it('a queue paused before its first job holds that job', async () => {
      expect(await store().pauseQueue({ queue: 'later' })).toEqual({ name: 'later', createdAt: now(), pausedAt: now() });
      clock().advance(1_000);
      const job = await enqueue({ queue: 'later' });
      expect(await store().listQueues()).toEqual([{ name: 'later', createdAt: new Date(T0), pausedAt: new Date(T0) }]);
      expect(await claim('later', 5)).toEqual([]);
      await store().resumeQueue({ queue: 'later' });
      expect((await claimOne('later')).id).toBe(job.id);
    });

    it('an attempt already running when its queue is paused renews and writes its outcome', async () => {
      await enqueue({ queue: 'a' });
      const running = await claimOne('a');
      await store().pauseQueue({ queue: 'a' });
      expect(await store().renewLeases({ leases: [lease(running)], leaseMs: 30_000 })).toEqual(['renewed']);
      expect(await setState(outcome('completed', lease(running)))).toBe(true);
      expect((await getJob(running.id)).state).toBe('completed');
    });

    it('resume wakes the queue’s subscribers', async (ctx) => {
      if (!store().capabilities.notifications) ctx.skip();
      await enqueue({ queue: 'a' });
      await store().pauseQueue({ queue: 'a' });
      const woken: string[] = [];
      const unsubscribe = await store().subscribe((queue) => woken.push(queue ?? '(any queue)'));
      await store().resumeQueue({ queue: 'a' });
      await vi.waitFor(() => expect(woken).toContain('a'), { timeout: 5_000, interval: 5 });
      await unsubscribe();
    });
  });

  describe('workers', () => {
    const beat = (workerId: string, running = 0, queues = ['a', 'b'], held: Array<{ id: string; queue: string }> = []) => ({
      workerId, host: 'box-1', pid: 4242, queues, running, held,
    });

    it('records a heartbeat, keeps the first start and moves last seen; lists by worker id', async () => {
      expect(await store().listWorkers()).toEqual([]);
      await store().recordWorker({ worker: beat('w2') });
      clock().advance(1_000);
      await store().recordWorker({ worker: beat('w1', 0, ['a']) });
      clock().advance(10_000);
      // Three jobs, two of them held for a slot: the heartbeat says which.
      const held = [{ id: '17', queue: 'a' }, { id: '9', queue: 'b' }];
      await store().recordWorker({ worker: beat('w2', 3, ['a', 'b'], held) });
      expect(await store().listWorkers()).toEqual([
        { workerId: 'w1', host: 'box-1', pid: 4242, queues: ['a'], running: 0, held: [], startedAt: new Date(T0 + 1_000), lastSeenAt: new Date(T0 + 1_000) },
        { workerId: 'w2', host: 'box-1', pid: 4242, queues: ['a', 'b'], running: 3, held, startedAt: new Date(T0), lastSeenAt: new Date(T0 + 11_000) },
      ]);
      await store().recordWorker({ worker: beat('w2', 1) });
      expect((await store().listWorkers())[1]!.held).toEqual([]);
    });

    it('removes a stopped worker, and forgets one long unseen at any heartbeat', async () => {
      await store().recordWorker({ worker: beat('gone') });
      await store().recordWorker({ worker: beat('stopping') });
      await store().recordWorker({ worker: beat('alive') });
      await store().removeWorker({ workerId: 'stopping' });
      await store().removeWorker({ workerId: 'never-was' });
      expect((await store().listWorkers()).map((w) => w.workerId)).toEqual(['alive', 'gone']);
      clock().advance(WORKER_FORGET_MS);
      await store().recordWorker({ worker: beat('alive') });
      expect((await store().listWorkers()).map((w) => w.workerId)).toEqual(['alive', 'gone']);
      clock().advance(1);
      await store().recordWorker({ worker: beat('alive') });
      expect((await store().listWorkers()).map((w) => w.workerId)).toEqual(['alive']);
    });
  });
}
