/**
 * Durable jobs (issue 23), each shape its own run in its own process on a fresh schema:
 * - plain: `spec.jobs` no-op jobs: the yardstick of the steps' cost;
 * - steps: `spec.jobs` jobs of STEPS steps each (`job.step`, a number stored per step);
 * - dbos: `spec.jobs` DBOS Transact workflows of STEPS steps each (`DBOS.runStep`), started
 *   directly (`DBOS.startWorkflow`, DBOS's cheapest path: no queue), on the same server, its
 *   system tables in the run's schema;
 *   all three with `spec.concurrency` in flight, after a warm-up of a tenth, timed from the
 *   first enqueue (or start) until the database holds every one finished;
 * - wake: how late a waiting job wakes, with one idle supervisor listening (poll 1 s):
 *   a `job.sleep(SLEEP_MS)` (its end set by the worker that put it to sleep), a job enqueued
 *   with `runIn: RUN_IN_MS` (its time learnt from the store, as any worker's would be), and a
 *   signal sent from another connection (`send_signal`, NOTIFY); SAMPLES each;
 * - idle / sleepers: a drain of `spec.jobs` plain jobs at `spec.concurrency`, alone, or beside
 *   SLEEPERS jobs of the same queue that sleep (30 days) or wait for a signal (no timeout),
 *   written straight into the table (as 0017's rows, steps included) before the drain; and
 *   the worker's heap after it (collected).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import type * as JobvisorApi from '../../src/index.js';
import type * as JobvisorPostgres from '../../src/adapters/postgres/index.js';
import { queryCount } from './query-counter.js';
import type { DurableShape } from './durable-shapes.js';
import type { BenchResults } from './results.js';
import type { RunResult, RunSpec } from './run-spec.js';
import { openServerWindow, systemConnectionString } from './server-cost.js';
import { percentile } from './stats.js';
import { loadJobvisor } from './jobvisor-root.js';

export const STEPS = 10;
export const STEP_JOBS = 1_000;
export const STEP_CONCURRENCY = 50;
export const DRAIN_JOBS = 10_000;
export const SLEEPERS = 100_000;
export const SAMPLES = 40;
export const SLEEP_MS = 300;
export const RUN_IN_MS = 1_500;
/** The sizes of each shape's run. */
export function durableSpec(shape: DurableShape): { jobs: number; concurrency: number } {
  return shape === 'idle' || shape === 'sleepers' ? { jobs: DRAIN_JOBS, concurrency: STEP_CONCURRENCY } : { jobs: STEP_JOBS, concurrency: STEP_CONCURRENCY };
}

/** bench/results/durable.json: the last durable-only run, for BENCHMARKS.md. */
export interface DurableResults {
  startedAt: string;
  runs: number;
  machine: BenchResults['machine'];
  versions: BenchResults['versions'];
  dbos: string;
  summary: BenchResults['summary'];
  load: Array<{ scenario: string; run: number; busyBefore: number; load1: number }>;
}

const silent = { debug() {}, info() {}, warn() {}, error() {} };

export async function durableLoad(spec: RunSpec, admin: pg.Client): Promise<RunResult> {
  const shape = spec.durableShape!;
  if (shape === 'dbos') return dbosSteps(spec, admin);
  const { api, postgresStore } = await loadJobvisor(spec.jobvisorRoot);
  const store = postgresStore({ connectionString: systemConnectionString(spec.connectionString, spec.schema), schema: spec.schema });
  await store.migrate();
  try {
    if (shape === 'wake') return await wake(spec, admin, api, store);
    if (shape === 'idle' || shape === 'sleepers') return await drainBeside(spec, admin, api, store, shape === 'sleepers');
    return await steps(spec, admin, api, store, shape);
  } finally {
    await store.close();
  }
}

type Store = ReturnType<typeof JobvisorPostgres.postgresStore>;

/** The bench's own checks so far: left out of the statements counted. */
let checks = 0;

/** Resolves once `check` holds, polled every `everyMs`. */
async function until(check: () => Promise<boolean>, everyMs: number, what: string, timeoutMs = 300_000): Promise<void> {
  const end = performance.now() + timeoutMs;
  while ((checks++, !(await check()))) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

const unfinished = (admin: pg.Client, schema: string) => async () =>
  (await admin.query<{ n: number }>(`select count(*)::int as n from "${schema}".jobs where state <> 'completed'`)).rows[0]!.n === 0;

async function steps(spec: RunSpec, admin: pg.Client, api: typeof JobvisorApi, store: Store, shape: 'plain' | 'steps'): Promise<RunResult> {
  const queue = api.defineQueue('durable', {
    concurrency: spec.concurrency ?? STEP_CONCURRENCY,
    handlers: {
      plain: async () => null,
      steps: async (job: JobvisorApi.Job) => {
        let sum = 0;
        for (let k = 0; k < STEPS; k++) sum += await job.step(`s${k}`, () => k);
        return sum;
      },
    },
  });
  const supervisor = api.createSupervisor({ store, queues: [queue], logger: silent });
  await supervisor.start();
  const round = async (n: number) => {
    await queue.enqueueMany(store, Array.from({ length: n }, () => ({ kind: shape, payload: {} })));
    await until(unfinished(admin, spec.schema), 5, 'the jobs to complete');
  };
  try {
    await round(Math.max(10, Math.round(spec.jobs / 10)));
    return await measured(spec, admin, () => round(spec.jobs), shape === 'steps' ? STEPS : 0);
  } finally {
    await supervisor.stop({ graceMs: 10_000 });
  }
}

/** The window around `work`: wall time, this process's CPU and statements (the bench's own
 *  checks left out), the server's CPU and WAL. */
async function measured(spec: RunSpec, admin: pg.Client, work: () => Promise<void>, stepsPerJob: number): Promise<RunResult> {
  await admin.query('checkpoint');
  globalThis.gc?.();
  const server = await openServerWindow(admin, spec.schema, '');
  server.markCpu();
  const cpu0 = process.cpuUsage();
  const queries0 = queryCount.total;
  const checks0 = checks;
  const t0 = performance.now();
  await work();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const statements = queryCount.total - queries0 - (checks - checks0);
  const cpuUs = cpu.user + cpu.system;
  const serverCost = await server.close(spec.jobs);
  return {
    metrics: {
      jobs: spec.jobs,
      ms,
      jobsPerSec: spec.jobs / (ms / 1000),
      cpuPerJobUs: cpuUs / spec.jobs,
      statementsPerJob: statements / spec.jobs,
      ...(stepsPerJob > 0 ? { cpuPerStepUs: cpuUs / (spec.jobs * stepsPerJob) } : {}),
      ...serverCost,
    },
  };
}

async function dbosSteps(spec: RunSpec, admin: pg.Client): Promise<RunResult> {
  const { DBOS } = await import('@dbos-inc/dbos-sdk');
  DBOS.setConfig({
    name: 'jobvisor-bench',
    applicationVersion: 'bench',
    systemDatabaseUrl: systemConnectionString(spec.connectionString, spec.schema),
    systemDatabaseSchemaName: spec.schema,
    logLevel: 'error',
  });
  const workflow = DBOS.registerWorkflow(
    async () => {
      let sum = 0;
      for (let k = 0; k < STEPS; k++) sum += await DBOS.runStep(async () => k, { name: `s${k}` });
      return sum;
    },
    { name: 'steps' },
  );
  await DBOS.launch();
  const concurrency = spec.concurrency ?? STEP_CONCURRENCY;
  const round = async (n: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, n) }, async () => {
        while (next < n) {
          next += 1;
          const handle = await DBOS.startWorkflow(workflow)();
          await handle.getResult();
        }
      }),
    );
  };
  try {
    await round(Math.max(10, Math.round(spec.jobs / 10)));
    return await measured(spec, admin, () => round(spec.jobs), STEPS);
  } finally {
    await DBOS.shutdown();
  }
}

async function wake(spec: RunSpec, admin: pg.Client, api: typeof JobvisorApi, store: Store): Promise<RunResult> {
  const asked = new Map<string, number>();
  const woke = new Map<string, number>();
  const queue = api.defineQueue('wake', {
    concurrency: 10,
    handlers: {
      nap: async (job: JobvisorApi.Job) => {
        if (!asked.has(job.id)) asked.set(job.id, performance.now());
        await job.sleep('nap', SLEEP_MS);
        woke.set(job.id, performance.now());
      },
      later: async (job: JobvisorApi.Job) => void woke.set(job.id, performance.now()),
      approve: async (job: JobvisorApi.Job) => {
        await job.waitForSignal('go');
        woke.set(job.id, performance.now());
      },
    },
  });
  const supervisor = api.createSupervisor({ store, queues: [queue], logger: silent, pollIntervalMs: 1_000 });
  await supervisor.start();
  const stateOf = async (id: string) =>
    (await admin.query<{ state: string }>(`select state from "${spec.schema}".jobs where id = $1`, [id])).rows[0]!.state;
  try {
    // Sleeps: spaced 100 ms apart, so one wakes at a time and the worker is idle between.
    const naps: string[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      naps.push((await queue.enqueue(store, 'nap', {})).job.id);
      await sleep(100);
    }
    await until(async () => naps.every((id) => woke.has(id)), 20, 'the sleeps to end');
    const sleepLate = naps.map((id) => woke.get(id)! - asked.get(id)! - SLEEP_MS);
    // Later jobs: due RUN_IN_MS after the enqueue, by the database's clock.
    const laters: Array<{ id: string; due: number }> = [];
    for (let i = 0; i < SAMPLES; i++) {
      const t = performance.now();
      laters.push({ id: (await queue.enqueue(store, 'later', {}, { runIn: RUN_IN_MS })).job.id, due: t + RUN_IN_MS });
      await sleep(100);
    }
    await until(async () => laters.every(({ id }) => woke.has(id)), 20, 'the later jobs to run');
    const laterLate = laters.map(({ id, due }) => woke.get(id)! - due);
    // Signals, one at a time, each once its job waits.
    const signalLate: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const { job } = await queue.enqueue(store, 'approve', {});
      await until(async () => (await stateOf(job.id)) === 'sleeping', 2, 'the job to wait');
      await sleep(20);
      const t0 = performance.now();
      await admin.query(`select "${spec.schema}".send_signal($1, 'go')`, [job.id]);
      await until(async () => woke.has(job.id), 1, 'the signalled job to run');
      signalLate.push(woke.get(job.id)! - t0);
    }
    const stats = (name: string, samples: number[]) => ({ [`${name}P50Ms`]: percentile(samples, 50), [`${name}P99Ms`]: percentile(samples, 99) });
    return { metrics: { samples: SAMPLES, ...stats('sleep', sleepLate), ...stats('runIn', laterLate), ...stats('signal', signalLate) } };
  } finally {
    await supervisor.stop({ graceMs: 10_000 });
  }
}

async function drainBeside(spec: RunSpec, admin: pg.Client, api: typeof JobvisorApi, store: Store, sleepers: boolean): Promise<RunResult> {
  let handled = 0;
  const queue = api.defineQueue('work', { concurrency: spec.concurrency ?? STEP_CONCURRENCY, handlers: { noop: async () => void (handled += 1) } });
  if (sleepers) {
    // As suspend_job leaves them: half asleep for 30 days, half waiting for a signal with no
    // timeout, each with its wait's entry in job_steps (migrations 0027, 0030).
    await admin.query(`
      insert into "${spec.schema}".jobs (queue, kind, payload, state, priority, run_at, attempt, max_attempts, created_at, updated_at, wait_signal)
      select 'work', 'noop', '{}', 'sleeping', 0,
        case when i % 2 = 0 then now() + interval '30 days' else '9999-12-31 23:59:59.999+00' end, 1, 4, now(), now(),
        case when i % 2 = 1 then 'go' end
      from generate_series(1, ${SLEEPERS}) i`);
    await admin.query(`
      insert into "${spec.schema}".job_steps (job_id, kind, name, at, until, signal)
      select id, case when wait_signal is null then 'z' else 'w' end, 'wait', now(), run_at, wait_signal
      from "${spec.schema}".jobs where state = 'sleeping' order by id`);
  }
  await admin.query(`vacuum analyze "${spec.schema}".jobs`);
  // Polled only once every handler has run: a count over the sleepers is not the drain's cost.
  const done = async () =>
    (await admin.query<{ n: number }>(`select count(*)::int as n from "${spec.schema}".jobs where state in ('pending', 'running')`)).rows[0]!.n === 0;
  const supervisor = api.createSupervisor({ store, queues: [queue], logger: silent });
  await supervisor.start();
  const round = async (n: number) => {
    // Counted from before the enqueue: the worker may run some of the jobs before it returns.
    const target = handled + n;
    for (let left = n; left > 0; left -= 20_000) {
      await queue.enqueueMany(store, Array.from({ length: Math.min(20_000, left) }, () => ({ kind: 'noop' as const, payload: {} })));
    }
    while (handled < target) await sleep(5);
    await until(done, 5, 'the drain');
  };
  try {
    await round(1_000);
    const result = await measured(spec, admin, () => round(spec.jobs), 0);
    globalThis.gc?.();
    return { metrics: { ...result.metrics, heapUsedMb: process.memoryUsage().heapUsed / 2 ** 20, sleepers: sleepers ? SLEEPERS : 0 } };
  } finally {
    await supervisor.stop({ graceMs: 10_000 });
  }
}
