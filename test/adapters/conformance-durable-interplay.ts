/**
 * Conformance for durable jobs with the rest of the store (docs/durable-jobs.md, "Working with
 * the rest of jobvisor"): a sleeping job is live but not running. A flow node that sleeps has
 * not ended (its dependents wait until it does); a sleeping job holds no concurrency key slot,
 * and its wake-up is a claim like any (keys and rate limits apply); it keeps its unique key; it
 * is never pruned, and the parents it will read again when it wakes are kept while it sleeps;
 * a cancelled or dead job keeps its mailbox until the job is deleted or pruned, and goes with
 * it. Part of describeStoreConformance (conformance.ts).
 */
import { describe, expect, it } from 'vitest';
import type { FlowJob, Lease, OnDependencyFailure, SuspendRequest } from '../../src/adapters/store.js';
import { NEVER } from '../../src/adapters/store.js';
import { JobEndedError, JobNotFoundError } from '../../src/errors.js';
import type { ClaimedJob } from '../../src/types.js';
import { conformanceKit, type CurrentStore, lease, step, T0 } from './conformance.js';

const HOUR = 3_600_000;

function flowJob(node: string, dependsOn: FlowJob['dependsOn'] = []): FlowJob {
  return { queue: 'q', kind: 'k', payload: { node }, maxAttempts: 3, node, dependsOn };
}

const on = (index: number, name: string, onFailure: OnDependencyFailure = 'cancel') => ({ index, name, onFailure });

export function describeDurableInterplayConformance(current: CurrentStore): void {
  const { store, clock, enqueue, enqueueOne, claim, claimOne, getJob, history, outcome, setState } = conformanceKit(current);

  const sleep = (of: Lease, wake: SuspendRequest['wake'] = { delayMs: HOUR }) =>
    store().suspendIfRunning({ ...of, kind: 'sleep', name: 'nap', wake });
  const wait = (of: Lease, signal: string, wake: SuspendRequest['wake'] = { at: NEVER }) =>
    store().suspendIfRunning({ ...of, kind: 'signal', name: signal, signal, wake });
  const signal = (id: string, name: string, payload: unknown = {}) => store().sendSignal({ id, name, payload });
  const complete = async (job: ClaimedJob) => expect(await setState(outcome('completed', lease(job)))).toBe(true);

  /** Claims every due job of q, and gives back (released, no attempt spent) all but `node`'s. */
  async function claimNode(node: string): Promise<ClaimedJob> {
    const claimed = await claim('q', 10);
    const job = claimed.find((j) => (j.payload as { node?: string }).node === node);
    expect(job, `${node} claimable`).toBeDefined();
    for (const other of claimed) {
      if (other !== job) await store().setStatesIfRunning({ outcomes: [{ ...lease(other), state: 'released', error: { code: 'released', message: 'put back' }, delayMs: 0 }] });
    }
    return job!;
  }

  /** a and b due at once, c waits for both (edges under `policy`), d waits for c. */
  const diamond = (policy: OnDependencyFailure = 'cancel') =>
    store().enqueueFlow({
      name: 'orders',
      jobs: [flowJob('a'), flowJob('b'), flowJob('c', [on(0, 'a', policy), on(1, 'b', policy)]), flowJob('d', [on(2, 'c')])],
    });

  describe('durable jobs with flows', () => {
    it('a node that sleeps or waits has not ended: its dependents wait until it completes, whatever wakes it', async () => {
      const flow = await diamond();
      const [, , c, d] = flow.jobs;
      const a = await claimNode('a');
      expect(await wait(lease(a), 'approved', { delayMs: HOUR })).toEqual({ answer: 'sleeping' });
      await complete(await claimNode('b'));
      expect((await getJob(c!.id)).state).toBe('waiting');
      // Its signal wakes it (pending): not an end either.
      expect(await signal(a.id, 'approved', { by: 'ana' })).toEqual({ delivered: 'woke', state: 'pending' });
      expect((await getJob(c!.id)).state).toBe('waiting');
      const again = await claimNode('a');
      expect(await wait(lease(again), 'approved', { at: new Date(T0 + HOUR) })).toEqual({ answer: 'received', payload: { by: 'ana' } });
      expect(await sleep(lease(again))).toEqual({ answer: 'sleeping' });
      clock().advance(HOUR);
      // Its sleep's end makes it claimable, not its dependents.
      const third = await claimNode('a');
      expect((await getJob(c!.id)).state).toBe('waiting');
      clock().advance(1);
      await complete(third);
      expect(await getJob(c!.id)).toMatchObject({ state: 'pending', attempt: 0 });
      expect((await getJob(d!.id)).state).toBe('waiting');
      expect(await history(c!.id)).toEqual([step(null, 'waiting', 0, null, T0), step('waiting', 'pending', 0, null, T0 + HOUR + 1)]);
      const parents = await store().getJobDependencies({ id: c!.id });
      expect(parents.map((p) => [p.name, p.job.state])).toEqual([['a', 'completed'], ['b', 'completed']]);
    });

    it.each([
      ['cancel', 'cancelled'],
      ['die', 'dead'],
      ['run', 'pending'],
    ] as const)('cancelJob on a sleeping node ends it cancelled; its dependents follow their edge (onFailure %s: %s)', async (policy, then) => {
      const flow = await diamond(policy);
      const [, , c, d] = flow.jobs;
      const a = await claimNode('a');
      expect(await sleep(lease(a))).toEqual({ answer: 'sleeping' });
      await complete(await claimNode('b'));
      clock().advance(10);
      expect(await store().cancelJob({ id: a.id })).toMatchObject({ cancelled: true, job: { state: 'cancelled' } });
      expect((await history(a.id)).at(-1)).toEqual(step('sleeping', 'cancelled', 1, null, T0 + 10, 'cancelled'));
      expect((await getJob(c!.id)).state).toBe(then);
      expect((await history(c!.id)).at(-1)).toEqual(step('waiting', then, 0, null, T0 + 10, 'dependency_failed'));
      // d waits for c: it follows c's end, or still waits for it.
      expect((await getJob(d!.id)).state).toBe(then === 'pending' ? 'waiting' : 'cancelled');
    });

    it('cancelFlow cancels a sleeping node as it cancels a pending one, and asks a running one to stop', async () => {
      const flow = await diamond();
      const [, b, c, d] = flow.jobs;
      const a = await claimNode('a');
      expect(await wait(lease(a), 'approved')).toEqual({ answer: 'sleeping' });
      const running = await claimNode('b');
      clock().advance(10);
      expect(await store().cancelFlow({ id: flow.flowId })).toEqual({ cancelled: 3, requested: 1 });
      expect(await getJob(a.id)).toMatchObject({ state: 'cancelled', waitingForSignal: null, error: { code: 'cancelled' } });
      expect((await history(a.id)).at(-1)).toEqual(step('sleeping', 'cancelled', 1, null, T0 + 10, 'cancelled'));
      expect((await getJob(b!.id)).cancelRequestedAt).toEqual(new Date(T0 + 10));
      expect([(await getJob(c!.id)).state, (await getJob(d!.id)).state]).toEqual(['cancelled', 'cancelled']);
      await expect(signal(a.id, 'approved')).rejects.toBeInstanceOf(JobEndedError);
      expect(running.id).toBe(b!.id);
    });

    it('the reaper ends a sleeping node past its expiresAt (dead, expired), and its dependents follow their edge', async () => {
      const flow = await store().enqueueFlow({
        name: 'f',
        jobs: [{ ...flowJob('a'), expiresAt: new Date(T0 + 10_000) }, flowJob('b', [on(0, 'a')])],
      });
      const [, b] = flow.jobs;
      const a = await claimNode('a');
      expect(await wait(lease(a), 'approved', { delayMs: HOUR })).toEqual({ answer: 'sleeping' });
      clock().advance(10_000);
      expect(await store().rescueExpiredJobs()).toMatchObject([{ id: a.id, state: 'dead', error: { code: 'expired' } }]);
      expect(await getJob(b!.id)).toMatchObject({ state: 'cancelled', error: { code: 'dependency_failed' } });
    });

    it('retryFlow leaves a sleeping node as it is; what it revives waits for it again, and runs after it completes', async () => {
      const flow = await diamond();
      const [, b, c, d] = flow.jobs;
      const a = await claimNode('a');
      expect(await sleep(lease(a))).toEqual({ answer: 'sleeping' });
      const failed = await claimNode('b');
      expect(await setState(outcome('dead', lease(failed)))).toBe(true);
      expect([(await getJob(c!.id)).state, (await getJob(d!.id)).state]).toEqual(['cancelled', 'cancelled']);
      const asleep = await getJob(a.id);
      expect(await store().retryFlow({ id: flow.flowId })).toEqual({ retried: 3, left: 0 });
      // The sleeping node was neither retried nor moved.
      expect(await getJob(a.id)).toEqual(asleep);
      expect((await getJob(b!.id)).state).toBe('pending');
      expect([(await getJob(c!.id)).state, (await getJob(d!.id)).state]).toEqual(['waiting', 'waiting']);
      await complete(await claimNode('b'));
      expect((await getJob(c!.id)).state).toBe('waiting');
      clock().advance(HOUR);
      await complete(await claimNode('a'));
      expect((await getJob(c!.id)).state).toBe('pending');
    });

    it('keeps the parents of a sleeping job from pruneJobs and deleteJob: it reads them again when it wakes', async () => {
      const flow = await store().enqueueFlow({ name: 'f', jobs: [flowJob('a'), flowJob('b', [on(0, 'a')])] });
      const [a, b] = flow.jobs;
      await complete(await claimNode('a'));
      const child = await claimNode('b');
      expect(await sleep(lease(child))).toEqual({ answer: 'sleeping' });
      clock().advance(2 * HOUR);
      const later = new Date(clock().now() + 1);
      expect(await store().pruneJobs({ completedBefore: later, deadBefore: later })).toBe(0);
      expect(await store().deleteJob({ id: a!.id })).toMatchObject({ deleted: false, job: { state: 'completed' } });
      const woken = await claimNode('b');
      expect((await store().getJobDependencies({ id: b!.id })).map((p) => [p.name, p.job.state])).toEqual([['a', 'completed']]);
      await complete(woken);
      expect(await store().pruneJobs({ completedBefore: new Date(clock().now() + 1) })).toBe(2);
    });
  });

  describe('durable jobs with concurrency keys and rate limits', () => {
    // Leases that outlast the sleeps: the jobs that run beside a sleeping one keep theirs.
    const claimKeyed = (perKeyLimit: number) =>
      store().claimJobs({ workerId: 'w1', leaseMs: 10 * HOUR, queues: [{ queue: 'q', limit: 5, perKeyLimit }] });

    it('a sleeping job holds no key slot; when it is due it takes one again, never over the limit', async () => {
      const a = await enqueue({ concurrencyKey: 'acct' });
      const b = await enqueue({ concurrencyKey: 'acct' });
      const c = await enqueue({ concurrencyKey: 'acct' });
      const first = await claimKeyed(2);
      expect(first.map((j) => j.id)).toEqual([a.id, b.id]);
      expect(await sleep(lease(first[0]!))).toEqual({ answer: 'sleeping' });
      // a's slot is free while it sleeps: c runs beside b.
      const second = await claimKeyed(2);
      expect(second.map((j) => j.id)).toEqual([c.id]);
      clock().advance(HOUR);
      // a is due, but b and c hold both slots of its key.
      expect(await claimKeyed(2)).toEqual([]);
      await complete(first[1]!);
      expect((await claimKeyed(2)).map((j) => j.id)).toEqual([a.id]);
      expect(await claimKeyed(2)).toEqual([]);
    });

    it('a job its signal woke waits for its key\'s slot like any pending job', async () => {
      const a = await enqueue({ concurrencyKey: 'acct' });
      const claimedA = (await claimKeyed(1))[0]!;
      expect(await wait(lease(claimedA), 'go')).toEqual({ answer: 'sleeping' });
      const b = await enqueue({ concurrencyKey: 'acct' });
      const claimedB = (await claimKeyed(1))[0]!;
      expect(claimedB.id).toBe(b.id);
      expect(await signal(a.id, 'go')).toEqual({ delivered: 'woke', state: 'pending' });
      expect(await claimKeyed(1)).toEqual([]);
      await complete(claimedB);
      const woken = await claimKeyed(1);
      expect(woken.map((j) => j.id)).toEqual([a.id]);
      expect(await wait(lease(woken[0]!), 'go')).toEqual({ answer: 'received', payload: {} });
    });

    it('a wake-up is a claim: it counts against the queue\'s rate limit', async () => {
      const rated = () =>
        store().claimJobs({ workerId: 'w1', leaseMs: 30_000, queues: [{ queue: 'q', limit: 5, rateLimit: { max: 1, intervalMs: 60_000 } }] });
      const a = await enqueue();
      const [claimedA] = await rated();
      expect(await sleep(lease(claimedA!), { delayMs: 60_000 })).toEqual({ answer: 'sleeping' });
      clock().advance(60_000);
      const b = await enqueue({ runAt: new Date(clock().now() + 1) });
      // a's wake-up takes the window's one claim; b, due a moment later, waits for the next window.
      expect((await rated()).map((j) => j.id)).toEqual([a.id]);
      clock().advance(1);
      expect(await rated()).toEqual([]);
      clock().advance(60_000);
      expect((await rated()).map((j) => j.id)).toEqual([b.id]);
    });
  });

  describe('durable jobs with unique keys', () => {
    it('a sleeping job keeps its unique key: an enqueue with it returns the sleeping job; once it has ended the key is free', async () => {
      const created = await enqueue({ uniqueKey: 'order-1' });
      const claimed = await claimOne();
      expect(await wait(lease(claimed), 'shipped')).toEqual({ answer: 'sleeping' });
      const again = await enqueueOne({ uniqueKey: 'order-1' });
      expect(again).toMatchObject({ created: false, job: { id: created.id, state: 'sleeping', waitingForSignal: 'shipped' } });
      await store().cancelJob({ id: created.id });
      expect(await enqueueOne({ uniqueKey: 'order-1' })).toMatchObject({ created: true });
    });

    it('retryJob refuses a job whose unique key a sleeping job holds', async () => {
      const first = await enqueue({ uniqueKey: 'u' });
      await store().cancelJob({ id: first.id });
      const second = await enqueue({ uniqueKey: 'u' });
      const claimed = await claimOne();
      expect(claimed.id).toBe(second.id);
      expect(await sleep(lease(claimed))).toEqual({ answer: 'sleeping' });
      expect(await store().retryJob({ id: first.id })).toMatchObject({ retried: false, job: { state: 'cancelled' } });
    });
  });

  describe('durable jobs with retention, delete and cancel', () => {
    it('pruneJobs never prunes a sleeping job, however old; once it has ended it goes with its mailbox', async () => {
      const created = await enqueue();
      const claimed = await claimOne();
      expect(await signal(created.id, 'later', 'kept')).toEqual({ delivered: 'queued', state: 'running' });
      expect(await wait(lease(claimed), 'approved')).toEqual({ answer: 'sleeping' });
      clock().advance(365 * 24 * HOUR);
      const future = new Date(clock().now() + 1);
      expect(await store().pruneJobs({ completedBefore: future, deadBefore: future })).toBe(0);
      expect((await getJob(created.id)).state).toBe('sleeping');
      expect(await signal(created.id, 'approved')).toEqual({ delivered: 'woke', state: 'pending' });
      const woken = await claimOne();
      await complete(woken);
      expect(await store().pruneJobs({ completedBefore: new Date(clock().now() + 1) })).toBe(1);
      expect(await store().getJob({ id: created.id })).toBeNull();
      await expect(signal(created.id, 'later')).rejects.toBeInstanceOf(JobNotFoundError);
    });

    it('deleteJob deletes a sleeping job that nothing waits for, with its mailbox; a signal to it then finds no job', async () => {
      await enqueue();
      const claimed = await claimOne();
      expect(await wait(lease(claimed), 'approved')).toEqual({ answer: 'sleeping' });
      expect(await signal(claimed.id, 'other')).toEqual({ delivered: 'queued', state: 'sleeping' });
      expect(await store().deleteJob({ id: claimed.id })).toMatchObject({ deleted: true, job: { state: 'sleeping' } });
      await expect(signal(claimed.id, 'approved')).rejects.toBeInstanceOf(JobNotFoundError);
      expect(await claim()).toEqual([]);
    });

    it('a cancel wakes nothing and keeps the mailbox: retried, the job\'s waits take what was sent before the cancel', async () => {
      await enqueue();
      const claimed = await claimOne();
      expect(await signal(claimed.id, 'approved', { by: 'ana' })).toEqual({ delivered: 'queued', state: 'running' });
      expect(await wait(lease(claimed), 'shipped', { delayMs: HOUR })).toEqual({ answer: 'sleeping' });
      expect(await store().cancelJob({ id: claimed.id })).toMatchObject({ cancelled: true });
      await expect(signal(claimed.id, 'shipped')).rejects.toBeInstanceOf(JobEndedError);
      expect(await claim()).toEqual([]);
      expect(await store().retryJob({ id: claimed.id })).toMatchObject({ retried: true, job: { state: 'pending' } });
      const again = await claimOne();
      expect(again.steps).toMatchObject([{ kind: 'signal', name: 'shipped', status: 'waiting' }]);
      expect(await wait(lease(again), 'approved', { delayMs: 0 })).toEqual({ answer: 'received', payload: { by: 'ana' } });
    });
  });
}
