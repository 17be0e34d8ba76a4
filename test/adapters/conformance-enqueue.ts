/**
 * Conformance for putting jobs in: enqueue (defaults, batches, input order), enqueue inside the
 * caller's transaction, and unique keys.
 * Part of describeStoreConformance (conformance.ts), which calls it inside its own describe
 * with a getter for the test's store and clock.
 */
import { describe, expect, it } from 'vitest';
import type { EnqueueJob, EnqueueResult, SqlClient } from '../../src/adapters/store.js';
import { conformanceKit, type CurrentStore, FINAL_OUTCOMES, ids, lease, LEASE_MS, step, type StoreConformanceFactory, T0, UNKNOWN_ID } from './conformance.js';

export function describeEnqueueConformance(current: CurrentStore, factory: StoreConformanceFactory): void {
  const { store, clock, enqueue, enqueueOne, claimOne, getJob, history, outcome, setState, jobIn } = conformanceKit(current);

  it('reports its capabilities', () => {
    expect(store().capabilities).toEqual(factory.capabilities);
  });

  describe('enqueueJobs', () => {
    it('inserts a pending job with defaults and records its creation', async () => {
      const payload = { placeId: 'p1', nested: { list: [1, 'two', null, true], n: 1.5 } };
      const [result] = await store().enqueueJobs({ jobs: [{ queue: 'q', kind: 'k', payload, maxAttempts: 3 }] });
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
          steps: [],
          waitingForSignal: null,
          tenant: null,
          debounceKey: null,
        },
      });
      const id = result!.job.id;
      expect(await store().getJob({ id })).toEqual(result!.job);
      expect(await history(id)).toEqual([step(null, 'pending', 0, null, T0)]);
    });

    it('keeps priority, runAt, uniqueKey and any JSON payload; answers in input order with increasing ids', async () => {
      clock().advance(1_000);
      const jobs: EnqueueJob[] = [
        { queue: 'q', kind: 'a', payload: 'text', maxAttempts: 1, priority: 5 },
        { queue: 'q', kind: 'b', payload: 42, maxAttempts: 2, priority: -3, runAt: new Date(T0 + 60_000) },
        { queue: 'r', kind: 'c', payload: null, maxAttempts: 3, uniqueKey: 'u1' },
        { queue: 'r', kind: 'd', payload: [{ a: 1 }, []], maxAttempts: 4, runAt: new Date(T0 - 5_000), uniqueKey: null },
      ];
      const results = await store().enqueueJobs({ jobs });
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
      for (const r of results) expect(await store().getJob({ id: r.job.id })).toEqual(r.job);
    });

    it('accepts an empty batch', async () => {
      expect(await store().enqueueJobs({ jobs: [] })).toEqual([]);
      expect(await store().listJobs({})).toEqual([]);
    });

    it('answers null and no history for an unknown id', async () => {
      await enqueue();
      expect(await store().getJob({ id: UNKNOWN_ID })).toBeNull();
      expect(await store().getJobEvents({ id: UNKNOWN_ID })).toEqual([]);
    });

    it("gives JSON back with each object's keys in jsonb's order: shorter first, then by their UTF-8 bytes", async () => {
      // As written, each object's keys are out of that order (é is two bytes: after "zz").
      const written = { b: 1, é: 2, aa: { zz: 1, a: [{ ab: 1, b: 2 }] }, a: null };
      const stored = '{"a":null,"b":1,"aa":{"a":[{"b":2,"ab":1}],"zz":1},"é":2}';
      const traceContext = { tracestate: 'x', traceparent: 'y' };
      const [result] = await store().enqueueJobs({ jobs: [{ queue: 'q', kind: 'k', payload: written, traceContext, maxAttempts: 3 }] });
      const id = result!.job.id;
      expect(JSON.stringify(result!.job.payload)).toBe(stored);
      expect(JSON.stringify((await getJob(id)).payload)).toBe(stored);
      expect(JSON.stringify((await getJob(id)).traceContext)).toBe('{"tracestate":"x","traceparent":"y"}');
      const claimed = await claimOne();
      expect(JSON.stringify(claimed.payload)).toBe(stored);
      expect(await setState({ ...lease(claimed), state: 'completed', result: written })).toBe(true);
      expect(JSON.stringify((await getJob(id)).result)).toBe(stored);
    });

    it('stores {} for a job given no payload (undefined); JSON null stays null', async () => {
      const results = await store().enqueueJobs({
        jobs: [
          { queue: 'q', kind: 'k', payload: undefined, maxAttempts: 1 },
          { queue: 'q', kind: 'k', payload: null, maxAttempts: 1 },
        ],
      });
      expect(results.map((r) => r.job.payload)).toEqual([{}, null]);
      expect((await store().getJob({ id: results[0]!.job.id }))!.payload).toEqual({});
    });

    it('resolves runIn and expiresIn from its own clock', async () => {
      clock().advance(5_000);
      const [relative, mixed] = await store().enqueueJobs({
        jobs: [
          { queue: 'q', kind: 'k', payload: {}, maxAttempts: 1, runIn: 60_000, expiresIn: 900_000 },
          { queue: 'q', kind: 'k', payload: {}, maxAttempts: 1, runAt: new Date(T0 - 1_000), expiresIn: 1 },
        ],
      });
      expect(relative!.job).toMatchObject({ runAt: new Date(T0 + 65_000), expiresAt: new Date(T0 + 905_000), createdAt: new Date(T0 + 5_000) });
      expect(mixed!.job).toMatchObject({ runAt: new Date(T0 - 1_000), expiresAt: new Date(T0 + 5_001) });
      expect(await store().getJob({ id: relative!.job.id })).toEqual(relative!.job);
      // Not due before its runIn has passed by the store's clock.
      expect(await store().claimJobs({ workerId: 'w', leaseMs: LEASE_MS, queues: [{ queue: 'q', limit: 5 }] })).toMatchObject([{ id: mixed!.job.id }]);
    });

    it.each([
      // A caller whose clock is 1 h behind the store's asks for "15 minutes from now".
      ['an expiresAt before now, with runAt the default', {}, { expiresAt: new Date(T0 - 45 * 60_000) }, `expiresAt: must be after runAt (2030-01-01T00:00:00.000Z), got 2029-12-31T23:15:00.000Z`],
      ['an expiresAt at runAt', {}, { expiresAt: new Date(T0) }, `expiresAt: must be after runAt (2030-01-01T00:00:00.000Z), got 2030-01-01T00:00:00.000Z`],
      ['an expiresAt before a runIn', { runIn: 60_000 }, { expiresAt: new Date(T0 + 30_000) }, `expiresAt: must be after runAt (2030-01-01T00:01:00.000Z), got 2030-01-01T00:00:30.000Z`],
      ['an expiresIn not after runAt', { runAt: new Date(T0 + 10_000) }, { expiresIn: 10_000 }, `expiresIn: gives expiresAt 2030-01-01T00:00:10.000Z, not after runAt (2030-01-01T00:00:10.000Z)`],
    ])('refuses %s, by its own clock, and writes nothing of the batch', async (_, run, expiry, message) => {
      const good = { queue: 'q', kind: 'k', payload: {}, maxAttempts: 1 };
      await expect(store().enqueueJobs({ jobs: [good, { ...good, ...run, ...expiry }, good] })).rejects.toMatchObject({
        code: 'invalid_option',
        option: Object.keys(expiry)[0],
        message,
      });
      expect(await store().listJobs({})).toEqual([]);
      expect(await store().countJobs()).toEqual([]);
    });

    it('refuses a runIn or expiresIn that its clock would put past the year 9999', async () => {
      clock().advance(Date.parse('9999-12-31T00:00:00.000Z') - T0);
      const job = { queue: 'q', kind: 'k', payload: {}, maxAttempts: 1 };
      await expect(store().enqueueJobs({ jobs: [{ ...job, runIn: 86_400_000 }] })).rejects.toMatchObject({
        option: 'runIn',
        message: 'runIn: gives runAt 10000-01-01T00:00:00.000Z, outside the years 1 to 9999',
      });
      await expect(store().enqueueJobs({ jobs: [{ ...job, expiresIn: 86_400_000 }] })).rejects.toMatchObject({
        option: 'expiresIn',
        message: 'expiresIn: gives expiresAt 10000-01-01T00:00:00.000Z, outside the years 1 to 9999',
      });
      expect(await store().countJobs()).toEqual([]);
      // The last millisecond of the year 9999 is a time a job can have.
      const [last] = await store().enqueueJobs({ jobs: [{ ...job, runIn: 86_400_000 - 1 }] });
      expect(last!.job.runAt.toISOString()).toBe('9999-12-31T23:59:59.999Z');
    });

    // A store either joins the caller's transaction (a factory with inTransaction tests that
    // below) or refuses a client: each store runs the tests of what it is, none is skipped.
    if (!factory.inTransaction) it('rejects a SQL client when it cannot join a transaction', async () => {
      expect(store().capabilities.transactionalEnqueue).toBe(false);
      const client: SqlClient = { query: async () => ({ rows: [] }) };
      await expect(
        store().enqueueJobs({ jobs: [{ queue: 'q', kind: 'k', payload: {}, maxAttempts: 1 }], client }),
      ).rejects.toMatchObject({ code: 'invalid_option', option: 'client' });
      expect(await store().listJobs({})).toEqual([]);
    });
  });

  if (factory.inTransaction) describe('enqueueJobs inside the caller\'s transaction', () => {
    it('a committed enqueue is visible, with its history', async () => {
      expect(store().capabilities.transactionalEnqueue).toBe(true);
      let created: EnqueueResult[] = [];
      await factory.inTransaction!('commit', async (client) => {
        created = await store().enqueueJobs({ jobs: [{ queue: 'q', kind: 'k', payload: { t: 1 }, maxAttempts: 1 }], client });
      });
      expect(created).toHaveLength(1);
      const id = created[0]!.job.id;
      expect(await getJob(id)).toEqual(created[0]!.job);
      expect(await history(id)).toEqual([step(null, 'pending', 0, null, T0)]);
    });

    it('a rolled back enqueue leaves neither job nor history', async () => {
      let id = '';
      await factory.inTransaction!('rollback', async (client) => {
        const [result] = await store().enqueueJobs({ jobs: [{ queue: 'q', kind: 'k', payload: {}, maxAttempts: 1 }], client });
        id = result!.job.id;
      });
      expect(await store().getJob({ id })).toBeNull();
      expect(await store().getJobEvents({ id })).toEqual([]);
      expect(await store().listJobs({})).toEqual([]);
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

      expect(ids(await store().listJobs({}))).toEqual([first.id]);
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
      await store().cancelJob({ id: cancelled.id });
      expect((await enqueueOne({ uniqueKey: 'c' })).created).toBe(true);

      await enqueue({ queue: 'r', uniqueKey: 'd', maxAttempts: 1 });
      await claimOne('r');
      clock().advance(LEASE_MS + 1);
      expect((await store().rescueExpiredJobs()).map((j) => j.state)).toEqual(['dead']);
      expect((await enqueueOne({ queue: 'r', uniqueKey: 'd' })).created).toBe(true);
    });

    it('dedupes within one batch', async () => {
      const results = await store().enqueueJobs({
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
      expect(await store().listJobs({})).toHaveLength(3);
      expect(await history(results[0]!.job.id)).toEqual([step(null, 'pending', 0, null, T0)]);
    });

    it('retryJob will not revive a job whose key a newer live job holds', async () => {
      const old = await jobIn('dead', { uniqueKey: 'k1' });
      const newer = await enqueue({ uniqueKey: 'k1' });
      const before = await history(old.id);
      expect(await store().retryJob({ id: old.id })).toEqual({ retried: false, job: old });
      expect(await getJob(old.id)).toEqual(old);
      expect(await history(old.id)).toEqual(before);

      // Once the newer one is final, the old one can come back.
      await store().cancelJob({ id: newer.id });
      const retried = await store().retryJob({ id: old.id });
      expect(retried?.retried).toBe(true);
      expect((await enqueueOne({ uniqueKey: 'k1' })).job.id).toBe(old.id);
    });
  });
}
