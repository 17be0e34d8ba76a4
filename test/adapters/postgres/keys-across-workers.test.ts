/**
 * Replace by key, debounce and fair share (docs/enqueueing.md, migration 0019 and 0020) from
 * outside, as in production: two worker processes (test/fixtures/worker-process.ts) on a
 * schema of the test's own, enqueues from several pools of the test process at once, and the
 * rows, the history and what each handler reported as the evidence. Real time is unavoidable
 * across processes: every wait polls with a deadline, none sleeps blindly.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { postgresStore } from '../../../src/adapters/postgres/index.js';
import type { SqlJobStore } from '../../../src/adapters/sql/sql-store.js';
import type { EnqueueJob } from '../../../src/adapters/store.js';
import type { WorkerConfig } from '../../fixtures/worker-process.js';
import { describePostgres, dropSchema, freshSchema, testPool } from '../../support/postgres.js';
import { executionsOf, until, WorkerProcess } from '../../support/worker-processes.js';

const QUEUE = 'keys';

describePostgres('keys across worker processes', (url) => {
  let pool: pg.Pool;
  let run: { schema: string; stores: SqlJobStore[]; workers: WorkerProcess[] } | undefined;

  beforeAll(() => {
    pool = testPool(url);
  });

  afterAll(async () => {
    await pool.end();
  });

  afterEach(async () => {
    if (!run) return;
    for (const w of run.workers) w.signal('SIGKILL');
    await Promise.all(run.workers.map((w) => w.exited));
    await Promise.all(run.stores.map((store) => store.close()));
    await dropSchema(pool, run.schema);
    run = undefined;
  });

  /** A migrated schema of the test's own, `clients` stores on it (a pool each), and the means
   *  to run workers on it. */
  async function setUp(prefix: string, clients = 1) {
    const schema = freshSchema(prefix);
    const stores = Array.from({ length: clients }, () => postgresStore({ connectionString: url, schema }));
    const workers: WorkerProcess[] = [];
    run = { schema, stores, workers };
    await stores[0]!.migrate();
    const startWorker = (config: Partial<WorkerConfig> & Pick<WorkerConfig, 'workerId'>) => {
      const worker = new WorkerProcess({
        url, schema, queue: QUEUE, concurrency: 4, leaseMs: 60_000, pollIntervalMs: 50, reaperIntervalMs: 30_000,
        handler: 'work', workMs: 2, ...config,
      });
      workers.push(worker);
      return worker;
    };
    // A loaded machine takes long to start a process under tsx.
    const ready = (...ws: WorkerProcess[]) => until(() => ws.forEach((w) => w.assertReady()), ws, 60_000);
    const job = (n: number, options: Partial<EnqueueJob> = {}): EnqueueJob => ({ queue: QUEUE, kind: 'run', payload: { n }, maxAttempts: 3, ...options });
    const rows = async () =>
      (await pool.query<{ id: string; state: string; payload: { n: number }; result: unknown; error: { code: string } | null }>(
        `select id::text, state, payload, result, error from "${schema}".jobs order by id`,
      )).rows;
    return { schema, stores, startWorker, ready, job, rows };
  }

  it('1,000 enqueues of one debounce key from 4 concurrent clients: exactly one run, with the last payload', async () => {
    const { stores, startWorker, ready, job, rows } = await setUp('jv_keys_debounce', 4);
    const two = ['w1', 'w2'].map((workerId) => startWorker({ workerId }));
    await ready(...two);
    // Due 3 s after the burst's last enqueue: enqueues 1 to 999 come far closer together than
    // that, so the job cannot start before the 1,000th, which comes once they have all
    // answered and so is the last.
    const debounce = { key: 'doc:1', delayMs: 3_000 };
    const answers = await Promise.all(
      stores.map(async (store, client) => {
        const ids: string[] = [];
        for (let i = client; i < 999; i += stores.length) {
          const [result] = await store.enqueueJobs({ jobs: [job(i, { debounce })] });
          ids.push(result!.job.id);
        }
        return ids;
      }),
    );
    const [last] = await stores[0]!.enqueueJobs({ jobs: [job(999, { debounce })] });
    expect(new Set([...answers.flat(), last!.job.id])).toEqual(new Set([last!.job.id]));
    expect(last!.created).toBe(false);
    await until(async () => expect((await rows()).map((r) => r.state)).toEqual(['completed']), two, 30_000);
    expect((await rows())[0]).toMatchObject({ id: last!.job.id, payload: { n: 999 } });
    expect(executionsOf(two).map((e) => e.job)).toEqual([last!.job.id]);
    await Promise.all(two.map((w) => w.stop()));
  }, 120_000);

  it('replace of a running job: its attempt is cancelled and its result never lands; the new job runs', async () => {
    const { stores, startWorker, ready, job, rows } = await setUp('jv_keys_replace');
    // Job 1's handler takes 2 s and returns its result whatever it is told.
    const two = ['w1', 'w2'].map((workerId) => startWorker({ workerId, slowOn: [1], slowMs: 2_000 }));
    await ready(...two);
    const store = stores[0]!;
    const [old] = await store.enqueueJobs({ jobs: [job(1, { uniqueKey: 'report' })] });
    await until(() => expect(executionsOf(two).map((e) => e.job)).toEqual([old!.job.id]), two, 20_000);
    const [next] = await store.enqueueJobs({ jobs: [job(2, { uniqueKey: 'report', onConflict: 'replaceRunning' })] });
    expect(next).toMatchObject({ created: true, replaced: true });
    // The old handler has returned (its `end` line) and the new job completed.
    await until(() => {
      const runs = executionsOf(two);
      expect(runs.find((e) => e.job === old!.job.id)?.end).toBeDefined();
      expect(runs.find((e) => e.job === next!.job.id)?.end).toBeDefined();
    }, two, 20_000);
    await until(async () => expect((await rows()).map((r) => r.state)).toEqual(['cancelled', 'completed']), two, 20_000);
    await Promise.all(two.map((w) => w.stop()));
    const [oldRow, newRow] = await rows();
    expect(oldRow).toMatchObject({ id: old!.job.id, state: 'cancelled', result: null, error: { code: 'replaced' } });
    expect(newRow).toMatchObject({ id: next!.job.id, state: 'completed', payload: { n: 2 } });
    const events = await store.getJobEvents({ id: old!.job.id });
    expect(events.map((e) => `${e.fromState ?? '-'}>${e.toState}`)).toEqual(['->pending', 'pending>running', 'running>cancelled']);
  }, 120_000);

  it('fair share: a tenant with 10 jobs behind one with 100,000 has them all claimed within 10 × 2 claims; the big one never runs over its limit', async () => {
    const BIG = 100_000;
    const LIMIT = 2;
    const { schema, stores, startWorker, ready, job } = await setUp('jv_keys_fair');
    const store = stores[0]!;
    for (let n = 0; n < BIG; n += 10_000) {
      await store.enqueueJobs({
        jobs: Array.from({ length: 10_000 }, (_, i) => job(n + i, { fairShare: { tenant: 'big', weight: 1 }, concurrencyKey: 'big' })),
      });
    }
    const small = await store.enqueueJobs({ jobs: Array.from({ length: 10 }, (_, i) => job(BIG + i, { fairShare: { tenant: 'small', weight: 1 } })) });
    const smallIds = new Set(small.map((r) => r.job.id));
    const two = ['w1', 'w2'].map((workerId) => startWorker({ workerId, concurrency: 3, fairShare: true, perKeyConcurrency: LIMIT }));
    await ready(...two);
    const claims = async () =>
      (await pool.query<{ job_id: string }>(
        `select job_id::text from "${schema}".job_events where from_state = 'pending' and to_state = 'running' order by id`,
      )).rows.map((r) => r.job_id);
    await until(async () => expect((await claims()).filter((id) => smallIds.has(id))).toHaveLength(10), two, 60_000);
    await Promise.all(two.map((w) => w.stop()));
    const order = await claims();
    // The 10th small job's place among every claim of the queue: 10 rounds of 2 tenants, and
    // the other worker's claim in flight at most (3 jobs).
    const lastSmall = Math.max(...[...smallIds].map((id) => order.indexOf(id))) + 1;
    expect(lastSmall).toBeLessThanOrEqual(10 * 2 + 3);
    // The big tenant's concurrency key: never more than LIMIT of its jobs at once, across both
    // processes, by what the handlers reported.
    const big = executionsOf(two).filter((e) => !smallIds.has(e.job));
    const edges = big.flatMap((e) => [{ at: e.start, d: 1 }, { at: e.end ?? Infinity, d: -1 }]).sort((a, b) => a.at - b.at || a.d - b.d);
    let running = 0;
    let most = 0;
    for (const edge of edges) most = Math.max(most, (running += edge.d));
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(LIMIT);
    console.log(`fair share: the small tenant's 10th job was claim ${lastSmall} of ${order.length}; the big tenant ran at most ${most} at once`);
  }, 240_000);

});
