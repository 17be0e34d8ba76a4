/**
 * Conformance for the keys that decide what an enqueue does with the jobs already there
 * (migration 0019): replace by unique key and debounce; and fair share across tenants
 * (migration 0020). Part of describeStoreConformance
 * (conformance.ts), which calls it inside its own describe with a getter for the test's store
 * and clock.
 */
import { describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../../src/errors.js';
import type { ClaimQueue, EnqueueJob, EnqueueResult, JobStore } from '../../src/adapters/store.js';
import type { ClaimedJob } from '../../src/types.js';
import type { StoreConformanceFactory, TestClock } from './conformance.js';

const LEASE_MS = 30_000;

export function describeKeysConformance(current: () => { store: JobStore; clock: TestClock }, factory: StoreConformanceFactory): void {
  const store = () => current().store;
  const clock = () => current().clock;

  async function enqueue(...jobs: Partial<EnqueueJob>[]): Promise<EnqueueResult[]> {
    return store().enqueueJobs({ jobs: jobs.map((job) => ({ queue: 'q', kind: 'k', payload: {}, maxAttempts: 3, ...job })) });
  }

  async function claim(entry: Partial<ClaimQueue> = {}, workerId = 'w1'): Promise<ClaimedJob[]> {
    return store().claimJobs({ workerId, leaseMs: LEASE_MS, queues: [{ queue: 'q', limit: 10, ...entry }] });
  }

  const lease = (job: ClaimedJob) => ({ id: job.id, leaseToken: job.leaseToken });

  describe('replace by unique key', () => {
    it('by default returns the live holder as it is', async () => {
      const [first] = await enqueue({ uniqueKey: 'u', payload: { n: 1 } });
      const [second] = await enqueue({ uniqueKey: 'u', payload: { n: 2 } });
      expect(second).toMatchObject({ created: false, job: { id: first!.job.id, payload: { n: 1 } } });
      expect(second!.replaced).toBeUndefined();
    });

    it('`replace` rewrites a pending holder in place: kind, payload, priority, times, attempts, concurrency key', async () => {
      const [first] = await enqueue({ uniqueKey: 'u', payload: { n: 1 } });
      clock().advance(1_000);
      const runAt = new Date(clock().now() + 60_000);
      const [second] = await enqueue({
        uniqueKey: 'u', onConflict: 'replace', kind: 'k2', payload: { n: 2 }, priority: 5, runAt, maxAttempts: 7, concurrencyKey: 'c',
      });
      expect(second).toMatchObject({
        created: false, replaced: true,
        job: { id: first!.job.id, state: 'pending', kind: 'k2', payload: { n: 2 }, priority: 5, runAt, maxAttempts: 7, concurrencyKey: 'c' },
      });
      expect(await store().getJob({ id: first!.job.id })).toMatchObject({ payload: { n: 2 }, runAt });
      // No new history: the job never changed state.
      expect((await store().getJobEvents({ id: first!.job.id })).map((e) => e.toState)).toEqual(['pending']);
    });

    it('`replace` keeps a retrying holder\'s spent attempts and leaves it at least one', async () => {
      const [first] = await enqueue({ uniqueKey: 'u', maxAttempts: 2 });
      const [running] = await claim();
      await store().setStatesIfRunning({ outcomes: [{ ...lease(running!), state: 'retrying', error: { code: 'x', message: 'x' }, delayMs: 10_000 }] });
      const [second] = await enqueue({ uniqueKey: 'u', onConflict: 'replace', payload: { n: 2 }, maxAttempts: 1 });
      expect(second).toMatchObject({ created: false, replaced: true, job: { id: first!.job.id, state: 'retrying', attempt: 1, maxAttempts: 2 } });
      expect((await claim()).map((job) => job.payload)).toEqual([{ n: 2 }]);
    });

    it('`replace` returns a running holder untouched; its attempt goes on', async () => {
      const [first] = await enqueue({ uniqueKey: 'u', payload: { n: 1 } });
      const [running] = await claim();
      const [second] = await enqueue({ uniqueKey: 'u', onConflict: 'replace', payload: { n: 2 } });
      expect(second).toMatchObject({ created: false, job: { id: first!.job.id, state: 'running', payload: { n: 1 } } });
      expect(await store().renewLeases({ leases: [lease(running!)], leaseMs: LEASE_MS })).toEqual(['renewed']);
    });

    it('`replaceRunning` cancels a running holder at once (its result never lands, its worker is told) and queues the new job', async () => {
      const cancels: string[] = [];
      const unsubscribe = await store().subscribe(() => {}, (id) => cancels.push(id));
      try {
        const [first] = await enqueue({ uniqueKey: 'u', payload: { n: 1 } });
        const [running] = await claim();
        const [second] = await enqueue({ uniqueKey: 'u', onConflict: 'replaceRunning', payload: { n: 2 } });
        expect(second).toMatchObject({ created: true, replaced: true, job: { state: 'pending', payload: { n: 2 }, uniqueKey: 'u' } });
        expect(second!.job.id).not.toBe(first!.job.id);
        expect(await store().getJob({ id: first!.job.id })).toMatchObject({
          state: 'cancelled', leaseToken: null, error: { code: 'replaced' },
        });
        // Fenced as any cancel: the old attempt's writes find no lease.
        expect(await store().renewLeases({ leases: [lease(running!)], leaseMs: LEASE_MS })).toEqual(['lost']);
        expect(await store().setStatesIfRunning({ outcomes: [{ ...lease(running!), state: 'completed', result: 'old' }] })).toEqual([false]);
        expect((await store().getJob({ id: first!.job.id }))!.result).toBeNull();
        const events = await store().getJobEvents({ id: first!.job.id });
        expect(events.at(-1)).toMatchObject({ fromState: 'running', toState: 'cancelled', workerId: null });
        await expect.poll(() => cancels).toContain(first!.job.id);
        expect((await claim()).map((job) => job.payload)).toEqual([{ n: 2 }]);
      } finally {
        await unsubscribe();
      }
    });

    it('`replaceRunning` rewrites a pending holder in place, as `replace`', async () => {
      const [first] = await enqueue({ uniqueKey: 'u', payload: { n: 1 } });
      const [second] = await enqueue({ uniqueKey: 'u', onConflict: 'replaceRunning', payload: { n: 2 } });
      expect(second).toMatchObject({ created: false, replaced: true, job: { id: first!.job.id, payload: { n: 2 } } });
    });

    it('with no live holder, creates the job; in one call, a later input replaces an earlier one', async () => {
      const [a, b] = await enqueue(
        { uniqueKey: 'u', onConflict: 'replace', payload: { n: 1 } },
        { uniqueKey: 'u', onConflict: 'replace', payload: { n: 2 } },
      );
      expect(a).toMatchObject({ created: true });
      expect(b).toMatchObject({ created: false, replaced: true, job: { id: a!.job.id, payload: { n: 2 } } });
    });

    it('refuses an unknown onConflict, and a replace without a unique key, before anything is written', async () => {
      await expect(enqueue({ uniqueKey: 'u', onConflict: 'merge' as never })).rejects.toThrow(InvalidOptionError);
      await expect(enqueue({ onConflict: 'replace' })).rejects.toThrow(/onConflict: "replace" needs a uniqueKey/);
      expect(await store().listJobs({})).toEqual([]);
    });
  });

  describe('debounce', () => {
    const debounce = { key: 'd', delayMs: 1_000 };

    it('makes one job of a burst, due delayMs after the last enqueue, with the last payload', async () => {
      const [first] = await enqueue({ debounce, payload: { n: 1 } });
      expect(first).toMatchObject({ created: true, job: { runAt: new Date(clock().now() + 1_000) } });
      clock().advance(600);
      const [second] = await enqueue({ debounce, payload: { n: 2 }, kind: 'k2' });
      expect(second).toMatchObject({ created: false, job: { id: first!.job.id, kind: 'k2', payload: { n: 2 }, runAt: new Date(clock().now() + 1_000) } });
      clock().advance(999);
      expect(await claim()).toEqual([]);
      clock().advance(1);
      expect((await claim()).map((job) => [job.id, job.payload])).toEqual([[first!.job.id, { n: 2 }]]);
    });

    it('a debounced job shows its key, when read, listed or claimed; a plain one none', async () => {
      const [burst] = await enqueue({ debounce, payload: { n: 1 } });
      const [plain] = await enqueue({ payload: { n: 0 } });
      expect(burst!.job.debounceKey).toBe('d');
      expect(await store().getJob({ id: burst!.job.id })).toMatchObject({ debounceKey: 'd', tenant: null });
      expect(await store().getJob({ id: plain!.job.id })).toMatchObject({ debounceKey: null, tenant: null });
      clock().advance(1_000);
      // The plain job was due first.
      expect((await claim()).map((job) => [job.id, job.debounceKey])).toEqual([[plain!.job.id, null], [burst!.job.id, 'd']]);
    });

    it('runs no later than maxWaitMs after the burst\'s first enqueue', async () => {
      const [first] = await enqueue({ debounce: { ...debounce, maxWaitMs: 2_500 } });
      for (let i = 0; i < 4; i++) {
        clock().advance(800);
        await enqueue({ debounce: { ...debounce, maxWaitMs: 2_500 }, payload: { n: i } });
      }
      const job = await store().getJob({ id: first!.job.id });
      expect(job!.runAt).toEqual(new Date(first!.job.createdAt.getTime() + 2_500));
      expect(await store().listJobs({})).toHaveLength(1);
    });

    it('starts a new burst once the job is claimed, and the claimed one never collides with it', async () => {
      const [first] = await enqueue({ debounce, payload: { n: 1 } });
      clock().advance(1_000);
      const [running] = await claim();
      const [next] = await enqueue({ debounce, payload: { n: 2 } });
      expect(next).toMatchObject({ created: true });
      expect(next!.job.id).not.toBe(first!.job.id);
      // A snooze brings the claimed one back to pending beside the new burst's job.
      expect(await store().setStatesIfRunning({ outcomes: [{ ...lease(running!), state: 'snoozed', error: { code: 's', message: 's' }, delayMs: 0 }] })).toEqual([true]);
      const [third] = await enqueue({ debounce, payload: { n: 3 } });
      expect(third).toMatchObject({ created: false, job: { id: next!.job.id, payload: { n: 3 } } });
    });

    it('keys are per queue; jobs of the call with one key are one job', async () => {
      const results = await enqueue({ debounce, payload: { n: 1 } }, { debounce, payload: { n: 2 } }, { debounce, queue: 'other' });
      expect(results.map((r) => r.created)).toEqual([true, false, true]);
      expect(results[1]!.job).toMatchObject({ id: results[0]!.job.id, payload: { n: 2 } });
    });

    it('refuses debounce with uniqueKey, runAt or runIn, and bad delays, before anything is written', async () => {
      await expect(enqueue({ debounce, uniqueKey: 'u' })).rejects.toThrow(/uniqueKey: cannot be given with debounce/);
      await expect(enqueue({ debounce, runIn: 5 })).rejects.toThrow(/runIn: cannot be given with debounce/);
      await expect(enqueue({ debounce: { key: 'd', delayMs: -1 } })).rejects.toThrow(/debounce.delayMs/);
      await expect(enqueue({ debounce: { key: 'd', delayMs: 10, maxWaitMs: 5 } })).rejects.toThrow(/debounce.maxWaitMs: must be at least delayMs/);
      await expect(enqueue({ debounce: { key: '', delayMs: 10 } })).rejects.toThrow(/debounce.key/);
      await expect(store().enqueueFlow({ name: 'f', jobs: [{ queue: 'q', kind: 'k', payload: {}, maxAttempts: 3, node: 'a', dependsOn: [], debounce }] }))
        .rejects.toThrow(/debounce: is not taken in a flow/);
      expect(await store().listJobs({})).toEqual([]);
    });

    it.runIf(factory.capabilities.transactionalEnqueue)('inside a transaction that rolls back, leaves nothing', async () => {
      await factory.inTransaction?.('rollback', async (client) => {
        await store().enqueueJobs({ jobs: [{ queue: 'q', kind: 'k', payload: {}, maxAttempts: 3, debounce }], client });
      });
      expect(await store().listJobs({})).toEqual([]);
    });
  });

  describe('fair share', () => {
    const fairClaim = (limit: number, workerId = 'w1') => claim({ limit, fairShare: true }, workerId);
    const tenantOf = (jobs: readonly ClaimedJob[]) => jobs.map((job) => (job.payload as { t: string }).t);
    const enqueueFor = (t: string | null, count: number, weight = 1) =>
      enqueue(...Array.from({ length: count }, () => ({ payload: { t: t ?? '-' }, fairShare: { tenant: t, weight } })));

    it('a job shows the tenant it was enqueued for; the default tenant and a plain job show none', async () => {
      const [a] = await enqueueFor('a', 1);
      const [unnamed] = await enqueueFor(null, 1);
      const [plain] = await enqueue({});
      expect(a!.job.tenant).toBe('a');
      expect(await store().getJob({ id: a!.job.id })).toMatchObject({ tenant: 'a', debounceKey: null });
      expect(await store().getJob({ id: unnamed!.job.id })).toMatchObject({ tenant: null });
      expect(await store().getJob({ id: plain!.job.id })).toMatchObject({ tenant: null });
      expect((await fairClaim(5)).map((job) => job.tenant).sort()).toEqual(['a', null].sort());
    });

    it("getTenantBacklogs: a fair queue's tenants with their waiting and running jobs, most waiting first, bounded", async () => {
      await enqueueFor('a', 5);
      await enqueueFor('b', 2);
      await enqueueFor(null, 3);
      await enqueue({ queue: 'plain' });
      expect(tenantOf(await fairClaim(3))).toEqual(['a', 'b', '-']);
      expect(await store().getTenantBacklogs({ queue: 'q' })).toEqual({
        tenants: [
          { tenant: 'a', waiting: 4, running: 1 },
          { tenant: null, waiting: 2, running: 1 },
          { tenant: 'b', waiting: 1, running: 1 },
        ],
        partial: false,
      });
      const bounded = await store().getTenantBacklogs({ queue: 'q', maxScan: 4 });
      expect(bounded.partial).toBe(true);
      expect(bounded.tenants.reduce((n, t) => n + t.waiting, 0)).toBe(4);
      expect(bounded.tenants.reduce((n, t) => n + t.running, 0)).toBe(3);
      expect(await store().getTenantBacklogs({ queue: 'plain' })).toEqual({ tenants: [], partial: false });
      expect(await store().getTenantBacklogs({ queue: 'nope' })).toEqual({ tenants: [], partial: false });
    });

    it('claims round-robin across tenants, whatever the order and size of their backlogs', async () => {
      await enqueueFor('a', 50);
      await enqueueFor('b', 3);
      await enqueueFor('c', 2);
      expect(tenantOf(await fairClaim(6))).toEqual(['a', 'b', 'c', 'a', 'b', 'c']);
      expect(tenantOf(await fairClaim(4))).toEqual(['a', 'b', 'a', 'a']);
    });

    it('a tenant that comes once the others have a backlog joins the current round, and one that comes back is not behind', async () => {
      await enqueueFor('a', 100);
      expect(tenantOf(await fairClaim(20))).toEqual(Array(20).fill('a'));
      await enqueueFor('b', 2);
      expect(tenantOf(await fairClaim(4))).toEqual(['a', 'b', 'a', 'b']);
      // b's next jobs, after b had none waiting, come in the round a is at, not at b's old rank.
      await enqueueFor('b', 1);
      expect(tenantOf(await fairClaim(2)).sort()).toEqual(['a', 'b']);
    });

    it('a weight of 2 gives two jobs a round; the default tenant is one tenant', async () => {
      await enqueueFor('a', 10);
      await enqueueFor('big', 10, 2);
      await enqueueFor(null, 10);
      const round = tenantOf(await fairClaim(8));
      expect(round.filter((t) => t === 'big')).toHaveLength(4);
      expect(round.filter((t) => t === 'a')).toHaveLength(2);
      expect(round.filter((t) => t === '-')).toHaveLength(2);
    });

    it('keeps concurrency keys as the plain claim does: a tenant capped by its key never runs over it', async () => {
      await enqueue(...Array.from({ length: 5 }, () => ({ payload: { t: 'a' }, fairShare: { tenant: 'a', weight: 1 }, concurrencyKey: 'a' })));
      await enqueueFor('b', 5);
      // The first 6 in rank order are a, b, a, b, a, b; the third a is over its key's limit.
      const first = await claim({ limit: 6, fairShare: true, perKeyLimit: 2 });
      expect(tenantOf(first).sort()).toEqual(['a', 'a', 'b', 'b', 'b']);
      expect(tenantOf(await claim({ limit: 6, fairShare: true, perKeyLimit: 2 }))).toEqual(['b', 'b']);
    });

    it('a fair queue claims only ranked jobs, and a plain claim of the queue takes them in the plain order', async () => {
      const [plain] = await enqueue({ payload: { t: 'plain' } });
      await enqueueFor('a', 2);
      expect(tenantOf(await fairClaim(10))).toEqual(['a', 'a']);
      expect((await claim()).map((job) => job.id)).toEqual([plain!.job.id]);
    });

    it('a ranked job with a unique key, in a call beside a debounced one, is ranked as any other', async () => {
      await enqueueFor('a', 3);
      await enqueue(
        { payload: { t: 'b' }, fairShare: { tenant: 'b', weight: 1 }, uniqueKey: 'u1' },
        { payload: { t: 'b' }, fairShare: { tenant: 'b', weight: 1 }, uniqueKey: 'u2' },
        { queue: 'other', debounce: { key: 'd', delayMs: 1_000 } },
      );
      expect(tenantOf(await fairClaim(4))).toEqual(['a', 'b', 'a', 'b']);
    });

    it('a ranked job asleep holds the frontier as one waiting: a new tenant joins at its rank', async () => {
      await enqueueFor('a', 3);
      const [first] = await fairClaim(1);
      expect(await store().suspendIfRunning({ ...lease(first!), kind: 'sleep', name: 'nap', wake: { delayMs: 3_600_000 } })).toEqual({ answer: 'sleeping' });
      // a's asleep at 0, waiting at 1 and 2: b's ranks are 0 and 1.
      await enqueueFor('b', 2);
      expect(tenantOf(await fairClaim(4))).toEqual(['b', 'a', 'b', 'a']);
    });

    it('a call of many jobs over many tenants is ranked as the same jobs enqueued one at a time: both are claimed in the same order', async () => {
      // Two sides of the same history, each on two fair queues of its own: one enqueues a call
      // at a time, the other the same jobs one by one. A plain job rides along in each call.
      const tenants = ['x', 'y', null, 'z', 'v', 'u', 't'];
      // 1/3 and 1/7 are not whole: ranks are sums of inexact steps, in the same order on both sides.
      const weights = [1, 2, 3, 0.5, 1, 7, 1];
      const sides = { call: ['c1', 'c2'], single: ['s1', 's2'] } as const;
      type Side = keyof typeof sides;
      const fairJob = (side: Side, round: number, n: number, t: number, weight = weights[t]!): EnqueueJob => ({
        queue: sides[side][n % 2]!, kind: 'k', payload: { label: `${round}:${n}` }, maxAttempts: 3,
        fairShare: { tenant: t < tenants.length ? tenants[t]! : 'top', weight },
      });
      const round = (side: Side, r: number, first: EnqueueJob[] = []): EnqueueJob[] => [
        ...first,
        ...Array.from({ length: 60 }, (_, n) => fairJob(side, r, n, (n * n + r) % tenants.length)),
        { queue: 'plain', kind: 'k', payload: {}, maxAttempts: 3 },
      ];
      const enqueueAs = async (side: Side, jobs: EnqueueJob[]) => {
        if (side === 'call') await store().enqueueJobs({ jobs });
        else for (const job of jobs) await store().enqueueJobs({ jobs: [job] });
      };
      const claimAll = async (side: Side) => {
        const claimed: ClaimedJob[] = [];
        for (const queue of sides[side]) claimed.push(...(await claim({ queue, limit: 1_000, fairShare: true })));
        return claimed;
      };
      const labels = (jobs: readonly ClaimedJob[]) => jobs.map((job) => `${job.queue.slice(1)} ${(job.payload as { label: string }).label}`);
      const orders: Record<Side, string[][]> = { call: [], single: [] };

      for (const side of ['call', 'single'] as const) {
        // Fresh queues: no tenant has a rank, no job waits.
        await enqueueAs(side, round(side, 0));
        // Some claimed, the lowest of each queue then asleep: the frontier is a sleeping job's rank.
        const firsts = await Promise.all(sides[side].map((queue) => claim({ queue, limit: 6, fairShare: true })));
        for (const [first] of firsts) {
          expect(await store().suspendIfRunning({ ...lease(first!), kind: 'sleep', name: 'nap', wake: { delayMs: 3_600_000 } })).toEqual({ answer: 'sleeping' });
        }
        // Jobs waiting: the frontier holds through the call.
        await enqueueAs(side, round(side, 1));
        orders[side].push(labels(await claimAll(side)));
        clock().advance(3_600_000);
        orders[side].push(labels(await claimAll(side)));
        // No job waits, and the tenant of the call's first job ranked highest: the frontier of the
        // call's later jobs is that first job's rank, above every rank handed out before.
        await enqueueAs(side, [fairJob(side, 2, 0, tenants.length, 0.001), fairJob(side, 2, 1, tenants.length, 0.001)]);
        orders[side].push(labels(await claimAll(side)));
        await enqueueAs(side, round(side, 3, [fairJob(side, 3, 0, tenants.length, 0.001), fairJob(side, 3, 1, tenants.length, 0.001)]));
        orders[side].push(labels(await claimAll(side)));
      }
      expect(orders.call.map((claims) => claims.length)).toEqual([108, 2, 2, 62]);
      expect(orders.call).toEqual(orders.single);
    });

    it('refuses a tenant key or weight the store cannot hold, before anything is written', async () => {
      await expect(enqueue({ fairShare: { tenant: '', weight: 1 } })).rejects.toThrow(/tenant/);
      await expect(enqueue({ fairShare: { tenant: 'a', weight: 0 } })).rejects.toThrow(/fairShare.weight/);
      expect(await store().listJobs({})).toEqual([]);
    });
  });

}
