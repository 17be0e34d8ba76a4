/**
 * Conformance for flows (migration 0009, src/flows): jobs that wait for jobs. A job with
 * parents waits (`waiting`, not claimable) and is released in the statement that ends its last
 * parent; a parent that did not complete applies the edge's failure policy; a `waiting`
 * outcome adds children and waits for them. Part of describeStoreConformance (conformance.ts).
 */
import { describe, expect, it } from 'vitest';
import type { ChildJob, FlowJob, JobStore, OnDependencyFailure, SqlClient } from '../../src/adapters/store.js';
import { JobNotFoundError } from '../../src/errors.js';
import type { ClaimedJob, JobRecord } from '../../src/types.js';
import { BOOM, conformanceKit, type CurrentStore, lease, step, type StoreConformanceFactory, T0 } from './conformance.js';

function flowJob(node: string, dependsOn: FlowJob['dependsOn'] = [], queue = 'q'): FlowJob {
  return { queue, kind: 'k', payload: { node }, maxAttempts: 3, node, dependsOn };
}

const on = (index: number, name: string, onFailure: OnDependencyFailure = 'cancel') => ({ index, name, onFailure });

function child(key: string, onFailure: OnDependencyFailure = 'cancel'): ChildJob {
  return { queue: 'q', kind: 'child', payload: { key }, maxAttempts: 3, key, onFailure };
}

export function describeFlowConformance(current: CurrentStore, factory: Pick<StoreConformanceFactory, 'inTransaction' | 'capabilities'>): void {
  const kit = conformanceKit(current);
  const { store, clock, getJob, history, setState, outcome } = kit;

  /** a and b due at once, c waits for both, d waits for c. */
  async function diamond(policy: OnDependencyFailure = 'cancel', s: JobStore = store()) {
    return s.enqueueFlow({
      name: 'report',
      jobs: [flowJob('a'), flowJob('b'), flowJob('c', [on(0, 'a', policy), on(1, 'b', policy)]), flowJob('d', [on(2, 'c')])],
    });
  }

  async function claimNode(node: string): Promise<ClaimedJob> {
    const claimed = await store().claimJobs({ workerId: 'w1', leaseMs: 30_000, queues: [{ queue: 'q', limit: 10 }] });
    const job = claimed.find((j) => (j.payload as { node?: string }).node === node || (j.payload as { key?: string }).key === node);
    expect(job, `${node} claimable`).toBeDefined();
    // Put back what was claimed on the way: a release spends no attempt.
    for (const other of claimed) {
      if (other !== job) {
        await store().setStatesIfRunning({ outcomes: [{ ...lease(other), state: 'released', error: BOOM, delayMs: 0 }] });
      }
    }
    return job!;
  }

  async function complete(job: ClaimedJob, result: unknown = { from: job.id }): Promise<void> {
    expect(await setState({ ...lease(job), state: 'completed', result })).toBe(true);
  }

  async function claimableIds(): Promise<string[]> {
    return (await store().listJobs({ state: 'pending' })).map((j) => j.id).sort();
  }

  describe('flows: static dependencies', () => {
    it('enqueues every job at once: those with parents wait, unclaimable, in a flow the store can read back', async () => {
      const flow = await diamond();
      const [a, b, c, d] = flow.jobs;
      expect(flow.jobs.map((j) => j.state)).toEqual(['pending', 'pending', 'waiting', 'waiting']);
      expect(await history(c!.id)).toEqual([step(null, 'waiting', 0, null, T0)]);
      const claimed = await store().claimJobs({ workerId: 'w1', leaseMs: 30_000, queues: [{ queue: 'q', limit: 10 }] });
      expect(claimed.map((j) => j.id).sort()).toEqual([a!.id, b!.id].sort());

      const read = await store().getFlow({ id: flow.flowId });
      expect(read).toMatchObject({ id: flow.flowId, name: 'report' });
      expect(read!.jobs.map((j) => [j.node, j.job.id])).toEqual([['a', a!.id], ['b', b!.id], ['c', c!.id], ['d', d!.id]]);
      expect(read!.edges).toEqual([
        { jobId: c!.id, dependsOnId: a!.id, name: 'a', role: 'parent', onFailure: 'cancel' },
        { jobId: c!.id, dependsOnId: b!.id, name: 'b', role: 'parent', onFailure: 'cancel' },
        { jobId: d!.id, dependsOnId: c!.id, name: 'c', role: 'parent', onFailure: 'cancel' },
      ]);
      expect(await store().getFlow({ jobId: d!.id })).toEqual(await store().getFlow({ id: flow.flowId }));
      expect(await store().getFlow({ id: '987654321' })).toBeNull();
      const backlog = await store().getQueueBacklogs({});
      expect(backlog[0]!.counts).toMatchObject({ waiting: 2, running: 2 });
    });

    it('releases a child in the write that ends its last parent, and the child reads its parents\' results', async () => {
      const flow = await diamond();
      const [, , c] = flow.jobs;
      const a = await claimNode('a');
      clock().advance(1_000);
      await complete(a, { rows: 3 });
      expect((await getJob(c!.id)).state).toBe('waiting');
      const b = await claimNode('b');
      clock().advance(1_000);
      await complete(b, { rows: 4 });
      expect(await getJob(c!.id)).toMatchObject({ state: 'pending', attempt: 0 });
      expect(await history(c!.id)).toEqual([step(null, 'waiting', 0, null, T0), step('waiting', 'pending', 0, null, T0 + 2_000)]);
      const parents = await store().getJobDependencies({ id: c!.id });
      expect(parents.map((p) => [p.name, p.role, p.job.state, p.job.result])).toEqual([
        ['a', 'parent', 'completed', { rows: 3 }],
        ['b', 'parent', 'completed', { rows: 4 }],
      ]);
      expect(await claimableIds()).toEqual([c!.id]);
    });

    it('releases a child once when its parents end in one batch', async () => {
      const flow = await diamond();
      const [, , c] = flow.jobs;
      const claimed = await store().claimJobs({ workerId: 'w1', leaseMs: 30_000, queues: [{ queue: 'q', limit: 10 }] });
      expect(claimed).toHaveLength(2);
      const applied = await store().setStatesIfRunning({ outcomes: claimed.map((j) => ({ ...lease(j), state: 'completed' as const, result: 1 })) });
      expect(applied).toEqual([true, true]);
      expect((await history(c!.id)).map((s) => s.toState)).toEqual(['waiting', 'pending']);
    });

    it('releases a child once when its parents end at the same moment in two calls', async () => {
      const flow = await diamond();
      const [, , c] = flow.jobs;
      const claimed = await store().claimJobs({ workerId: 'w1', leaseMs: 30_000, queues: [{ queue: 'q', limit: 10 }] });
      await Promise.all(claimed.map((j) => complete(j)));
      expect((await history(c!.id)).map((s) => s.toState)).toEqual(['waiting', 'pending']);
    });

    it.each([
      ['cancel', 'cancelled'],
      ['die', 'dead'],
    ] as const)('onFailure %s: a parent that ends dead makes its child %s, and the grandchild follows (cancel)', async (policy, ended) => {
      const flow = await diamond(policy);
      const [, , c, d] = flow.jobs;
      const a = await claimNode('a');
      clock().advance(1_000);
      expect(await setState(outcome('dead', lease(a)))).toBe(true);
      const row = await getJob(c!.id);
      expect(row).toMatchObject({ state: ended, finishedAt: new Date(T0 + 1_000) });
      expect(row.error).toEqual({ code: 'dependency_failed', message: `parent "a" (job ${a.id}) ended dead; ${ended === 'dead' ? 'dies' : 'cancelled'} (onFailure: ${policy})` });
      expect(await history(c!.id)).toEqual([step(null, 'waiting', 0, null, T0), step('waiting', ended, 0, null, T0 + 1_000, 'dependency_failed')]);
      expect(await getJob(d!.id)).toMatchObject({ state: 'cancelled', error: { code: 'dependency_failed' } });
      // The other parent still runs; its end changes nothing.
      const b = await claimNode('b');
      await complete(b);
      expect((await getJob(c!.id)).state).toBe(ended);
    });

    it('onFailure run: the child runs once the others are done, with the failure in its history', async () => {
      const flow = await diamond('run');
      const [, , c] = flow.jobs;
      const a = await claimNode('a');
      expect(await setState(outcome('skipped', lease(a)))).toBe(true);
      expect((await getJob(c!.id)).state).toBe('waiting');
      const b = await claimNode('b');
      clock().advance(500);
      await complete(b);
      const events = await store().getJobEvents({ id: c!.id });
      expect(events.at(-1)).toMatchObject({
        fromState: 'waiting',
        toState: 'pending',
        error: { code: 'dependency_failed', message: `parent "a" (job ${a.id}) ended skipped; runs anyway (onFailure: run)` },
      });
      const parents = await store().getJobDependencies({ id: c!.id });
      expect(parents.map((p) => p.job.state)).toEqual(['skipped', 'completed']);
    });

    it('waits on stored jobs: one already completed counts as done, one already dead applies the policy at once', async () => {
      const [done] = await store().enqueueJobs({ jobs: [{ queue: 'other', kind: 'k', payload: {}, maxAttempts: 1 }] });
      const [running] = await store().enqueueJobs({ jobs: [{ queue: 'other', kind: 'k', payload: {}, maxAttempts: 1 }] });
      const [claimedDone, claimedRunning] = await store().claimJobs({ workerId: 'w1', leaseMs: 30_000, queues: [{ queue: 'other', limit: 2 }] });
      await complete(claimedDone!);
      const waits = await store().enqueueFlow({
        name: 'after',
        jobs: [flowJob('x', [{ jobId: done!.job.id, name: done!.job.id, onFailure: 'cancel' }, { jobId: running!.job.id, name: running!.job.id, onFailure: 'cancel' }])],
      });
      expect(waits.jobs[0]!.state).toBe('waiting');
      const due = await store().enqueueFlow({ name: 'after', jobs: [flowJob('y', [{ jobId: done!.job.id, name: 'done', onFailure: 'cancel' }])] });
      expect(due.jobs[0]!.state).toBe('pending');
      expect((await history(due.jobs[0]!.id)).map((s) => s.toState)).toEqual(['waiting', 'pending']);
      await complete(claimedRunning!);
      expect((await getJob(waits.jobs[0]!.id)).state).toBe('pending');

      const [failed] = await store().enqueueJobs({ jobs: [{ queue: 'other', kind: 'k', payload: {}, maxAttempts: 1 }] });
      await store().cancelJob({ id: failed!.job.id });
      const cancelled = await store().enqueueFlow({ name: 'after', jobs: [flowJob('z', [{ jobId: failed!.job.id, name: 'f', onFailure: 'cancel' }]), flowJob('zz', [on(0, 'z')])] });
      expect(cancelled.jobs.map((j) => j.state)).toEqual(['cancelled', 'cancelled']);
    });

    it('the reaper ends a waiting job past its expiresAt (dead, expired), and the jobs waiting for it follow their policy', async () => {
      const start = clock().now();
      const expiresAt = new Date(start + 5_000);
      const flow = await store().enqueueFlow({
        name: 'deadline',
        jobs: [flowJob('a'), { ...flowJob('b', [on(0, 'a')]), expiresAt }, flowJob('c', [on(1, 'b')]), flowJob('d', [on(1, 'b', 'run')])],
      });
      const [a, b, c, d] = flow.jobs;
      clock().advance(4_999);
      expect(await store().rescueExpiredJobs()).toEqual([]);
      clock().advance(1);
      const ended = await store().rescueExpiredJobs();
      expect(ended).toMatchObject([{ id: b!.id, state: 'dead', error: { code: 'expired' } }]);
      expect((await history(b!.id)).at(-1)).toEqual(step('waiting', 'dead', 0, null, start + 5_000, 'expired'));
      // c (onFailure cancel) is cancelled; d (onFailure run) runs once its last parent ended; a is untouched.
      expect((await getJob(c!.id)).state).toBe('cancelled');
      expect((await getJob(d!.id)).state).toBe('pending');
      expect((await getJob(a!.id)).state).toBe('pending');
      // a's end later changes nothing for b.
      await complete(await claimNode('a'));
      expect((await getJob(b!.id)).state).toBe('dead');
      expect(await store().rescueExpiredJobs()).toEqual([]);
    });

    it('refuses a stored parent that does not exist, and writes nothing', async () => {
      const before = await store().countJobs();
      await expect(
        store().enqueueFlow({ name: 'f', jobs: [flowJob('a'), flowJob('b', [{ jobId: '987654321', name: 'x', onFailure: 'cancel' }])] }),
      ).rejects.toThrow(JobNotFoundError);
      expect(await store().countJobs()).toEqual(before);
    });

    it('cancels a waiting job by request, and cancelFlow cancels what has not run and asks the running to stop', async () => {
      const flow = await diamond();
      const [, b, c, d] = flow.jobs;
      const a = await claimNode('a');
      const answer = await store().cancelFlow({ id: flow.flowId });
      expect(answer).toEqual({ cancelled: 3, requested: 1 });
      for (const id of [b!.id, c!.id, d!.id]) expect((await getJob(id)).state).toBe('cancelled');
      expect((await getJob(a.id)).cancelRequestedAt).not.toBeNull();
      expect((await store().getJobEvents({ id: d!.id })).at(-1)).toMatchObject({ fromState: 'waiting', toState: 'cancelled', workerId: null });
      expect(await store().cancelFlow({ id: '987654321' })).toBeNull();

      const other = await diamond();
      const cancelled = await store().cancelJob({ id: other.jobs[2]!.id });
      expect(cancelled).toMatchObject({ cancelled: true, job: { state: 'cancelled' } });
      expect((await getJob(other.jobs[3]!.id)).state).toBe('cancelled');
    });

    it('keeps a job that waiting jobs wait for from deleteJob, and deletes it once they have left waiting', async () => {
      const flow = await diamond();
      const [a, b, c] = flow.jobs;
      // A pending parent, and a completed one whose result c has yet to read.
      expect(await store().deleteJob({ id: a!.id })).toMatchObject({ deleted: false, job: { id: a!.id, state: 'pending' } });
      await complete(await claimNode('b'));
      expect(await store().deleteJob({ id: b!.id })).toMatchObject({ deleted: false, job: { id: b!.id, state: 'completed' } });
      // A waiting job that another waits for (d waits for c).
      expect(await store().deleteJob({ id: c!.id })).toMatchObject({ deleted: false, job: { id: c!.id, state: 'waiting' } });
      // Claiming b put a back (released: retrying, due at once); it is still there, and so is b's history.
      expect(await getJob(a!.id)).toMatchObject({ state: 'retrying' });
      expect((await history(b!.id)).map((e) => e.toState)).toContain('completed');

      // Once c is released, a and b may go: nothing waits for them any more.
      await complete(await claimNode('a'));
      expect(await getJob(c!.id)).toMatchObject({ state: 'pending' });
      for (const job of [a!, b!]) {
        expect(await store().deleteJob({ id: job.id })).toMatchObject({ deleted: true, job: { id: job.id } });
        expect(await store().getJob({ id: job.id })).toBeNull();
      }
    });

    it('prunes a finished parent only once no waiting job waits for it', async () => {
      const flow = await diamond();
      const [a, b, c] = flow.jobs;
      await complete(await claimNode('a'));
      clock().advance(10_000);
      const cutoff = new Date(clock().now());
      // a completed, but c still waits for b: a is kept, its result for c to read.
      expect(await store().pruneJobs({ completedBefore: cutoff, deadBefore: cutoff })).toBe(0);
      expect(await getJob(a!.id)).toMatchObject({ state: 'completed' });
      await complete(await claimNode('b'));
      expect(await getJob(c!.id)).toMatchObject({ state: 'pending' });
      clock().advance(10_000);
      expect(await store().pruneJobs({ completedBefore: new Date(clock().now()) })).toBe(2);
      for (const job of [a!, b!]) expect(await store().getJob({ id: job.id })).toBeNull();
    });

    it('enqueues in the caller\'s transaction: nothing on rollback', async () => {
      if (!factory.capabilities.transactionalEnqueue || !factory.inTransaction) {
        await expect(store().enqueueFlow({ name: 'f', jobs: [flowJob('a')], client: {} as SqlClient })).rejects.toThrow('cannot join');
        return;
      }
      await factory.inTransaction('rollback', async (client) => {
        await store().enqueueFlow({ name: 'f', jobs: [flowJob('a'), flowJob('b', [on(0, 'a')])], client });
      });
      expect(await store().countJobs()).toEqual([]);
      await factory.inTransaction('commit', async (client) => {
        await store().enqueueFlow({ name: 'f', jobs: [flowJob('a'), flowJob('b', [on(0, 'a')])], client });
      });
      expect((await store().countJobs()).map((c) => [c.state, c.count])).toEqual([['pending', 1], ['waiting', 1]]);
    });
  });

  describe('flows: a job that waits for the children it added', () => {
    async function fanOut(children: ChildJob[]): Promise<{ parent: ClaimedJob; applied: boolean }> {
      await store().enqueueJobs({ jobs: [{ queue: 'q', kind: 'parent', payload: { node: 'p' }, maxAttempts: 1 }] });
      const parent = await claimNode('p');
      clock().advance(1_000);
      const [applied] = await store().setStatesIfRunning({ outcomes: [{ ...lease(parent), state: 'waiting', children }] });
      return { parent, applied: applied! };
    }

    it('adds the children and waits for them without a lease, with one more attempt allowed; the last child releases it', async () => {
      const { parent, applied } = await fanOut([child('x'), child('y')]);
      expect(applied).toBe(true);
      expect(await getJob(parent.id)).toMatchObject({ state: 'waiting', leaseToken: null, leaseExpiresAt: null, maxAttempts: 2, attempt: 1 });
      expect(await history(parent.id)).toEqual([
        step(null, 'pending', 0, null, T0),
        step('pending', 'running', 1, 'w1', T0),
        step('running', 'waiting', 1, 'w1', T0 + 1_000),
      ]);
      const flow = await store().getFlow({ jobId: parent.id });
      expect(flow!.jobs.map((j) => j.node)).toEqual(['parent', 'x', 'y']);
      const x = await claimNode('x');
      await complete(x, 'X');
      expect((await getJob(parent.id)).state).toBe('waiting');
      const y = await claimNode('y');
      clock().advance(1_000);
      await complete(y, 'Y');
      expect((await history(parent.id)).at(-1)).toEqual(step('waiting', 'pending', 1, null, T0 + 2_000));
      const children = await store().getJobDependencies({ id: parent.id });
      expect(children.map((c) => [c.name, c.role, c.job.result])).toEqual([['x', 'child', 'X'], ['y', 'child', 'Y']]);

      // The continuation: the same keys again add nothing, and with every child done the row is due at once.
      const again = await claimNode('p');
      expect(again.attempt).toBe(2);
      expect(await setState({ ...lease(again), state: 'waiting', children: [child('x'), child('y')] })).toBe(true);
      expect((await getJob(parent.id)).state).toBe('pending');
      expect((await store().getFlow({ jobId: parent.id }))!.jobs).toHaveLength(3);
    });

    it('is fenced: a stale lease adds no child', async () => {
      await store().enqueueJobs({ jobs: [{ queue: 'q', kind: 'parent', payload: { node: 'p' }, maxAttempts: 1 }] });
      const parent = await claimNode('p');
      const applied = await store().setStatesIfRunning({ outcomes: [{ id: parent.id, leaseToken: '00000000-0000-4000-8000-000000000000', state: 'waiting', children: [child('x')] }] });
      expect(applied).toEqual([false]);
      expect((await store().countJobs()).reduce((n, c) => n + c.count, 0)).toBe(1);
      expect(await store().getFlow({ jobId: parent.id })).toBeNull();
    });

    it('is cancelled instead when a cancel was requested, and adds nothing', async () => {
      await store().enqueueJobs({ jobs: [{ queue: 'q', kind: 'parent', payload: { node: 'p' }, maxAttempts: 1 }] });
      const parent = await claimNode('p');
      await store().cancelJob({ id: parent.id });
      expect(await setState({ ...lease(parent), state: 'waiting', children: [child('x')] })).toBe(true);
      expect((await getJob(parent.id)).state).toBe('cancelled');
      expect((await store().countJobs()).reduce((n, c) => n + c.count, 0)).toBe(1);
    });

    it('a child that dies cancels the waiting job (default), and runs it with onFailure run', async () => {
      const { parent } = await fanOut([child('x'), child('y', 'run')]);
      const y = await claimNode('y');
      expect(await setState(outcome('dead', lease(y)))).toBe(true);
      expect((await getJob(parent.id)).state).toBe('waiting');
      const x = await claimNode('x');
      expect(await setState(outcome('dead', lease(x)))).toBe(true);
      expect(await getJob(parent.id)).toMatchObject({
        state: 'cancelled',
        error: { code: 'dependency_failed', message: `child "x" (job ${x.id}) ended dead; cancelled (onFailure: cancel)` },
      });
    });
  });

  describe('flows: retrying after a failure', () => {
    async function fail(node: string, state: 'dead' | 'cancelled' | 'skipped' = 'dead'): Promise<ClaimedJob> {
      const job = await claimNode(node);
      expect(await setState(outcome(state, lease(job)))).toBe(true);
      return job;
    }

    async function waitingCount(id: string): Promise<{ state: string; open: number }> {
      const job = await getJob(id);
      const edges = await store().getJobDependencies({ id });
      return { state: job.state, open: edges.filter((e) => !['completed', 'dead', 'skipped', 'cancelled'].includes(e.job.state)).length };
    }

    it('counts a retried parent once: C (run on a) still waits for a slow b after a dies, is retried and completes', async () => {
      const flow = await diamond('run');
      const [, , c] = flow.jobs;
      const b = await claimNode('b');
      const a = await fail('a');
      expect((await getJob(c!.id)).state).toBe('waiting');
      expect(await store().retryJob({ id: a.id })).toMatchObject({ retried: true, job: { state: 'pending' } });
      // c waits for a's new run too.
      expect((await getJob(c!.id)).state).toBe('waiting');
      await complete(await claimNode('a'));
      expect((await getJob(c!.id)).state).toBe('waiting');
      await complete(b);
      expect((await getJob(c!.id)).state).toBe('pending');
      const events = await store().getJobEvents({ id: c!.id });
      expect(events.map((e) => e.toState)).toEqual(['waiting', 'pending']);
      expect(events.at(-1)!.error).toBeNull();
    });

    it('a job cancelled while waiting goes back to waiting on retryJob while its parent runs, and runs after it', async () => {
      const flow = await store().enqueueFlow({ name: 'f', jobs: [flowJob('a'), flowJob('b', [on(0, 'a')])] });
      const [, b] = flow.jobs;
      const a = await claimNode('a');
      await store().cancelJob({ id: b!.id });
      expect(await store().retryJob({ id: b!.id })).toMatchObject({ retried: true, job: { state: 'waiting' } });
      expect(await waitingCount(b!.id)).toEqual({ state: 'waiting', open: 1 });
      expect(await claimableIds()).toEqual([]);
      expect((await history(b!.id)).map((s) => s.toState)).toEqual(['waiting', 'cancelled', 'waiting']);
      await complete(a);
      expect((await getJob(b!.id)).state).toBe('pending');
      // With every parent done, a retry makes it due at once.
      await fail('b', 'cancelled');
      expect(await store().retryJob({ id: b!.id })).toMatchObject({ retried: true, job: { state: 'pending' } });
    });

    it('refuses to retry a job whose parent failed under a cancel or die edge, and writes nothing', async () => {
      const flow = await diamond('die');
      const [, , c, d] = flow.jobs;
      await fail('a', 'cancelled');
      expect((await getJob(c!.id)).state).toBe('dead');
      const before = await history(c!.id);
      expect(await store().retryJob({ id: c!.id })).toMatchObject({ retried: false, job: { state: 'dead' } });
      expect(await store().retryJob({ id: d!.id })).toMatchObject({ retried: false, job: { state: 'cancelled' } });
      expect(await history(c!.id)).toEqual(before);
    });

    it.each(['cancel', 'die'] as const)('a retried parent brings back the jobs its failure ended (onFailure %s), each waiting for what has not ended', async (policy) => {
      const flow = await diamond(policy);
      const [, , c, d] = flow.jobs;
      await complete(await claimNode('b'));
      const a = await fail('a');
      expect((await getJob(d!.id)).state).toBe('cancelled');
      clock().advance(1_000);
      expect(await store().retryJob({ id: a.id })).toMatchObject({ retried: true, job: { state: 'pending' } });
      expect(await waitingCount(c!.id)).toEqual({ state: 'waiting', open: 1 });
      expect(await waitingCount(d!.id)).toEqual({ state: 'waiting', open: 1 });
      expect((await history(c!.id)).at(-1)).toEqual(step(policy === 'die' ? 'dead' : 'cancelled', 'waiting', 0, null, T0 + 1_000));
      expect(await claimableIds()).toEqual([a.id]);
      await complete(await claimNode('a'));
      expect(await claimableIds()).toEqual([c!.id]);
      await complete(await claimNode('c'));
      expect(await claimableIds()).toEqual([d!.id]);
    });

    it('a job released by a failed parent (onFailure run) and not claimed yet waits again for its retry', async () => {
      const flow = await diamond('run');
      const [, , c] = flow.jobs;
      await complete(await claimNode('b'));
      const a = await fail('a');
      expect((await getJob(c!.id)).state).toBe('pending');
      clock().advance(1_000);
      await store().retryJob({ id: a.id });
      expect(await waitingCount(c!.id)).toEqual({ state: 'waiting', open: 1 });
      const events = await store().getJobEvents({ id: c!.id });
      expect(events.at(-1)).toMatchObject({
        fromState: 'pending',
        toState: 'waiting',
        error: { code: 'dependency_retried', message: `parent "a" (job ${a.id}) retried; waits for it again` },
      });
      await complete(await claimNode('a'));
      expect((await getJob(c!.id)).state).toBe('pending');
      expect((await store().getJobEvents({ id: c!.id })).at(-1)!.error).toBeNull();
    });

    it('a retried child brings back the job that waited for it (fan-out), which runs again after it', async () => {
      await store().enqueueJobs({ jobs: [{ queue: 'q', kind: 'parent', payload: { node: 'p' }, maxAttempts: 1 }] });
      const parent = await claimNode('p');
      expect(await setState({ ...lease(parent), state: 'waiting', children: [child('x')] })).toBe(true);
      const x = await fail('x');
      expect((await getJob(parent.id)).state).toBe('cancelled');
      await store().retryJob({ id: x.id });
      expect(await waitingCount(parent.id)).toEqual({ state: 'waiting', open: 1 });
      await complete(await claimNode('x'));
      expect(await claimableIds()).toEqual([parent.id]);
    });

    it('retryFlow resumes a cancelled flow: every failed job back, each due only after all its parents end', async () => {
      const flow = await diamond();
      const [a, b, c, d] = flow.jobs;
      expect(await store().cancelFlow({ id: flow.flowId })).toEqual({ cancelled: 4, requested: 0 });
      expect(await store().retryFlow({ id: flow.flowId })).toEqual({ retried: 4, left: 0 });
      expect((await store().getFlow({ id: flow.flowId }))!.jobs.map((j) => j.job.state)).toEqual(['pending', 'pending', 'waiting', 'waiting']);
      expect(await waitingCount(c!.id)).toEqual({ state: 'waiting', open: 2 });
      await complete(await claimNode('a'));
      expect((await getJob(c!.id)).state).toBe('waiting');
      await complete(await claimNode('b'));
      await complete(await claimNode('c'));
      await complete(await claimNode('d'));
      expect(await getJob(a!.id)).toMatchObject({ state: 'completed' });
      expect((await history(d!.id)).map((s) => s.toState)).toEqual(['waiting', 'cancelled', 'waiting', 'pending', 'running', 'completed']);
      expect(await store().retryFlow({ id: flow.flowId })).toEqual({ retried: 0, left: 0 });
      expect(await store().retryFlow({ id: '987654321' })).toBeNull();
    });

    it('retryFlow after a failure mid-flow: the dead job and what it cancelled come back, completed jobs stay', async () => {
      const flow = await diamond();
      const [, b, c, d] = flow.jobs;
      await complete(await claimNode('b'));
      await fail('a');
      expect(await store().retryFlow({ id: flow.flowId })).toEqual({ retried: 3, left: 0 });
      expect((await getJob(b!.id)).state).toBe('completed');
      expect(await waitingCount(c!.id)).toEqual({ state: 'waiting', open: 1 });
      expect(await waitingCount(d!.id)).toEqual({ state: 'waiting', open: 1 });
    });

    it('retryFlow leaves a job whose stored parent outside the flow failed (and what waits on it)', async () => {
      await store().enqueueJobs({ jobs: [{ queue: 'other', kind: 'k', payload: {}, maxAttempts: 1 }] });
      const [claimed] = await store().claimJobs({ workerId: 'w1', leaseMs: 30_000, queues: [{ queue: 'other', limit: 1 }] });
      expect(await setState(outcome('dead', lease(claimed!)))).toBe(true);
      const flow = await store().enqueueFlow({
        name: 'f',
        jobs: [flowJob('a'), flowJob('b', [on(0, 'a'), { jobId: claimed!.id, name: claimed!.id, onFailure: 'cancel' }]), flowJob('c', [on(1, 'b')])],
      });
      expect(flow.jobs.map((j) => j.state)).toEqual(['pending', 'cancelled', 'cancelled']);
      await fail('a');
      expect(await store().retryFlow({ id: flow.flowId })).toEqual({ retried: 1, left: 2 });
      // Once the stored parent is retried, the rest comes back with it.
      await store().retryJob({ id: claimed!.id });
      expect((await getJob(flow.jobs[1]!.id)).state).toBe('waiting');
      expect((await getJob(flow.jobs[2]!.id)).state).toBe('waiting');
    });
  });
}


