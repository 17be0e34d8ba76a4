/**
 * Flows across worker processes on one Postgres schema (test/fixtures/worker-process.ts):
 * two processes drain diamonds and fan-out/fan-in flows, enqueued while they run, and the
 * history shows each child claimed only after every parent completed (by the database's
 * clock and the history's order), released in the statement of a parent's completion,
 * and each job run exactly once; then a worker SIGKILLed while it holds jobs in the middle of
 * two flows: after its leases lapse the other process rescues them and both flows finish,
 * nothing lost. Real time is unavoidable across processes: every wait polls with a deadline.
 */
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { postgresStore } from '../../../src/adapters/postgres/index.js';
import type { SqlJobStore } from '../../../src/adapters/sql/sql-store.js';
import { defineFlow, defineQueue, enqueueFlow, type FlowDefinition, flowJob, type FlowJobSpec, type Job } from '../../../src/index.js';
import type { WorkerConfig } from '../../fixtures/worker-process.js';
import { describePostgres, dropSchema, freshSchema, testPool } from '../../support/postgres.js';
import { executionsOf, heldLeases, overlapping, rescuedAfter, until, WorkerProcess } from '../../support/worker-processes.js';

const QUEUE = 'flows';
/** The workers' queue, as the test enqueues into it (the processes hold the real handler). */
const steps = defineQueue(QUEUE, { handlers: { run: async (_job: Job<{ n: number }>) => ({ worker: '' }) } });
type Step = FlowJobSpec<{ worker: string }, string>;

/** Queues only w1, or only w2, runs (`ownQueue`): a child with a parent pinned to each has
 *  its parents ended by two processes, so the race between them is run in every test run. */
const onW1 = defineQueue(`${QUEUE}-w1`, { handlers: steps.handlers });
const onW2 = defineQueue(`${QUEUE}-w2`, { handlers: steps.handlers });

/** a → (b, c) → d, numbered from `n`; `pinned`: b runs on w1 and c on w2. */
function diamond(name: string, n: number, pinned = false) {
  return defineFlow(name, {
    a: flowJob(steps, 'run', { n }),
    b: flowJob(pinned ? onW1 : steps, 'run', { n: n + 1 }, { dependsOn: ['a'] }),
    c: flowJob(pinned ? onW2 : steps, 'run', { n: n + 2 }, { dependsOn: ['a'] }),
    d: flowJob(steps, 'run', { n: n + 3 }, { dependsOn: ['b', 'c'] }),
  });
}

/** root → `width` children → sink, numbered from `n` (root), n + 1 … (children), n + width + 1
 *  (sink); `pinned`: the first child runs on w1 and the second on w2, the others on either. */
function fan(name: string, n: number, width: number, pinned = false): FlowDefinition<Record<string, Step>> {
  const queueOf = (i: number) => (pinned && i === 0 ? onW1 : pinned && i === 1 ? onW2 : steps);
  const children = Object.fromEntries(
    Array.from({ length: width }, (_, i): [string, Step] => [`child-${i}`, flowJob(queueOf(i), 'run', { n: n + 1 + i }, { dependsOn: ['root'] })]),
  );
  return defineFlow(name, {
    root: flowJob(steps, 'run', { n }),
    ...children,
    sink: flowJob(steps, 'run', { n: n + width + 1 }, { dependsOn: Object.keys(children) }),
  });
}

describePostgres('flows across worker processes', (url) => {
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
        concurrency: 4,
        leaseMs: 120_000,
        pollIntervalMs: 50,
        reaperIntervalMs: 30_000,
        handler: 'work',
        workMs: 5,
        ...config,
      });
      workers.push(worker);
      return worker;
    };
    const ready = (...ws: WorkerProcess[]) => until(() => ws.forEach((w) => w.assertReady()), ws, 20_000);
    const countByState = async (): Promise<Record<string, number>> => {
      const { rows } = await pool.query<{ state: string; count: number }>(`select state, count(*)::int as count from "${schema}".jobs group by state`);
      return Object.fromEntries(rows.map((row) => [row.state, row.count]));
    };
    return { schema, store, startWorker, ready, countByState };
  }

  /**
   * Every edge of every flow, with the child's first claim and each parent's completion as
   * the history has them: ids in the order they were written, times by the database's clock.
   * `release_at`: when the child went waiting → pending.
   */
  async function edgeTimes(schema: string) {
    const { rows } = await pool.query<{
      child: string;
      parent: string;
      child_run_id: string | null;
        parent_done_id: string | null;
      parent_done_at: Date | null;
      parent_worker: string | null;
      release_at: Date | null;
    }>(`
      select e.job_id::text as child, e.dep_id::text as parent,
        cr.id::text as child_run_id,
        pc.id::text as parent_done_id, pc.at as parent_done_at, pc.worker_id as parent_worker,
        rel.at as release_at
      from "${schema}".job_deps e
      left join lateral (select id from "${schema}".job_events where job_id = e.job_id and to_state = 'running' order by id limit 1) cr on true
      left join lateral (select id, at, worker_id from "${schema}".job_events where job_id = e.dep_id and to_state = 'completed' order by id limit 1) pc on true
      left join lateral (select at from "${schema}".job_events where job_id = e.job_id and from_state = 'waiting' and to_state = 'pending') rel on true
      where e.role = 'parent'
      order by e.job_id, e.dep_id`);
    return rows;
  }

  /**
   * Each child claimed after every parent completed, and released by a parent's statement.
   * "After" by the history's ids, not its times: a row's time is its transaction's start, and
   * a claim that began a moment before a parent's completion can still see that commit (CI
   * saw a child's run stamped 2 ms before its parents' completions). An id is drawn when the
   * row is written, and the claim writes only once it has seen the release committed.
   */
  function checkOrder(edges: Awaited<ReturnType<typeof edgeTimes>>) {
    const early = edges.filter((e) => !e.child_run_id || !e.parent_done_id || BigInt(e.child_run_id) < BigInt(e.parent_done_id));
    expect(early.map((e) => `job ${e.child} ran as event ${e.child_run_id}, parent ${e.parent} completed as event ${e.parent_done_id}`)).toEqual([]);
    const byChild = new Map<string, typeof edges>();
    for (const e of edges) byChild.set(e.child, [...(byChild.get(e.child) ?? []), e]);
    // Released inside the statement that ended one of its parents: its release carries that
    // statement's time. (Not always the latest of the parents' times: those are their
    // transactions' start times, and the one that releases is the last to take the child's
    // row lock, which need not be the last to have started.)
    for (const [child, parents] of byChild) {
      const ends = parents.map((p) => p.parent_done_at!.getTime());
      expect(ends, `job ${child} released in a parent's completion`).toContain(parents[0]!.release_at?.getTime());
    }
    return byChild;
  }

  /** No job has two running events for one attempt; no job is left unfinished or holding anything. */
  async function checkNothingLeft(schema: string, total: number) {
    const { rows: twice } = await pool.query(
      `select job_id::text, attempt, count(*)::int as n from "${schema}".job_events where to_state = 'running' group by job_id, attempt having count(*) > 1`,
    );
    expect(twice).toEqual([]);
    const { rows: left } = await pool.query<{ id: string }>(
      `select id::text from "${schema}".jobs where state <> 'completed' or lease_token is not null or worker_id is null or open_deps <> 0`,
    );
    expect(left).toEqual([]);
    const { rows: all } = await pool.query<{ n: number }>(`select count(*)::int as n from "${schema}".jobs`);
    expect(all[0]!.n).toBe(total);
  }

  it('two processes drain diamonds and fan-outs: every child after all its parents, every job once', async () => {
    const { schema, store, startWorker, ready, countByState } = await setUp('jv_flows_multi');
    const two = ['w1', 'w2'].map((workerId) => startWorker({ workerId, ownQueue: `${QUEUE}-${workerId}` }));
    await ready(...two);

    // Enqueued while the workers run, one flow at a time.
    const flows: FlowDefinition[] = [
      ...Array.from({ length: 12 }, (_, i) => diamond(`diamond-${i}`, 1_000 + i * 10, i % 2 === 0)),
      fan('fan-a', 2_000, 30, true),
      fan('fan-b', 3_000, 30, true),
    ];
    for (const flow of flows) await enqueueFlow(store, flow);
    const TOTAL = 12 * 4 + 2 * 32;
    await until(async () => expect(await countByState()).toEqual({ completed: TOTAL }), two, 60_000);
    const stopped = await Promise.all(two.map((w) => w.stop()));

    const edges = await edgeTimes(schema);
    expect(edges).toHaveLength(12 * 4 + 2 * 60);
    const byChild = checkOrder(edges);
    await checkNothingLeft(schema, TOTAL);
    // Every job claimed once, on its first attempt.
    const { rows: runs } = await pool.query<{ n: number }>(`select count(*)::int as n from "${schema}".job_events where to_state = 'running'`);
    expect(runs[0]!.n).toBe(TOTAL);

    // Handlers: one execution per job, none overlapping another of the same job.
    const executions = executionsOf(two);
    expect(executions).toHaveLength(TOTAL);
    expect(executions.filter((e) => e.end === undefined || e.attempt !== 1)).toEqual([]);
    expect(overlapping(executions, two)).toEqual([]);
    // Both processes worked, and parents of one child did complete on both: the race between
    // two workers ending the parents of one child was run, not avoided (the pinned jobs make
    // sure of it: each pinned diamond's d, and each fan's sink).
    for (const { worker, counters } of stopped) expect(counters?.completed, worker).toBeGreaterThan(0);
    const raced = [...byChild.values()].filter((parents) => new Set(parents.map((p) => p.parent_worker)).size === 2);
    expect(raced.length).toBeGreaterThanOrEqual(6 + 2);
  }, 120_000);

  it('a worker SIGKILLed while it holds jobs mid-flow: the other rescues them after the lease and both flows finish', async () => {
    const LEASE_MS = 3_000;
    const { schema, store, startWorker, ready, countByState } = await setUp('jv_flows_crash');
    // The victim runs every job but hangs on b of the diamond (n 11) and one child of the fan (n 25).
    const victim = startWorker({ workerId: 'victim', leaseMs: LEASE_MS, hangOn: [11, 25] });
    await ready(victim);
    const d = await enqueueFlow(store, diamond('diamond', 10));
    const f = await enqueueFlow(store, fan('fan', 20, 8));
    const held = [d.jobs.b.id, f.jobs['child-4']!.id];

    // Mid-flow: a, c, the root and the other children done; b and child-4 held; d and the sink waiting.
    await until(async () => expect(await countByState()).toEqual({ completed: 1 + 1 + 1 + 7, running: 2, waiting: 2 }), [victim], 20_000);
    const leases = await heldLeases(pool, schema, 'victim');
    const numerically = (x: string, y: string) => Number(x) - Number(y);
    expect(leases.map((l) => l.id).sort(numerically)).toEqual([...held].sort(numerically));

    const survivor = startWorker({ workerId: 'survivor', leaseMs: LEASE_MS, reaperIntervalMs: 100 });
    await ready(survivor);
    victim.signal('SIGKILL');
    expect(await victim.exited).toEqual({ code: null, signal: 'SIGKILL' });

    const TOTAL = 4 + 10;
    await until(async () => expect(await countByState()).toEqual({ completed: TOTAL }), [survivor], LEASE_MS + 20_000);
    const { counters } = await survivor.stop();
    expect(counters).toMatchObject({ rescued: 2, lost: 0 });

    for (const id of held) {
      const path = (await store.getJobEvents({ id })).map((e) => [e.fromState, e.toState, e.attempt, e.workerId, e.error?.code ?? null]);
      expect(path).toEqual([
        [null, 'waiting', 0, null, null],
        ['waiting', 'pending', 0, null, null],
        ['pending', 'running', 1, 'victim', null],
        ['running', 'retrying', 1, 'victim', 'lease_expired'],
        ['retrying', 'running', 2, 'survivor', null],
        ['running', 'completed', 2, 'survivor', null],
      ]);
      // Rescued only after the lease ran out, by the database's clock.
      expect(await rescuedAfter(pool, schema, id, leases.find((l) => l.id === id)!.leaseExpiresAt)).toEqual([true]);
    }
    // The jobs that waited for them ran once, on the survivor, after the rescued run completed.
    for (const id of [d.jobs.d.id, f.jobs.sink!.id]) {
      const path = (await store.getJobEvents({ id })).map((e) => [e.fromState, e.toState, e.attempt, e.workerId]);
      expect(path).toEqual([
        [null, 'waiting', 0, null],
        ['waiting', 'pending', 0, null],
        ['pending', 'running', 1, 'survivor'],
        ['running', 'completed', 1, 'survivor'],
      ]);
    }
    checkOrder(await edgeTimes(schema));
    await checkNothingLeft(schema, TOTAL);

    // The victim's two handlers were cut off by the kill; every other job ran once.
    const executions = executionsOf([victim, survivor]);
    const cut = executions.filter((e) => e.end === undefined).map((e) => `${e.job}#${e.attempt}@${e.worker}`);
    expect(cut.sort()).toEqual(held.map((id) => `${id}#1@victim`).sort());
    expect(executions).toHaveLength(TOTAL + 2);
    expect(overlapping(executions, [victim, survivor])).toEqual([]);
  }, 120_000);
});
