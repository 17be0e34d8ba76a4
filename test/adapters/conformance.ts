/**
 * The store conformance suite: every `JobStore` adapter runs it, so they all keep the same
 * semantics (fencing, unique keys, history, claim order, admin operations, wake-ups).
 *
 * Plugging an adapter in, from its own test file:
 *
 *   describeStoreConformance('pglite', {
 *     create: async (clock) => pgliteStore({ db, schema: freshSchemaName(), clock }),  // migrated
 *     teardown: async (store) => { ... drop the schema ... },
 *     inTransaction: async (end, fn) => { ... BEGIN; await fn(client); COMMIT or ROLLBACK ... },
 *   });
 *
 * One expensive database per file (set up in the file's own `beforeAll`), a fresh store with
 * empty tables per test. Time only moves through the injected clock: a store must take "now"
 * from it for every timestamp and every comparison (runAt, lease expiry), never from the
 * database's now(). No test sleeps; only the wake-up tests wait (briefly) for notifications.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type {
  EnqueueJob,
  EnqueueResult,
  JobOutcome,
  JobStore,
  Lease,
  ScanJobsParams,
  SqlClient,
} from '../../src/adapters/store.js';
import type { ClaimedJob, Clock, JobErrorInfo, JobRecord, JobState } from '../../src/types.js';
import { describeAlertConformance } from './conformance-alerts.js';
import { describeControlConformance } from './conformance-control.js';
import { describeReleaseConformance } from './conformance-release.js';
import { describeLimitsConformance } from './conformance-limits.js';

/** A clock that only moves when told to. */
export interface TestClock extends Clock {
  /** Moves time forward by `ms` (>= 0). */
  advance(ms: number): void;
}

export interface StoreConformanceFactory {
  /** A fresh store with no jobs and no history, reading "now" from `clock`. Called before
   *  each test; the suite calls `store.close()` after it. Ids need not start at 1. */
  create(clock: TestClock): Promise<JobStore>;
  /** After each test, once the store is closed: drop its schema, truncate tables … */
  teardown?(store: JobStore): Promise<void>;
  /** Runs `fn` with a client inside an open transaction, then commits or rolls back. Give it
   *  for stores with `capabilities.transactionalEnqueue`; their enqueue-in-a-transaction
   *  tests are skipped without it. */
  inTransaction?(end: 'commit' | 'rollback', fn: (client: SqlClient) => Promise<void>): Promise<void>;
}

/** Where every test's clock starts. */
const T0 = Date.parse('2030-01-01T00:00:00.000Z');
const LEASE_MS = 30_000;
/** Valid uuids, in case a store keeps tokens in a uuid column; no claim ever returns them. */
const WRONG_TOKEN = '00000000-0000-4000-8000-000000000000';
/** A valid bigint id that no test reaches. */
const UNKNOWN_ID = '987654321';

const BOOM: JobErrorInfo = {
  code: 'handler_error',
  message: 'boom',
  name: 'Error',
  stack: 'Error: boom\n    at handler (handler.ts:1:1)',
};

const OUTCOME_STATES = ['completed', 'retrying', 'dead', 'skipped', 'cancelled'] as const;
type OutcomeState = (typeof OUTCOME_STATES)[number];
const FINAL_OUTCOMES = ['completed', 'dead', 'skipped', 'cancelled'] as const;
/** Everything a worker writes under its lease. */
const FENCED_WRITES = ['renew', ...OUTCOME_STATES] as const;
type FencedWrite = (typeof FENCED_WRITES)[number];

/** A history row with its time as ms and its error as just the code, for exact comparison. */
interface Step {
  fromState: JobState | null;
  toState: JobState;
  attempt: number;
  workerId: string | null;
  at: number;
  error: string | null;
}

function step(
  fromState: JobState | null,
  toState: JobState,
  attempt: number,
  workerId: string | null,
  at: number,
  error: string | null = null,
): Step {
  return { fromState, toState, attempt, workerId, at, error };
}

function createTestClock(start: number): TestClock {
  let now = start;
  return {
    now: () => now,
    advance(ms) {
      if (!(ms >= 0)) throw new RangeError(`advance(${ms}): time only moves forward`);
      now += ms;
    },
  };
}

function lease(job: ClaimedJob): Lease {
  return { id: job.id, leaseToken: job.leaseToken };
}

function ids(jobs: readonly { id: string }[]): string[] {
  return jobs.map((job) => job.id);
}

function sortedIds(jobs: readonly { id: string }[]): string[] {
  return ids(jobs).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));
}

export function describeStoreConformance(name: string, factory: StoreConformanceFactory): void {
  describe(`JobStore conformance: ${name}`, () => {
    let clock: TestClock;
    let store: JobStore;

    beforeEach(async () => {
      clock = createTestClock(T0);
      store = await factory.create(clock);
    });

    afterEach(async () => {
      if (!store) return;
      await store.close();
      await factory.teardown?.(store);
    });

    const now = (): Date => new Date(clock.now());

    async function enqueue(job: Partial<EnqueueJob> = {}): Promise<JobRecord> {
      const [result] = await store.enqueueJobs({
        jobs: [{ queue: 'q', kind: 'k', payload: { n: 1 }, maxAttempts: 3, ...job }],
      });
      expect(result?.created).toBe(true);
      return result!.job;
    }

    async function enqueueOne(job: Partial<EnqueueJob>): Promise<EnqueueResult> {
      const results = await store.enqueueJobs({
        jobs: [{ queue: 'q', kind: 'k', payload: { n: 1 }, maxAttempts: 3, ...job }],
      });
      expect(results).toHaveLength(1);
      return results[0]!;
    }

    async function claim(queue = 'q', limit = 1, workerId = 'w1', leaseMs = LEASE_MS): Promise<ClaimedJob[]> {
      return store.claimJobs({ workerId, leaseMs, queues: [{ queue, limit }] });
    }

    async function claimOne(queue = 'q', workerId = 'w1'): Promise<ClaimedJob> {
      const claimed = await claim(queue, 1, workerId);
      expect(claimed).toHaveLength(1);
      return claimed[0]!;
    }

    async function getJob(id: string): Promise<JobRecord> {
      const job = await store.getJob({ id });
      expect(job).not.toBeNull();
      return job!;
    }

    async function history(id: string): Promise<Step[]> {
      const events = await store.getJobEvents({ id });
      for (const event of events) expect(event.jobId).toBe(id);
      return events.map((event) =>
        step(event.fromState, event.toState, event.attempt, event.workerId, event.at.getTime(), event.error?.code ?? null),
      );
    }

    function outcome(state: OutcomeState, of: Lease, runAt?: Date): JobOutcome {
      switch (state) {
        case 'completed':
          return { ...of, state, result: { photos: 20 } };
        case 'retrying':
          return { ...of, state, error: BOOM, runAt: runAt ?? new Date(clock.now() + 5_000) };
        case 'dead':
          return { ...of, state, error: { code: 'permanent_error', message: 'place is gone', name: 'PermanentJobError' } };
        case 'skipped':
          return { ...of, state, error: { code: 'unknown_kind', message: 'no handler for kind "k"' } };
        case 'cancelled':
          return { ...of, state, error: { code: 'cancelled', message: 'cancelled while running' } };
      }
    }

    async function setState(o: JobOutcome): Promise<boolean> {
      const applied = await store.setStatesIfRunning({ outcomes: [o] });
      expect(applied).toHaveLength(1);
      return applied[0]!;
    }

    async function write(kind: FencedWrite, of: Lease): Promise<boolean> {
      if (kind === 'renew') {
        const applied = await store.renewLeases({ leases: [of], leaseMs: LEASE_MS });
        expect(applied).toHaveLength(1);
        return applied[0] !== 'lost';
      }
      return setState(outcome(kind, of));
    }

    /** A job moved into `state` by a worker (w1), in a queue with no other due job. */
    async function jobIn(state: JobState, job: Partial<EnqueueJob> = {}): Promise<JobRecord> {
      const created = await enqueue(job);
      if (state === 'pending') return getJob(created.id);
      const claimed = await claimOne(created.queue);
      expect(claimed.id).toBe(created.id);
      if (state !== 'running') expect(await setState(outcome(state, lease(claimed)))).toBe(true);
      return getJob(created.id);
    }

    it('reports its capabilities', () => {
      expect(typeof store.capabilities.notifications).toBe('boolean');
      expect(typeof store.capabilities.transactionalEnqueue).toBe('boolean');
    });

    describe('enqueueJobs', () => {
      it('inserts a pending job with defaults and records its creation', async () => {
        const payload = { placeId: 'p1', nested: { list: [1, 'two', null, true], n: 1.5 } };
        const [result] = await store.enqueueJobs({ jobs: [{ queue: 'q', kind: 'k', payload, maxAttempts: 3 }] });
        expect(result).toEqual({
          created: true,
          job: {
            id: expect.stringMatching(/^[1-9][0-9]*$/),
            queue: 'q',
            kind: 'k',
            payload,
            state: 'pending',
            priority: 0,
            runAt: new Date(T0),
            attempt: 0,
            maxAttempts: 3,
            uniqueKey: null,
            concurrencyKey: null,
            workerId: null,
            leaseToken: null,
            leaseExpiresAt: null,
            result: null,
            error: null,
            createdAt: new Date(T0),
            updatedAt: new Date(T0),
            finishedAt: null,
            expiresAt: null,
            cancelRequestedAt: null,
            progress: null,
            traceContext: null,
          },
        });
        const id = result!.job.id;
        expect(await store.getJob({ id })).toEqual(result!.job);
        expect(await history(id)).toEqual([step(null, 'pending', 0, null, T0)]);
      });

      it('keeps priority, runAt, uniqueKey and any JSON payload; answers in input order with increasing ids', async () => {
        clock.advance(1_000);
        const jobs: EnqueueJob[] = [
          { queue: 'q', kind: 'a', payload: 'text', maxAttempts: 1, priority: 5 },
          { queue: 'q', kind: 'b', payload: 42, maxAttempts: 2, priority: -3, runAt: new Date(T0 + 60_000) },
          { queue: 'r', kind: 'c', payload: null, maxAttempts: 3, uniqueKey: 'u1' },
          { queue: 'r', kind: 'd', payload: [{ a: 1 }, []], maxAttempts: 4, runAt: new Date(T0 - 5_000), uniqueKey: null },
        ];
        const results = await store.enqueueJobs({ jobs });
        expect(results.map((r) => r.created)).toEqual([true, true, true, true]);
        expect(results.map((r) => r.job.kind)).toEqual(['a', 'b', 'c', 'd']);
        expect(results.map((r) => r.job.payload)).toEqual(['text', 42, null, [{ a: 1 }, []]]);
        expect(results.map((r) => r.job.priority)).toEqual([5, -3, 0, 0]);
        expect(results.map((r) => r.job.runAt.getTime())).toEqual([T0 + 1_000, T0 + 60_000, T0 + 1_000, T0 - 5_000]);
        expect(results.map((r) => r.job.maxAttempts)).toEqual([1, 2, 3, 4]);
        expect(results.map((r) => r.job.uniqueKey)).toEqual([null, null, 'u1', null]);
        expect(results.map((r) => r.job.createdAt.getTime())).toEqual(Array(4).fill(T0 + 1_000));
        const jobIds = results.map((r) => BigInt(r.job.id));
        for (let i = 1; i < jobIds.length; i++) expect(jobIds[i]! > jobIds[i - 1]!).toBe(true);
        for (const r of results) expect(await store.getJob({ id: r.job.id })).toEqual(r.job);
      });

      it('accepts an empty batch', async () => {
        expect(await store.enqueueJobs({ jobs: [] })).toEqual([]);
        expect(await store.listJobs({})).toEqual([]);
      });

      it('answers null and no history for an unknown id', async () => {
        await enqueue();
        expect(await store.getJob({ id: UNKNOWN_ID })).toBeNull();
        expect(await store.getJobEvents({ id: UNKNOWN_ID })).toEqual([]);
      });

      // A store either joins the caller's transaction (a factory with inTransaction tests that
      // below) or refuses a client: each store runs the tests of what it is, none is skipped.
      if (!factory.inTransaction) it('rejects a SQL client when it cannot join a transaction', async () => {
        expect(store.capabilities.transactionalEnqueue).toBe(false);
        const client: SqlClient = { query: async () => ({ rows: [] }) };
        await expect(
          store.enqueueJobs({ jobs: [{ queue: 'q', kind: 'k', payload: {}, maxAttempts: 1 }], client }),
        ).rejects.toMatchObject({ code: 'invalid_option', option: 'client' });
        expect(await store.listJobs({})).toEqual([]);
      });
    });

    if (factory.inTransaction) describe('enqueueJobs inside the caller\'s transaction', () => {
      it('a committed enqueue is visible, with its history', async () => {
        expect(store.capabilities.transactionalEnqueue).toBe(true);
        let created: EnqueueResult[] = [];
        await factory.inTransaction!('commit', async (client) => {
          created = await store.enqueueJobs({ jobs: [{ queue: 'q', kind: 'k', payload: { t: 1 }, maxAttempts: 1 }], client });
        });
        expect(created).toHaveLength(1);
        const id = created[0]!.job.id;
        expect(await getJob(id)).toEqual(created[0]!.job);
        expect(await history(id)).toEqual([step(null, 'pending', 0, null, T0)]);
      });

      it('a rolled back enqueue leaves neither job nor history', async () => {
        let id = '';
        await factory.inTransaction!('rollback', async (client) => {
          const [result] = await store.enqueueJobs({ jobs: [{ queue: 'q', kind: 'k', payload: {}, maxAttempts: 1 }], client });
          id = result!.job.id;
        });
        expect(await store.getJob({ id })).toBeNull();
        expect(await store.getJobEvents({ id })).toEqual([]);
        expect(await store.listJobs({})).toEqual([]);
      });
    });

    describe('unique keys', () => {
      it('returns the live job instead of a duplicate while it is pending, running or retrying', async () => {
        const first = await enqueue({ uniqueKey: 'collect:p1', payload: { v: 1 } });
        const duplicate = () => enqueueOne({ uniqueKey: 'collect:p1', payload: { v: 2 } });

        let again = await duplicate();
        expect(again).toEqual({ created: false, job: await getJob(first.id) });
        expect(again.job.payload).toEqual({ v: 1 });

        const claimed = await claimOne();
        again = await duplicate();
        expect(again).toEqual({ created: false, job: await getJob(first.id) });
        expect(again.job.state).toBe('running');

        expect(await setState(outcome('retrying', lease(claimed)))).toBe(true);
        again = await duplicate();
        expect(again).toEqual({ created: false, job: await getJob(first.id) });
        expect(again.job.state).toBe('retrying');

        expect(ids(await store.listJobs({}))).toEqual([first.id]);
        expect((await history(first.id)).map((s) => s.toState)).toEqual(['pending', 'running', 'retrying']);
      });

      it('is per queue, and a null or absent key never dedupes', async () => {
        const a = await enqueueOne({ queue: 'a', uniqueKey: 'same' });
        const b = await enqueueOne({ queue: 'b', uniqueKey: 'same' });
        const n1 = await enqueueOne({ queue: 'a', uniqueKey: null });
        const n2 = await enqueueOne({ queue: 'a', uniqueKey: null });
        const n3 = await enqueueOne({ queue: 'a' });
        expect([a, b, n1, n2, n3].map((r) => r.created)).toEqual([true, true, true, true, true]);
        expect(new Set(ids([a, b, n1, n2, n3].map((r) => r.job))).size).toBe(5);
      });

      it.each(FINAL_OUTCOMES)('frees the key once the live job ends %s', async (state) => {
        const first = await jobIn(state, { uniqueKey: 'k1' });
        expect(first.state).toBe(state);
        const second = await enqueueOne({ uniqueKey: 'k1' });
        expect(second.created).toBe(true);
        expect(second.job.id).not.toBe(first.id);
        const third = await enqueueOne({ uniqueKey: 'k1' });
        expect(third).toEqual({ created: false, job: second.job });
      });

      it('frees the key when a pending job is cancelled or its lease expires with no attempts left', async () => {
        const cancelled = await enqueue({ uniqueKey: 'c' });
        await store.cancelJob({ id: cancelled.id });
        expect((await enqueueOne({ uniqueKey: 'c' })).created).toBe(true);

        await enqueue({ queue: 'r', uniqueKey: 'd', maxAttempts: 1 });
        await claimOne('r');
        clock.advance(LEASE_MS + 1);
        expect((await store.rescueExpiredJobs()).map((j) => j.state)).toEqual(['dead']);
        expect((await enqueueOne({ queue: 'r', uniqueKey: 'd' })).created).toBe(true);
      });

      it('dedupes within one batch', async () => {
        const results = await store.enqueueJobs({
          jobs: [
            { queue: 'q', kind: 'k', payload: { v: 1 }, maxAttempts: 3, uniqueKey: 'k1' },
            { queue: 'q', kind: 'k', payload: { v: 2 }, maxAttempts: 3, uniqueKey: 'k1' },
            { queue: 'q', kind: 'k', payload: { v: 3 }, maxAttempts: 3, uniqueKey: 'k2' },
            { queue: 'other', kind: 'k', payload: { v: 4 }, maxAttempts: 3, uniqueKey: 'k1' },
            { queue: 'q', kind: 'k', payload: { v: 5 }, maxAttempts: 3, uniqueKey: 'k2' },
          ],
        });
        expect(results.map((r) => r.created)).toEqual([true, false, true, true, false]);
        expect(results[1]!.job).toEqual(results[0]!.job);
        expect(results[4]!.job).toEqual(results[2]!.job);
        expect(results.map((r) => r.job.payload)).toEqual([{ v: 1 }, { v: 1 }, { v: 3 }, { v: 4 }, { v: 3 }]);
        expect(await store.listJobs({})).toHaveLength(3);
        expect(await history(results[0]!.job.id)).toEqual([step(null, 'pending', 0, null, T0)]);
      });

      it('retryJob will not revive a job whose key a newer live job holds', async () => {
        const old = await jobIn('dead', { uniqueKey: 'k1' });
        const newer = await enqueue({ uniqueKey: 'k1' });
        const before = await history(old.id);
        expect(await store.retryJob({ id: old.id })).toEqual({ retried: false, job: old });
        expect(await getJob(old.id)).toEqual(old);
        expect(await history(old.id)).toEqual(before);

        // Once the newer one is final, the old one can come back.
        await store.cancelJob({ id: newer.id });
        const retried = await store.retryJob({ id: old.id });
        expect(retried?.retried).toBe(true);
        expect((await enqueueOne({ uniqueKey: 'k1' })).job.id).toBe(old.id);
      });
    });

    describe('claimJobs', () => {
      it('leases a due job: running, attempt + 1, the worker, a fresh token and expiry; records it', async () => {
        const created = await enqueue();
        clock.advance(1_000);
        const [claimed, ...rest] = await store.claimJobs({ workerId: 'w1', leaseMs: 45_000, queues: [{ queue: 'q', limit: 10 }] });
        expect(rest).toEqual([]);
        expect(claimed).toEqual({
          ...created,
          state: 'running',
          attempt: 1,
          workerId: 'w1',
          leaseToken: expect.any(String),
          leaseExpiresAt: new Date(T0 + 1_000 + 45_000),
          updatedAt: new Date(T0 + 1_000),
        });
        expect(claimed!.leaseToken.length).toBeGreaterThan(0);
        expect(await getJob(created.id)).toEqual(claimed);
        expect(await history(created.id)).toEqual([
          step(null, 'pending', 0, null, T0),
          step('pending', 'running', 1, 'w1', T0 + 1_000),
        ]);
      });

      it('takes the highest priority first, then the earliest runAt, then the lowest id', async () => {
        // Two queues with the same jobs: one is drained one at a time, one in a single claim.
        for (const queue of ['one', 'many']) {
          const made: Record<string, string> = {};
          const spec: Array<[string, number, number]> = [
            ['j1', 0, -5_000],
            ['j2', 5, 0],
            ['j3', 0, -10_000],
            ['j4', 5, 0],
            ['j5', -1, -20_000],
            ['j6', 5, -1],
          ];
          for (const [label, priority, offset] of spec) {
            made[label] = (await enqueue({ queue, priority, runAt: new Date(T0 + offset), payload: label })).id;
          }
          const expected = ['j6', 'j2', 'j4', 'j3', 'j1', 'j5'].map((label) => made[label]!);
          if (queue === 'one') {
            const order: string[] = [];
            for (let i = 0; i < expected.length; i++) order.push((await claimOne(queue)).id);
            expect(order).toEqual(expected);
          } else {
            expect(sortedIds(await claim(queue, 3))).toEqual(sortedIds(expected.slice(0, 3).map((id) => ({ id }))));
          }
        }
      });

      it('takes at most limit jobs per queue, from several queues in one call, and skips limit 0', async () => {
        for (const queue of ['a', 'a', 'a', 'b', 'b', 'b', 'c', 'c', 'd']) await enqueue({ queue });
        const claimed = await store.claimJobs({
          workerId: 'w1',
          leaseMs: LEASE_MS,
          queues: [
            { queue: 'a', limit: 2 },
            { queue: 'b', limit: 5 },
            { queue: 'c', limit: 0 },
            { queue: 'empty', limit: 3 },
          ],
        });
        const byQueue = (queue: string) => claimed.filter((job) => job.queue === queue).length;
        expect([byQueue('a'), byQueue('b'), byQueue('c'), byQueue('d')]).toEqual([2, 3, 0, 0]);
        for (const job of claimed) expect(job).toMatchObject({ state: 'running', attempt: 1, workerId: 'w1' });
        expect(await store.listJobs({ state: 'pending' })).toHaveLength(4);
        expect(await store.listJobs({ queue: 'a', state: 'pending' })).toHaveLength(1);
      });

      it('does not take a job before its runAt, and takes it at runAt exactly', async () => {
        await enqueue({ runAt: new Date(T0 + 10_000) });
        expect(await claim()).toEqual([]);
        clock.advance(9_999);
        expect(await claim()).toEqual([]);
        clock.advance(1);
        expect(await claim()).toHaveLength(1);
      });

      it('never hands one job to two claims, one after another or at once', async () => {
        for (let i = 0; i < 5; i++) await enqueue();
        const first = await claim('q', 3);
        const second = await claim('q', 3, 'w2');
        expect(first).toHaveLength(3);
        expect(second).toHaveLength(2);
        expect(new Set([...ids(first), ...ids(second)]).size).toBe(5);
        expect(await claim('q', 10, 'w3')).toEqual([]);

        for (let i = 0; i < 20; i++) await enqueue({ queue: 'race' });
        const batches = await Promise.all(['r1', 'r2', 'r3', 'r4', 'r5'].map((w) => claim('race', 3, w)));
        for (const batch of batches) expect(batch.length).toBeLessThanOrEqual(3);
        const rest = await claim('race', 20, 'r6');
        const all = [...batches.flat(), ...rest];
        expect(all).toHaveLength(20);
        expect(new Set(ids(all)).size).toBe(20);
        for (const job of all) expect((await getJob(job.id)).workerId).toBe(job.workerId);
      });

      it('gives every attempt a fresh token', async () => {
        await enqueue();
        const first = await claimOne();
        expect(await setState(outcome('retrying', lease(first), now()))).toBe(true);
        const second = await claimOne('q', 'w2');
        expect(second.leaseToken).not.toBe(first.leaseToken);
        await enqueue();
        const other = await claimOne();
        expect(new Set([first.leaseToken, second.leaseToken, other.leaseToken]).size).toBe(3);
      });
    });

    describe('renewLeases', () => {
      it('pushes each lease to now + leaseMs, answering per lease in input order, without history', async () => {
        await enqueue();
        await enqueue();
        const [c1, c2] = await claim('q', 2);
        clock.advance(10_000);
        const applied = await store.renewLeases({
          leases: [lease(c2!), { id: c1!.id, leaseToken: WRONG_TOKEN }, lease(c1!), { id: UNKNOWN_ID, leaseToken: c1!.leaseToken }],
          leaseMs: 60_000,
        });
        expect(applied).toEqual(['renewed', 'lost', 'renewed', 'lost']);
        for (const c of [c1!, c2!]) {
          const job = await getJob(c.id);
          expect(job.leaseExpiresAt).toEqual(new Date(T0 + 70_000));
          expect(job).toMatchObject({ state: 'running', leaseToken: c.leaseToken, workerId: 'w1', attempt: 1 });
          expect(await history(c.id)).toHaveLength(2);
        }
        expect(await store.renewLeases({ leases: [], leaseMs: 1 })).toEqual([]);
      });

      it('still applies to an expired lease that nobody rescued yet', async () => {
        await enqueue();
        const claimed = await claimOne();
        clock.advance(LEASE_MS + 5_000);
        expect(await write('renew', lease(claimed))).toBe(true);
        expect((await getJob(claimed.id)).leaseExpiresAt).toEqual(new Date(clock.now() + LEASE_MS));
        expect(await store.rescueExpiredJobs()).toEqual([]);
      });
    });

    describe('setStatesIfRunning', () => {
      it('completed: stores the result, clears error and lease, keeps the worker, sets finishedAt', async () => {
        const created = await enqueue();
        const first = await claimOne();
        expect(await setState(outcome('retrying', lease(first), now()))).toBe(true);
        expect((await getJob(created.id)).error).toEqual(BOOM);
        const second = await claimOne('q', 'w2');
        clock.advance(500);
        expect(await setState({ ...lease(second), state: 'completed', result: { photos: 20, tags: ['a'] } })).toBe(true);
        const job = await getJob(created.id);
        expect(job).toEqual({
          ...second,
          state: 'completed',
          result: { photos: 20, tags: ['a'] },
          error: null,
          leaseToken: null,
          leaseExpiresAt: null,
          workerId: 'w2',
          attempt: 2,
          updatedAt: new Date(T0 + 500),
          finishedAt: new Date(T0 + 500),
        });
        expect(await history(created.id)).toEqual([
          step(null, 'pending', 0, null, T0),
          step('pending', 'running', 1, 'w1', T0),
          step('running', 'retrying', 1, 'w1', T0, 'handler_error'),
          step('retrying', 'running', 2, 'w2', T0),
          step('running', 'completed', 2, 'w2', T0 + 500),
        ]);
      });

      it('completed with no result stores null', async () => {
        await enqueue();
        const claimed = await claimOne();
        expect(await setState({ ...lease(claimed), state: 'completed', result: undefined })).toBe(true);
        expect((await getJob(claimed.id)).result).toBeNull();
      });

      it('retrying: sets runAt and error, leaves the job unfinished; it is claimed again at runAt', async () => {
        const created = await enqueue();
        const first = await claimOne();
        clock.advance(1_000);
        expect(await setState({ ...lease(first), state: 'retrying', error: BOOM, runAt: new Date(T0 + 6_000) })).toBe(true);
        expect(await getJob(created.id)).toEqual({
          ...first,
          state: 'retrying',
          runAt: new Date(T0 + 6_000),
          error: BOOM,
          leaseToken: null,
          leaseExpiresAt: null,
          workerId: 'w1',
          updatedAt: new Date(T0 + 1_000),
          finishedAt: null,
        });
        const events = await store.getJobEvents({ id: created.id });
        expect(events[2]?.error).toEqual(BOOM);

        clock.advance(4_999);
        expect(await claim()).toEqual([]);
        clock.advance(1);
        const second = await claimOne('q', 'w2');
        expect(second).toMatchObject({ id: created.id, attempt: 2, workerId: 'w2', error: BOOM });
        expect(await history(created.id)).toEqual([
          step(null, 'pending', 0, null, T0),
          step('pending', 'running', 1, 'w1', T0),
          step('running', 'retrying', 1, 'w1', T0 + 1_000, 'handler_error'),
          step('retrying', 'running', 2, 'w2', T0 + 6_000),
        ]);
      });

      it.each(['dead', 'skipped', 'cancelled'] as const)('%s: sets the error and finishedAt, clears the lease', async (state) => {
        const created = await enqueue();
        const claimed = await claimOne();
        clock.advance(2_000);
        const o = outcome(state, lease(claimed));
        expect(await setState(o)).toBe(true);
        const error = 'error' in o ? o.error : null;
        expect(await getJob(created.id)).toEqual({
          ...claimed,
          state,
          error,
          result: null,
          leaseToken: null,
          leaseExpiresAt: null,
          workerId: 'w1',
          updatedAt: new Date(T0 + 2_000),
          finishedAt: new Date(T0 + 2_000),
        });
        const events = await store.getJobEvents({ id: created.id });
        expect(events).toHaveLength(3);
        expect(events[2]).toEqual({
          jobId: created.id,
          fromState: 'running',
          toState: state,
          attempt: 1,
          workerId: 'w1',
          at: new Date(T0 + 2_000),
          error,
        });
        expect(await claim()).toEqual([]);
      });

      it('answers per outcome, in input order', async () => {
        for (let i = 0; i < 3; i++) await enqueue();
        const [c1, c2, c3] = await claim('q', 3);
        const applied = await store.setStatesIfRunning({
          outcomes: [
            outcome('completed', lease(c1!)),
            outcome('completed', { id: c2!.id, leaseToken: WRONG_TOKEN }),
            outcome('retrying', lease(c3!)),
            outcome('dead', { id: UNKNOWN_ID, leaseToken: c3!.leaseToken }),
          ],
        });
        expect(applied).toEqual([true, false, true, false]);
        expect((await getJob(c1!.id)).state).toBe('completed');
        expect((await getJob(c2!.id)).state).toBe('running');
        expect((await getJob(c3!.id)).state).toBe('retrying');
        expect(await store.setStatesIfRunning({ outcomes: [] })).toEqual([]);
      });

      it.each([
        ['completed', 'dead'],
        ['dead', 'completed'],
        ['retrying', 'skipped'],
      ] as const)('applies only the first of two outcomes for one job in a batch (%s, then %s)', async (first, second) => {
        const created = await enqueue();
        const claimed = await claimOne();
        const applied = await store.setStatesIfRunning({
          outcomes: [outcome(first, lease(claimed)), outcome(second, lease(claimed))],
        });
        expect(applied).toEqual([true, false]);
        expect((await getJob(created.id)).state).toBe(first);
        expect((await history(created.id)).map((s) => s.toState)).toEqual(['pending', 'running', first]);
      });
    });

    describe('fencing: a write applies only while the row is running under its lease', () => {
      async function expectRejected(kind: FencedWrite, of: Lease): Promise<void> {
        const row = await getJob(of.id);
        const steps = await history(of.id);
        clock.advance(1_000);
        expect(await write(kind, of)).toBe(false);
        expect(await getJob(of.id)).toEqual(row);
        expect(await history(of.id)).toEqual(steps);
      }

      it.each(FENCED_WRITES)('%s: rejected with a wrong token', async (kind) => {
        await enqueue();
        const claimed = await claimOne();
        await expectRejected(kind, { id: claimed.id, leaseToken: WRONG_TOKEN });
        expect(await write(kind, lease(claimed))).toBe(true);
      });

      it.each(FENCED_WRITES)('%s: rejected for a job that was never claimed', async (kind) => {
        const created = await enqueue();
        await expectRejected(kind, { id: created.id, leaseToken: WRONG_TOKEN });
      });

      it.each(FENCED_WRITES)('%s: rejected once the lease expired and the job was rescued', async (kind) => {
        await enqueue();
        const claimed = await claimOne();
        clock.advance(LEASE_MS + 1);
        expect(await store.rescueExpiredJobs()).toHaveLength(1);
        await expectRejected(kind, lease(claimed));
        expect((await getJob(claimed.id)).state).toBe('retrying');
      });

      it.each(FENCED_WRITES)('%s: rejected from a zombie whose job another worker claimed again', async (kind) => {
        await enqueue();
        const zombie = await claimOne('q', 'w1');
        clock.advance(LEASE_MS + 1);
        await store.rescueExpiredJobs();
        const current = await claimOne('q', 'w2');
        expect(current).toMatchObject({ id: zombie.id, attempt: 2, workerId: 'w2' });
        await expectRejected(kind, lease(zombie));
        expect(await write(kind, lease(current))).toBe(true);
      });

      it.each(FENCED_WRITES)('%s: rejected once the attempt has written its outcome', async (kind) => {
        await enqueue();
        const claimed = await claimOne();
        expect(await setState(outcome('completed', lease(claimed)))).toBe(true);
        await expectRejected(kind, lease(claimed));
      });
    });

    describe('rescueExpiredJobs', () => {
      it('leaves a lease that has not expired, also one expiring exactly now', async () => {
        await enqueue();
        const claimed = await claimOne();
        clock.advance(LEASE_MS);
        expect(await store.rescueExpiredJobs()).toEqual([]);
        expect((await getJob(claimed.id)).state).toBe('running');
        clock.advance(1);
        expect(ids(await store.rescueExpiredJobs())).toEqual([claimed.id]);
      });

      it('sends an expired job with attempts left to retrying, due now, naming the worker', async () => {
        const created = await enqueue({ maxAttempts: 2 });
        const claimed = await claimOne('q', 'worker-7');
        clock.advance(LEASE_MS + 1);
        const rescued = await store.rescueExpiredJobs();
        expect(rescued).toEqual([
          {
            ...claimed,
            state: 'retrying',
            runAt: now(),
            error: { code: 'lease_expired', message: expect.stringContaining('worker-7') },
            leaseToken: null,
            leaseExpiresAt: null,
            workerId: 'worker-7',
            updatedAt: now(),
            finishedAt: null,
          },
        ]);
        expect(await getJob(created.id)).toEqual(rescued[0]);
        expect(await history(created.id)).toEqual([
          step(null, 'pending', 0, null, T0),
          step('pending', 'running', 1, 'worker-7', T0),
          step('running', 'retrying', 1, 'worker-7', T0 + LEASE_MS + 1, 'lease_expired'),
        ]);
        expect(await claimOne('q', 'w2')).toMatchObject({ id: created.id, attempt: 2 });
      });

      it('sends an expired job whose attempts are spent to dead', async () => {
        const created = await enqueue({ maxAttempts: 2 });
        const first = await claimOne();
        expect(await setState(outcome('retrying', lease(first), now()))).toBe(true);
        await claimOne('q', 'w2');
        clock.advance(LEASE_MS + 1);
        const [rescued, ...rest] = await store.rescueExpiredJobs();
        expect(rest).toEqual([]);
        expect(rescued).toMatchObject({
          id: created.id,
          state: 'dead',
          attempt: 2,
          workerId: 'w2',
          leaseToken: null,
          leaseExpiresAt: null,
          runAt: new Date(T0),
          finishedAt: now(),
          error: { code: 'lease_expired' },
        });
        expect(rescued!.error!.message).toContain('w2');
        expect(await getJob(created.id)).toEqual(rescued);
        expect((await history(created.id)).at(-1)).toEqual(step('running', 'dead', 2, 'w2', now().getTime(), 'lease_expired'));
        expect(await claim()).toEqual([]);
      });

      it('does not rescue a renewed lease', async () => {
        await enqueue();
        const claimed = await claimOne();
        clock.advance(LEASE_MS - 1);
        expect(await write('renew', lease(claimed))).toBe(true);
        clock.advance(2);
        expect(await store.rescueExpiredJobs()).toEqual([]);
        clock.advance(LEASE_MS);
        expect(ids(await store.rescueExpiredJobs())).toEqual([claimed.id]);
      });

      it('rescues every expired job at once, and only running ones', async () => {
        await enqueue();
        await enqueue();
        await enqueue({ queue: 'later' });
        const pending = await enqueue({ queue: 'idle' });
        const done = await enqueue({ queue: 'done' });
        const early = await claim('q', 2);
        const finished = await claimOne('done');
        expect(await setState(outcome('completed', lease(finished)))).toBe(true);
        clock.advance(10_000);
        const late = await claimOne('later');
        clock.advance(LEASE_MS - 10_000 + 1);
        expect(sortedIds(await store.rescueExpiredJobs())).toEqual(sortedIds(early));
        expect(await store.rescueExpiredJobs()).toEqual([]);
        expect((await getJob(late.id)).state).toBe('running');
        expect((await getJob(pending.id)).state).toBe('pending');
        expect((await getJob(done.id)).state).toBe('completed');
      });
    });

    describe('cancelJob', () => {
      it('cancels a pending job', async () => {
        const created = await enqueue();
        clock.advance(1_000);
        const answer = await store.cancelJob({ id: created.id });
        expect(answer).toEqual({
          cancelled: true,
          job: {
            ...created,
            state: 'cancelled',
            error: { code: 'cancelled', message: expect.any(String) },
            updatedAt: now(),
            finishedAt: now(),
          },
        });
        expect(await getJob(created.id)).toEqual(answer!.job);
        expect(await history(created.id)).toEqual([
          step(null, 'pending', 0, null, T0),
          step('pending', 'cancelled', 0, null, T0 + 1_000, 'cancelled'),
        ]);
        expect(await claim()).toEqual([]);
      });

      it('cancels a retrying job', async () => {
        const created = await enqueue();
        const claimed = await claimOne();
        expect(await setState(outcome('retrying', lease(claimed)))).toBe(true);
        clock.advance(1_000);
        const answer = await store.cancelJob({ id: created.id });
        expect(answer?.cancelled).toBe(true);
        expect(answer?.job).toMatchObject({ state: 'cancelled', attempt: 1, finishedAt: now(), error: { code: 'cancelled' } });
        expect((await history(created.id)).at(-1)).toEqual(step('retrying', 'cancelled', 1, null, T0 + 1_000, 'cancelled'));
        clock.advance(60_000);
        expect(await claim()).toEqual([]);
      });

      it('leaves a running job to its worker, with the request on the row and no history row', async () => {
        await enqueue();
        const claimed = await claimOne();
        clock.advance(1_000);
        const requested = { ...claimed, cancelRequestedAt: now(), updatedAt: now() };
        expect(await store.cancelJob({ id: claimed.id })).toEqual({ cancelled: false, job: requested });
        expect(await getJob(claimed.id)).toEqual(requested);
        expect(await history(claimed.id)).toHaveLength(2);
        expect(await setState(outcome('completed', lease(claimed)))).toBe(true);
      });

      it.each(FINAL_OUTCOMES)('leaves a %s job alone', async (state) => {
        const job = await jobIn(state);
        const steps = await history(job.id);
        clock.advance(1_000);
        expect(await store.cancelJob({ id: job.id })).toEqual({ cancelled: false, job });
        expect(await getJob(job.id)).toEqual(job);
        expect(await history(job.id)).toEqual(steps);
      });

      it('answers null for an unknown id', async () => {
        expect(await store.cancelJob({ id: UNKNOWN_ID })).toBeNull();
      });
    });

    describe('retryJob', () => {
      it('sends a dead job back to pending, keeping its error, with one more attempt allowed', async () => {
        const created = await enqueue({ maxAttempts: 2 });
        const first = await claimOne();
        expect(await setState(outcome('retrying', lease(first), now()))).toBe(true);
        const second = await claimOne();
        const dead = outcome('dead', lease(second));
        expect(await setState(dead)).toBe(true);
        const deadRow = await getJob(created.id);
        clock.advance(60_000);
        const answer = await store.retryJob({ id: created.id });
        expect(answer).toEqual({
          retried: true,
          job: {
            ...deadRow,
            state: 'pending',
            attempt: 2,
            maxAttempts: 3,
            runAt: now(),
            error: 'error' in dead ? dead.error : null,
            finishedAt: null,
            leaseToken: null,
            leaseExpiresAt: null,
            updatedAt: now(),
          },
        });
        expect((await history(created.id)).slice(-2)).toEqual([
          step('running', 'dead', 2, 'w1', T0, 'permanent_error'),
          step('dead', 'pending', 2, null, T0 + 60_000),
        ]);
        expect(await claimOne()).toMatchObject({ id: created.id, attempt: 3, maxAttempts: 3 });
      });

      it('keeps maxAttempts when attempts are left (a cancelled job that never ran)', async () => {
        const created = await enqueue({ maxAttempts: 3 });
        await store.cancelJob({ id: created.id });
        clock.advance(1_000);
        const answer = await store.retryJob({ id: created.id });
        expect(answer?.retried).toBe(true);
        expect(answer?.job).toMatchObject({
          state: 'pending',
          attempt: 0,
          maxAttempts: 3,
          runAt: now(),
          finishedAt: null,
          error: { code: 'cancelled' },
        });
        expect(await history(created.id)).toEqual([
          step(null, 'pending', 0, null, T0),
          step('pending', 'cancelled', 0, null, T0, 'cancelled'),
          step('cancelled', 'pending', 0, null, T0 + 1_000),
        ]);
      });

      it('revives a skipped job', async () => {
        const job = await jobIn('skipped', { maxAttempts: 1 });
        const answer = await store.retryJob({ id: job.id });
        expect(answer?.retried).toBe(true);
        expect(answer?.job).toMatchObject({ state: 'pending', attempt: 1, maxAttempts: 2, error: { code: 'unknown_kind' } });
        expect((await history(job.id)).at(-1)).toEqual(step('skipped', 'pending', 1, null, T0));
      });

      it.each(['pending', 'running', 'retrying', 'completed'] as const)('leaves a %s job alone', async (state) => {
        const job = await jobIn(state);
        const steps = await history(job.id);
        clock.advance(1_000);
        expect(await store.retryJob({ id: job.id })).toEqual({ retried: false, job });
        expect(await getJob(job.id)).toEqual(job);
        expect(await history(job.id)).toEqual(steps);
      });

      it('answers null for an unknown id', async () => {
        expect(await store.retryJob({ id: UNKNOWN_ID })).toBeNull();
      });
    });

    describe('history of whole paths', () => {
      it('fails twice, then dies on its last attempt', async () => {
        const created = await enqueue({ maxAttempts: 3 });
        const c1 = await claimOne('q', 'w1');
        clock.advance(1_000);
        expect(await setState({ ...lease(c1), state: 'retrying', error: BOOM, runAt: new Date(T0 + 3_000) })).toBe(true);
        clock.advance(2_000);
        const c2 = await claimOne('q', 'w2');
        clock.advance(1_000);
        expect(await setState({ ...lease(c2), state: 'retrying', error: BOOM, runAt: now() })).toBe(true);
        const c3 = await claimOne('q', 'w1');
        clock.advance(1_000);
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
        clock.advance(LEASE_MS + 1);
        await store.rescueExpiredJobs();
        const c2 = await claimOne('q', 'w2');
        clock.advance(1_000);
        expect(await setState(outcome('completed', lease(c2)))).toBe(true);
        const t = T0 + LEASE_MS + 1;
        expect(await history(created.id)).toEqual([
          step(null, 'pending', 0, null, T0),
          step('pending', 'running', 1, 'w1', T0),
          step('running', 'retrying', 1, 'w1', t, 'lease_expired'),
          step('retrying', 'running', 2, 'w2', t),
          step('running', 'completed', 2, 'w2', t + 1_000),
        ]);
        expect(await store.pruneJobs({ completedBefore: new Date(t + 1_001) })).toBe(1);
        expect(await store.getJobEvents({ id: created.id })).toEqual([]);
      });

      it('dies, is retried by hand and completes', async () => {
        const created = await enqueue({ maxAttempts: 1 });
        const c1 = await claimOne();
        expect(await setState(outcome('dead', lease(c1)))).toBe(true);
        clock.advance(1_000);
        await store.retryJob({ id: created.id });
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

    describe('listJobs', () => {
      it('lists newest first, 50 by default', async () => {
        await store.enqueueJobs({
          jobs: Array.from({ length: 55 }, (_, i) => ({ queue: 'q', kind: 'k', payload: i, maxAttempts: 1 })),
        });
        const page = await store.listJobs({});
        expect(page).toHaveLength(50);
        expect(page.map((job) => job.payload)).toEqual(Array.from({ length: 50 }, (_, i) => 54 - i));
      });

      it('pages with beforeId', async () => {
        const made: string[] = [];
        for (let i = 0; i < 7; i++) made.push((await enqueue()).id);
        const newestFirst = [...made].reverse();
        const p1 = await store.listJobs({ limit: 3 });
        expect(ids(p1)).toEqual(newestFirst.slice(0, 3));
        const p2 = await store.listJobs({ limit: 3, beforeId: p1.at(-1)!.id });
        expect(ids(p2)).toEqual(newestFirst.slice(3, 6));
        const p3 = await store.listJobs({ limit: 3, beforeId: p2.at(-1)!.id });
        expect(ids(p3)).toEqual(newestFirst.slice(6));
        expect(await store.listJobs({ limit: 3, beforeId: p3.at(-1)!.id })).toEqual([]);
        expect(p1[0]).toEqual(await getJob(p1[0]!.id));
      });

      it('filters by queue, state and kind, alone or together', async () => {
        const a1 = await enqueue({ queue: 'a', kind: 'x' });
        const a2 = await enqueue({ queue: 'a', kind: 'y' });
        const b1 = await enqueue({ queue: 'b', kind: 'x' });
        const a3 = await enqueue({ queue: 'a', kind: 'x' });
        const running = await claimOne('b');
        expect(running.id).toBe(b1.id);
        await store.cancelJob({ id: a1.id });

        expect(ids(await store.listJobs({ queue: 'a' }))).toEqual([a3.id, a2.id, a1.id]);
        expect(ids(await store.listJobs({ kind: 'x' }))).toEqual([a3.id, b1.id, a1.id]);
        expect(ids(await store.listJobs({ state: 'pending' }))).toEqual([a3.id, a2.id]);
        expect(ids(await store.listJobs({ state: 'running' }))).toEqual([b1.id]);
        expect(ids(await store.listJobs({ queue: 'a', kind: 'x', state: 'pending' }))).toEqual([a3.id]);
        expect(ids(await store.listJobs({ queue: 'a', kind: 'x', limit: 1, beforeId: a3.id }))).toEqual([a1.id]);
        expect(await store.listJobs({ queue: 'nope' })).toEqual([]);
      });
    });

    describe('countJobs', () => {
      it('counts by queue and state, leaving out zero counts', async () => {
        expect(await store.countJobs()).toEqual([]);
        await jobIn('running', { queue: 'a' });
        await jobIn('completed', { queue: 'a' });
        await jobIn('pending', { queue: 'a' });
        await jobIn('pending', { queue: 'a' });
        await jobIn('dead', { queue: 'b' });
        const counts = await store.countJobs();
        const sorted = [...counts].sort((x, y) => `${x.queue}/${x.state}`.localeCompare(`${y.queue}/${y.state}`));
        expect(sorted).toEqual([
          { queue: 'a', state: 'completed', count: 1 },
          { queue: 'a', state: 'pending', count: 2 },
          { queue: 'a', state: 'running', count: 1 },
          { queue: 'b', state: 'dead', count: 1 },
        ]);
      });
    });

    describe('pruneJobs', () => {
      it('deletes finished jobs older than each cutoff, with their history, and nothing live', async () => {
        const completed = await jobIn('completed', { queue: 'p1' });
        const skipped = await jobIn('skipped', { queue: 'p2' });
        const dead = await jobIn('dead', { queue: 'p3' });
        const cancelled = await enqueue({ queue: 'p4' });
        await store.cancelJob({ id: cancelled.id });
        const live = [
          await jobIn('pending', { queue: 'p5' }),
          await jobIn('running', { queue: 'p6' }),
          await jobIn('retrying', { queue: 'p7' }),
        ];
        clock.advance(10_000);
        const laterCompleted = await jobIn('completed', { queue: 'p8' });
        const laterDead = await jobIn('dead', { queue: 'p9' });
        const cutoff = new Date(T0 + 10_000);

        expect(await store.pruneJobs({})).toBe(0);
        expect(await store.pruneJobs({ completedBefore: cutoff })).toBe(2);
        for (const job of [completed, skipped]) {
          expect(await store.getJob({ id: job.id })).toBeNull();
          expect(await store.getJobEvents({ id: job.id })).toEqual([]);
        }
        expect((await getJob(dead.id)).state).toBe('dead');
        expect((await getJob(laterCompleted.id)).state).toBe('completed');

        expect(await store.pruneJobs({ deadBefore: cutoff })).toBe(2);
        for (const job of [dead, cancelled]) {
          expect(await store.getJob({ id: job.id })).toBeNull();
          expect(await store.getJobEvents({ id: job.id })).toEqual([]);
        }

        const far = new Date(T0 + 1_000_000_000);
        expect(await store.pruneJobs({ completedBefore: far, deadBefore: far })).toBe(2);
        expect(sortedIds(await store.listJobs({}))).toEqual(sortedIds(live));
        for (const job of live) expect(await history(job.id)).not.toEqual([]);
        expect(await store.getJob({ id: laterDead.id })).toBeNull();
      });
    });

    describe('listJobEvents', () => {
      it('lists every job\'s history by event id, oldest first, after a given id', async () => {
        const a = await enqueue({ queue: 'a' });
        clock.advance(1_000);
        const b = await enqueue({ queue: 'b' });
        const claimed = await claimOne('a');
        clock.advance(1_000);
        expect(await setState(outcome('completed', lease(claimed)))).toBe(true);

        const all = await store.listJobEvents({ afterId: '0' });
        expect(all.map((e) => [e.jobId, e.fromState, e.toState, e.attempt, e.workerId, e.at.getTime()])).toEqual([
          [a.id, null, 'pending', 0, null, T0],
          [b.id, null, 'pending', 0, null, T0 + 1_000],
          [a.id, 'pending', 'running', 1, 'w1', T0 + 1_000],
          [a.id, 'running', 'completed', 1, 'w1', T0 + 2_000],
        ]);
        const eventIds = all.map((e) => BigInt(e.id));
        expect(eventIds).toEqual([...eventIds].sort((x, y) => (x < y ? -1 : 1)));
        expect(new Set(eventIds).size).toBe(4);

        expect(await store.listJobEvents({ afterId: all[1]!.id })).toEqual(all.slice(2));
        expect(await store.listJobEvents({ afterId: all[0]!.id, limit: 1 })).toEqual([all[1]]);
        expect(await store.listJobEvents({ afterId: all[3]!.id })).toEqual([]);
      });

      it('without afterId, gives the newest events, oldest first', async () => {
        expect(await store.listJobEvents({})).toEqual([]);
        await jobIn('completed');
        const all = await store.listJobEvents({ afterId: '0' });
        expect(await store.listJobEvents({ limit: 2 })).toEqual(all.slice(-2));
        expect(await store.listJobEvents({})).toEqual(all);
      });

      it('carries the error of a failed attempt', async () => {
        await jobIn('retrying');
        const events = await store.listJobEvents({ limit: 1 });
        expect(events[0]).toMatchObject({ fromState: 'running', toState: 'retrying', error: { code: 'handler_error' } });
      });
    });

    describe('scanJobs', () => {
      /** Every page from the newest on, until the store says there is no next one. */
      async function allPages(params: ScanJobsParams): Promise<{ pages: JobRecord[][]; jobs: JobRecord[] }> {
        const pages: JobRecord[][] = [];
        let beforeId: string | undefined;
        for (let i = 0; i < 100; i++) {
          const page = await store.scanJobs({ ...params, ...(beforeId === undefined ? {} : { beforeId }) });
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
        const everyJob = await store.listJobs({ limit: 1_000 });
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
        expect((await store.scanJobs({ state: 'running' })).jobs[0]).toEqual(await getJob(newestRunning.id));
      });

      it('answers every match in one page when they fit, with no next page', async () => {
        for (let i = 0; i < 5; i++) await enqueue();
        const page = await store.scanJobs({ queue: 'q' });
        expect(page.jobs).toHaveLength(5);
        expect(page.nextBeforeId).toBeNull();
        expect(await store.scanJobs({ beforeId: page.jobs[4]!.id })).toEqual({ jobs: [], nextBeforeId: null });
      });

      it('stops after maxScan jobs with a short page, and goes on from where it stopped', async () => {
        const old = await enqueue({ queue: 'rare' });
        for (let i = 0; i < 4; i++) await enqueue({ queue: 'common' });
        const first = await store.scanJobs({ queue: 'rare', maxScan: 2 });
        expect(first.jobs).toEqual([]);
        expect(first.nextBeforeId).not.toBeNull();
        const second = await store.scanJobs({ queue: 'rare', beforeId: first.nextBeforeId!, maxScan: 10 });
        expect(ids(second.jobs)).toEqual([old.id]);
      });

      it('finds jobs by unique key, live or finished, in every queue', async () => {
        const finished = await jobIn('completed', { queue: 'a', uniqueKey: 'order-7' });
        const live = await enqueue({ queue: 'a', uniqueKey: 'order-7' });
        const other = await enqueue({ queue: 'b', uniqueKey: 'order-7' });
        await enqueue({ queue: 'a', uniqueKey: 'order-8' });
        expect(ids((await store.scanJobs({ uniqueKey: 'order-7' })).jobs)).toEqual([other.id, live.id, finished.id]);
        expect(ids((await store.scanJobs({ uniqueKey: 'order-7', queue: 'a' })).jobs)).toEqual([live.id, finished.id]);
        expect((await store.scanJobs({ uniqueKey: 'order-9' })).jobs).toEqual([]);
      });
    });

    describe('getQueueBacklogs', () => {
      const zero = { pending: 0, retrying: 0, running: 0, dead: 0, skipped: 0, cancelled: 0 };

      it('counts every state but completed per queue, and leaves out queues with none', async () => {
        expect(await store.getQueueBacklogs({})).toEqual([]);
        await jobIn('running', { queue: 'a' });
        await jobIn('completed', { queue: 'a' });
        await jobIn('dead', { queue: 'a' });
        await jobIn('pending', { queue: 'a' });
        await jobIn('pending', { queue: 'a' });
        await jobIn('retrying', { queue: 'b' });
        await jobIn('skipped', { queue: 'b' });
        const cancelled = await enqueue({ queue: 'b' });
        await store.cancelJob({ id: cancelled.id });
        await jobIn('completed', { queue: 'c' });
        const retryAt = (await store.getQueueBacklogs({})).find((q) => q.queue === 'b')?.oldestRunAt;
        expect(await store.getQueueBacklogs({})).toEqual([
          { queue: 'a', counts: { ...zero, pending: 2, running: 1, dead: 1 }, oldestRunAt: now() },
          { queue: 'b', counts: { ...zero, retrying: 1, skipped: 1, cancelled: 1 }, oldestRunAt: retryAt },
        ]);
        expect(retryAt?.getTime()).toBe(T0 + 5_000);
      });

      it('stops each count at maxCount', async () => {
        for (let i = 0; i < 2; i++) await jobIn('dead', { queue: 'a' });
        for (let i = 0; i < 5; i++) await enqueue({ queue: 'a' });
        const [backlog] = await store.getQueueBacklogs({ maxCount: 3 });
        expect(backlog?.counts).toEqual({ ...zero, pending: 3, dead: 2 });
      });

      it('gives the earliest runAt of the pending and retrying jobs, due or not, across priorities', async () => {
        await enqueue({ queue: 'a', priority: 5, runAt: new Date(T0 + 10_000) });
        await enqueue({ queue: 'a', priority: -1, runAt: new Date(T0 - 7_000) });
        await enqueue({ queue: 'a', priority: 0, runAt: new Date(T0 - 3_000) });
        await enqueue({ queue: 'later', runAt: new Date(T0 + 60_000) });
        expect((await store.getQueueBacklogs({})).map((q) => [q.queue, q.oldestRunAt?.getTime()])).toEqual([
          ['a', T0 - 7_000],
          ['later', T0 + 60_000],
        ]);
      });
    });

    describe('countJobTransitions', () => {
      it('counts transitions since a time per queue, state entered and bucket', async () => {
        await enqueue({ queue: 'a' });
        clock.advance(60_000);
        const since = now();
        await enqueue({ queue: 'a' });
        await enqueue({ queue: 'b' });
        const first = await claimOne('a');
        clock.advance(59_999);
        await setState(outcome('completed', lease(first)));
        clock.advance(1);
        const second = await claimOne('a');
        await setState(outcome('dead', lease(second)));
        expect(await store.countJobTransitions({ since, bucketMs: 60_000 })).toEqual([
          { queue: 'a', toState: 'completed', bucket: 0, count: 1 },
          { queue: 'a', toState: 'dead', bucket: 1, count: 1 },
          { queue: 'a', toState: 'pending', bucket: 0, count: 1 },
          { queue: 'a', toState: 'running', bucket: 0, count: 1 },
          { queue: 'a', toState: 'running', bucket: 1, count: 1 },
          { queue: 'b', toState: 'pending', bucket: 0, count: 1 },
        ]);
        expect(await store.countJobTransitions({ since: now(), bucketMs: 1_000 })).toHaveLength(2);
        expect(await store.countJobTransitions({ since: new Date(T0 + 1_000_000), bucketMs: 1_000 })).toEqual([]);
      });

      it('reads at most maxEvents history rows', async () => {
        for (let i = 0; i < 5; i++) await enqueue();
        const counts = await store.countJobTransitions({ since: new Date(T0), bucketMs: 1_000, maxEvents: 3 });
        expect(counts.reduce((sum, c) => sum + c.count, 0)).toBe(3);
      });
    });

    describe('deleteJob', () => {
      it('deletes a job no worker holds, with its history, and frees its unique key', async () => {
        const pending = await enqueue({ uniqueKey: 'u1' });
        const dead = await jobIn('dead', { queue: 'other' });
        const kept = await enqueue();
        for (const job of [pending, dead]) {
          const answer = await store.deleteJob({ id: job.id });
          expect(answer).toMatchObject({ deleted: true, job: { id: job.id, state: job.state } });
          expect(await store.getJob({ id: job.id })).toBeNull();
          expect(await store.getJobEvents({ id: job.id })).toEqual([]);
        }
        const remaining = await store.listJobEvents({ afterId: '0' });
        expect(remaining.map((e) => e.jobId)).toEqual([kept.id]);
        expect((await enqueueOne({ uniqueKey: 'u1' })).created).toBe(true);
        expect(await store.deleteJob({ id: pending.id })).toBeNull();
      });

      it('leaves a running job to its worker, whose writes still apply', async () => {
        await enqueue();
        const claimed = await claimOne();
        const answer = await store.deleteJob({ id: claimed.id });
        expect(answer).toMatchObject({ deleted: false, job: { id: claimed.id, state: 'running' } });
        expect(await setState(outcome('completed', lease(claimed)))).toBe(true);
      });

      it('answers null for an unknown id', async () => {
        expect(await store.deleteJob({ id: UNKNOWN_ID })).toBeNull();
      });
    });

    describeLimitsConformance(() => ({ store, clock }));
    describeControlConformance(() => ({ store, clock }));
    describeAlertConformance(() => ({ store, clock }));
    describeReleaseConformance(() => ({ store, clock }));

    describe('subscribe', () => {
      /** Enqueues into a queue no test uses and waits for its wake-up: notifications arrive in
       *  order, so anything an earlier call was going to deliver has arrived by then. */
      async function barrier(woken: string[]): Promise<void> {
        const seen = woken.filter((q) => q === 'barrier').length;
        await store.enqueueJobs({ jobs: [{ queue: 'barrier', kind: 'k', payload: {}, maxAttempts: 1 }] });
        await vi.waitFor(() => expect(woken.filter((q) => q === 'barrier').length).toBe(seen + 1), {
          timeout: 5_000,
          interval: 5,
        });
      }

      it('wakes subscribers once per queue for each enqueue that creates jobs', async (ctx) => {
        if (!store.capabilities.notifications) ctx.skip();
        const woken: string[] = [];
        const unsubscribe = await store.subscribe((queue) => woken.push(queue ?? '(any queue)'));
        await store.enqueueJobs({
          jobs: [
            { queue: 'a', kind: 'k', payload: 1, maxAttempts: 1 },
            { queue: 'a', kind: 'k', payload: 2, maxAttempts: 1 },
            { queue: 'b', kind: 'k', payload: 3, maxAttempts: 1 },
          ],
        });
        await barrier(woken);
        expect(woken.filter((q) => q === 'a')).toEqual(['a']);
        expect(woken.filter((q) => q === 'b')).toEqual(['b']);
        await unsubscribe();
      });

      it('does not wake for a duplicate that created nothing', async (ctx) => {
        if (!store.capabilities.notifications) ctx.skip();
        await enqueue({ queue: 'a', uniqueKey: 'k1' });
        const woken: string[] = [];
        const unsubscribe = await store.subscribe((queue) => woken.push(queue ?? '(any queue)'));
        expect((await enqueueOne({ queue: 'a', uniqueKey: 'k1' })).created).toBe(false);
        await barrier(woken);
        expect(woken).not.toContain('a');
        await unsubscribe();
      });

      it('wakes when retryJob sends a job back', async (ctx) => {
        if (!store.capabilities.notifications) ctx.skip();
        const job = await enqueue({ queue: 'a' });
        await store.cancelJob({ id: job.id });
        const woken: string[] = [];
        const unsubscribe = await store.subscribe((queue) => woken.push(queue ?? '(any queue)'));
        expect((await store.retryJob({ id: job.id }))?.retried).toBe(true);
        await vi.waitFor(() => expect(woken).toEqual(['a']), { timeout: 5_000, interval: 5 });
        await unsubscribe();
      });

      it('stops waking a subscriber once it unsubscribed', async (ctx) => {
        if (!store.capabilities.notifications) ctx.skip();
        const gone: string[] = [];
        const kept: string[] = [];
        const unsubscribe = await store.subscribe((queue) => gone.push(queue ?? '(any queue)'));
        const unsubscribeKept = await store.subscribe((queue) => kept.push(queue ?? '(any queue)'));
        await enqueue({ queue: 'a' });
        await barrier(kept);
        await vi.waitFor(() => expect(gone).toContain('barrier'), { timeout: 5_000, interval: 5 });
        await unsubscribe();
        await enqueue({ queue: 'b' });
        await vi.waitFor(() => expect(kept).toContain('b'), { timeout: 5_000, interval: 5 });
        await barrier(kept);
        expect(gone).toEqual(['a', 'barrier']);
        await unsubscribeKept();
      });
    });
  });
}
