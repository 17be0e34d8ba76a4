import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EnqueueJob, JobStore } from '../../../../src/adapters/store.js';
import { describeEachStore } from '../../../support/test-stores.js';

/**
 * A bulk enqueue without unique keys answers what the database decided and builds the rest
 * of each record from its input (enqueue-new-jobs.ts): the records must be the ones getJob
 * reads back, field for field and in the same order, times to the millisecond, with the
 * database's own clock (microseconds) as well as a store clock.
 */
describeEachStore('a bulk enqueue answers the records getJob reads back', (testStore) => {
  let store: JobStore;
  beforeAll(async () => {
    // No clock: the SQL stores take the database's now().
    store = await testStore.create(undefined as never);
  });
  afterAll(async () => {
    await store.close();
    await testStore.reset();
  });

  it('every option a plain enqueue takes, payloads of every JSON kind, times before 1970', async () => {
    const base = { queue: 'enq-new', kind: 'k', maxAttempts: 3 };
    const jobs: EnqueueJob[] = [
      { ...base, payload: { zebra: 1, a: { long_key: [1, 2.5, 'x'], b: null }, '': true } },
      { ...base, payload: null, priority: 7, runAt: new Date(Date.UTC(2031, 0, 2, 3, 4, 5, 678)), maxAttempts: 1 },
      { ...base, payload: undefined, runIn: 1_234, expiresIn: 60_001, concurrencyKey: 'tenant-1' },
      { ...base, payload: 'text', priority: -3, traceContext: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } },
      { ...base, payload: [], runAt: new Date(Date.UTC(1969, 11, 31, 23, 59, 59, 999)), expiresAt: new Date(Date.UTC(1970, 0, 1, 0, 0, 0, 1)) },
      { ...base, payload: 12.75, expiresAt: new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999)) },
    ];
    const results = await store.enqueueJobs({ jobs });
    expect(results).toHaveLength(jobs.length);
    for (const [i, result] of results.entries()) {
      expect(result.created).toBe(true);
      const read = await store.getJob({ id: result.job.id });
      expect(result.job, `job ${i}`).toEqual(read);
      expect(JSON.stringify(result.job), `job ${i}`).toBe(JSON.stringify(read));
    }
    expect(results[0]!.job.createdAt.getTime()).toBe(results[0]!.job.updatedAt.getTime());
    expect(results[2]!.job.runAt.getTime() - results[2]!.job.createdAt.getTime()).toBe(1_234);
    expect(results[2]!.job.expiresAt!.getTime() - results[2]!.job.createdAt.getTime()).toBe(60_001);
  });

  it('strings an array literal would quote, and options one job gives and the rest do not', async () => {
    // The jobs travel as one JSON array a column, each value read back from it on its own:
    // quotes, backslashes, braces, commas, the word NULL and blanks must come back as given,
    // and a column only some jobs give must be null for the others.
    const awkward = ['a"b', 'back\\slash\\', '{x,y}', 'NULL', 'null', '', ' padded ', 'comma,', 'zwölf 🎉', "it's"];
    const jobs: EnqueueJob[] = awkward.map((s, i) => ({
      queue: 'enq-awkward',
      kind: 'k',
      maxAttempts: 2,
      payload: { s, nested: [s, { [s]: s }] },
      ...(i % 3 === 0 ? { concurrencyKey: s } : {}),
      ...(i === 4 ? { traceContext: { traceparent: s } } : {}),
    }));
    const results = await store.enqueueJobs({ jobs });
    for (const [i, result] of results.entries()) {
      const read = await store.getJob({ id: result.job.id });
      expect(read!.payload, `job ${i}`).toEqual(jobs[i]!.payload);
      expect(read!.concurrencyKey, `job ${i}`).toBe(i % 3 === 0 ? awkward[i] : null);
      expect(read!.traceContext, `job ${i}`).toEqual(i === 4 ? { traceparent: awkward[i] } : null);
      expect(result.job, `job ${i}`).toEqual(read);
    }
  });
});
