/**
 * Worker processes on one database, as in production: each test spawns real processes
 * (test/fixtures/worker-process.ts) on a schema of the test's own and checks, from the rows, the
 * history and what each handler reported, that every job ran to completion exactly once and
 * never twice at the same time. Real time is unavoidable across processes: every wait polls
 * with a deadline, none sleeps blindly.
 */
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { postgresStore } from '../../../src/adapters/postgres/index.js';
import type { SqlJobStore } from '../../../src/adapters/sql/sql-store.js';
import type { WorkerConfig } from '../../fixtures/worker-process.js';
import { describePostgres, dropSchema, freshSchema, testPool } from '../../support/postgres.js';
import { executionsOf, heldLeases, overlapping, rescuedAfter, until, WorkerProcess } from '../../support/worker-processes.js';

const QUEUE = 'multi';

describePostgres('worker processes on one database', (url) => {
  let pool: pg.Pool;
  let run: { schema: string; store: SqlJobStore; workers: WorkerProcess[] } | undefined;

  beforeAll(() => {
    pool = testPool(url);
  });

  afterAll(async () => {
    await pool.end();
  });

  afterEach(async () => {
    if (!run) return;
    // A failed test may leave workers running: none may outlive it.
    for (const w of run.workers) w.signal('SIGKILL');
    await Promise.all(run.workers.map((w) => w.exited));
    await run.store.close();
    await dropSchema(pool, run.schema);
    run = undefined;
  });

  /** A migrated schema of the test's own, and the means to run workers on it. */
  async function setUp(prefix: string) {
    const schema = freshSchema(prefix);
    const store = postgresStore({ pool, schema });
    const workers: WorkerProcess[] = [];
    run = { schema, store, workers };
    await store.migrate();

    const startWorker = (config: Partial<WorkerConfig> & Pick<WorkerConfig, 'workerId'>) => {
      const worker = new WorkerProcess({
        url,
        schema,
        queue: QUEUE,
        concurrency: 20,
        leaseMs: 120_000,
        pollIntervalMs: 50,
        reaperIntervalMs: 30_000,
        handler: 'work',
        workMs: 2,
        ...config,
      });
      workers.push(worker);
      return worker;
    };
    /** Resolves once every one has started its supervisor (and so listens for wake-ups). */
    const ready = (...ws: WorkerProcess[]) => until(() => ws.forEach((w) => w.assertReady()), ws, 20_000);
    const countByState = async (): Promise<Record<string, number>> => {
      const { rows } = await pool.query<{ state: string; count: number }>(
        `select state, count(*)::int as count from "${schema}".jobs group by state`,
      );
      return Object.fromEntries(rows.map((row) => [row.state, row.count]));
    };
    const enqueue = (ns: readonly number[]) =>
      store.enqueueJobs({ jobs: ns.map((n) => ({ queue: QUEUE, kind: 'run', payload: { n }, maxAttempts: 3 })) });
    return { schema, store, startWorker, ready, countByState, enqueue };
  }

  it('four processes drain 5,000 jobs: each completed exactly once, never run twice at once', async () => {
    const TOTAL = 5_000;
    const BATCH = 250;
    const { schema, startWorker, ready, countByState, enqueue } = await setUp('jv_multi_drain');
    const four = ['w1', 'w2', 'w3', 'w4'].map((workerId) => startWorker({ workerId }));
    await ready(...four);

    // Enqueued while the workers run: they drain as the batches arrive.
    for (let n = 0; n < TOTAL; n += BATCH) await enqueue(Array.from({ length: BATCH }, (_, i) => n + i));
    // About 5 s on an idle two-core machine; the deadline leaves room for a loaded one.
    await until(async () => expect(await countByState()).toEqual({ completed: TOTAL }), four, 45_000);
    const stopped = await Promise.all(four.map((w) => w.stop()));

    // Rows: completed on the first attempt, by the worker the result names, no lease left.
    const { rows: jobs } = await pool.query<{ id: string; attempt: number; worker_id: string; result: { worker: string } }>(
      `select id::text, attempt, worker_id, result from "${schema}".jobs where state = 'completed' and lease_token is null`,
    );
    expect(jobs).toHaveLength(TOTAL);
    expect(jobs.filter((j) => j.attempt !== 1 || j.result.worker !== j.worker_id).map((j) => j.id)).toEqual([]);

    // History: every job went claim → completion, once, claimed and completed by the worker
    // the row names (its creation is its row's, not a history row). One string per distinct
    // path: a single one is expected.
    const { rows: paths } = await pool.query<{ path: string; count: number }>(`
      select path, count(*)::int as count from (
        select string_agg(coalesce(e.from_state, '-') || '>' || e.to_state
          || coalesce('@' || (e.worker_id = j.worker_id)::text, ''), ' ' order by e.id) as path
        from "${schema}".job_events e join "${schema}".jobs j on j.id = e.job_id
        group by e.job_id
      ) p group by path`);
    expect(paths).toEqual([{ path: 'pending>running@true running>completed@true', count: TOTAL }]);

    // Handlers: one execution per job, by the worker the row names, overlapping no other.
    const executions = executionsOf(four);
    expect(executions).toHaveLength(TOTAL);
    const workerOf = new Map(jobs.map((j) => [j.id, j.worker_id]));
    const odd = executions.filter((e) => e.end === undefined || e.attempt !== 1 || workerOf.get(e.job) !== e.worker);
    expect(odd.map((e) => `${e.job}#${e.attempt}@${e.worker}`)).toEqual([]);
    expect(overlapping(executions, four)).toEqual([]);

    // Every process took part, and its own counters agree with the rows.
    for (const { worker, counters } of stopped) {
      const ran = jobs.filter((j) => j.worker_id === worker).length;
      expect(ran, `jobs completed by ${worker}`).toBeGreaterThan(0);
      expect(counters).toMatchObject({ claimed: ran, completed: ran, running: 0, retrying: 0, lost: 0 });
    }
  }, 90_000);

  it('a worker killed with SIGKILL mid-job: its jobs are rescued after their lease and completed by another process', async () => {
    // Long enough that a heartbeat (every LEASE_MS / 3) delayed by a loaded machine does not
    // let the live victim's lease lapse before the kill.
    const LEASE_MS = 3_000;
    const HELD = 5;
    const TOTAL = 8;
    const { schema, store, startWorker, ready, countByState, enqueue } = await setUp('jv_multi_crash');
    // No prefetch: the victim holds exactly its HELD running jobs, however fast it measured
    // its starts.
    const victim = startWorker({ workerId: 'victim', concurrency: HELD, leaseMs: LEASE_MS, handler: 'hang', maxPrefetch: 0 });
    await ready(victim);
    const ids = (await enqueue(Array.from({ length: TOTAL }, (_, n) => n))).map((r) => r.job.id);
    await until(() => expect(executionsOf([victim])).toHaveLength(HELD), [victim], 10_000);
    const held = executionsOf([victim]).map((e) => e.job);

    // A second process takes what the victim left, while the victim's jobs stay leased to it
    // (its heartbeat renews them).
    const survivor = startWorker({ workerId: 'survivor', concurrency: HELD, leaseMs: LEASE_MS, reaperIntervalMs: 100 });
    await ready(survivor);
    const both = [victim, survivor];
    await until(async () => expect(await countByState()).toEqual({ running: HELD, completed: TOTAL - HELD }), both, 10_000);

    // The leases as they stand: the victim can only push them later before it dies.
    const leases = await heldLeases(pool, schema, 'victim');
    expect(leases.map((l) => l.id).sort()).toEqual([...held].sort());
    victim.signal('SIGKILL');
    expect(await victim.exited).toEqual({ code: null, signal: 'SIGKILL' });

    await until(async () => expect(await countByState()).toEqual({ completed: TOTAL }), [survivor], LEASE_MS + 10_000);
    const { counters } = await survivor.stop();
    expect(counters).toMatchObject({ rescued: HELD, claimed: TOTAL, completed: TOTAL, lost: 0 });

    for (const id of ids) {
      const events = await store.getJobEvents({ id });
      const path = events.map((e) => [e.fromState, e.toState, e.attempt, e.workerId, e.error?.code ?? null]);
      if (!held.includes(id)) {
        expect(path).toEqual([
          [null, 'pending', 0, null, null],
          ['pending', 'running', 1, 'survivor', null],
          ['running', 'completed', 1, 'survivor', null],
        ]);
        continue;
      }
      expect(path).toEqual([
        [null, 'pending', 0, null, null],
        ['pending', 'running', 1, 'victim', null],
        ['running', 'retrying', 1, 'victim', 'lease_expired'],
        ['retrying', 'running', 2, 'survivor', null],
        ['running', 'completed', 2, 'survivor', null],
      ]);
      // Rescued only after the lease ran out (both times by the database's clock).
      expect(await rescuedAfter(pool, schema, id, leases.find((l) => l.id === id)!.leaseExpiresAt)).toEqual([true]);
    }

    // The victim's handlers were cut off by the kill; the survivor ran each of those jobs
    // once, on the next attempt, and never while the victim's ran.
    const executions = executionsOf(both);
    const summary = executions.map((e) => `${e.job}#${e.attempt}@${e.worker}:${e.end === undefined ? 'cut' : 'ran'}`);
    expect(summary.sort()).toEqual(
      ids.flatMap((id) => (held.includes(id) ? [`${id}#1@victim:cut`, `${id}#2@survivor:ran`] : [`${id}#1@survivor:ran`])).sort(),
    );
    expect(overlapping(executions, both)).toEqual([]);
  }, 90_000);
});
