import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EnqueueJob, JobStore } from '../../../../src/adapters/store.js';
import { describePostgres, usePostgresStore } from '../../../support/postgres.js';
import { assertReplayable } from '../../../support/replayable-property.js';
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

  it('any payload and trace context, with or without times of its own', async () => {
    // The statement answers ids and resolved times only; each payload and trace context is
    // read back from the text sent, keys in jsonb's order (jsonb-order.ts).
    const text = fc.string({ unit: 'grapheme', maxLength: 6 }).filter((value) => !value.includes('\u0000'));
    const job = fc.record(
      {
        payload: fc.jsonValue({ stringUnit: 'grapheme', maxDepth: 2 }).filter((value) => !JSON.stringify(value).includes('\\u0000')),
        traceContext: fc.dictionary(text, text, { maxKeys: 3 }),
        runIn: fc.integer({ min: 0, max: 10_000 }),
        expiresIn: fc.integer({ min: 20_000, max: 30_000 }),
        runAt: fc.date({ min: new Date(Date.UTC(1900, 0, 1)), max: new Date(Date.UTC(2000, 0, 1)), noInvalidDate: true }),
      },
      { requiredKeys: ['payload'] },
    ).filter((given) => given.runIn === undefined || given.runAt === undefined);
    await assertReplayable(
      'ENQUEUE_NEW_JOBS',
      fc.asyncProperty(fc.array(job, { minLength: 1, maxLength: 6 }), async (given) => {
        const jobs: EnqueueJob[] = given.map((options) => ({ queue: 'enq-any', kind: 'k', maxAttempts: 1, ...options }));
        const results = await store.enqueueJobs({ jobs });
        expect(results).toHaveLength(jobs.length);
        for (const [i, result] of results.entries()) {
          const read = await store.getJob({ id: result.job.id });
          expect(JSON.stringify(result.job), `job ${i}`).toBe(JSON.stringify(read));
        }
      }),
      40,
    );
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

describePostgres('a bulk enqueue whose ids are not one run', (url) => {
  const db = usePostgresStore(url, 'jv_enq_runs');

  /** Every record answered is the job getJob reads by its id, and holds its own input. */
  async function expectRecordsRead(store: JobStore, jobs: EnqueueJob[], results: Awaited<ReturnType<JobStore['enqueueJobs']>>) {
    expect(results).toHaveLength(jobs.length);
    for (const [i, result] of results.entries()) {
      expect(result.job.payload, `job ${i}`).toEqual(jobs[i]!.payload);
      expect(result.job, `job ${i}`).toEqual(await store.getJob({ id: result.job.id }));
    }
  }

  it('maps each id drawn to its job when the sequence steps by more than one', async () => {
    const { store, pool, schema } = db;
    await pool.query(`alter sequence "${schema}".jobs_id_seq increment by 3`);
    try {
      const jobs: EnqueueJob[] = Array.from({ length: 5 }, (_, n) => ({ queue: 'runs', kind: 'k', maxAttempts: 1, payload: { n } }));
      const results = await store.enqueueJobs({ jobs });
      const ids = results.map((result) => BigInt(result.job.id));
      expect(ids.slice(1).map((id, k) => id - ids[k]!)).toEqual([3n, 3n, 3n, 3n]);
      await expectRecordsRead(store, jobs, results);
    } finally {
      await pool.query(`alter sequence "${schema}".jobs_id_seq increment by 1`);
    }
  });

  it('maps ids past 2^53 exactly', async () => {
    const { store, pool, schema } = db;
    const { rows } = await pool.query<{ last: string }>(`select last_value::text as last from "${schema}".jobs_id_seq`);
    await pool.query(`select setval('"${schema}".jobs_id_seq', 9007199254740990)`);
    try {
      const jobs: EnqueueJob[] = Array.from({ length: 4 }, (_, n) => ({ queue: 'runs', kind: 'k', maxAttempts: 1, payload: { n } }));
      const results = await store.enqueueJobs({ jobs });
      expect(results.map((result) => result.job.id)).toEqual(['9007199254740991', '9007199254740992', '9007199254740993', '9007199254740994']);
      await expectRecordsRead(store, jobs, results);
      await pool.query(`delete from "${schema}".jobs where id > 9007199254740000`);
    } finally {
      await pool.query(`select setval('"${schema}".jobs_id_seq', $1)`, [rows[0]!.last]);
    }
  });

  it('maps each id to its job while other calls draw ids at the same time', async () => {
    const { store, pool, schema } = db;
    const calls = Array.from({ length: 4 }, (_, call) =>
      Array.from({ length: 2_000 }, (_, n): EnqueueJob => ({ queue: 'runs-concurrent', kind: 'k', maxAttempts: 1, payload: { call, n } })),
    );
    const answered = await Promise.all(calls.map((jobs) => store.enqueueJobs({ jobs })));
    const { rows } = await pool.query<{ id: string; payload: unknown }>(`select id::text as id, payload from "${schema}".jobs where queue = 'runs-concurrent'`);
    const stored = new Map(rows.map((row) => [row.id, row.payload]));
    for (const [call, results] of answered.entries()) {
      expect(results.map((result) => stored.get(result.job.id))).toEqual(calls[call]!.map((job) => job.payload));
      expect(results.map((result) => result.job.payload)).toEqual(calls[call]!.map((job) => job.payload));
    }
    expect(stored.size).toBe(answered.flat().length);
  });
});
