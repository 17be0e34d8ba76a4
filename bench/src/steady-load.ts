/**
 * Steady traffic against a drain (issue 27), jobvisor only, each shape its own run in its own
 * process on a fresh schema. Every job: a payload of about 1 KB (a string of 1,000 random
 * base64 characters and its enqueue time), a handler that awaits a uniformly random 1-20 ms;
 * one supervisor, one queue at concurrency STEADY_CONCURRENCY.
 * - rate-100 / rate-500 / rate-2000: a separate enqueuer process (steady-enqueuer.ts) enqueues one job a
 *   call at that rate, open loop (each call at its time, whether or not the earlier ones have
 *   returned, up to the 10 its pool serves at once). `warmupS` seconds at the rate, then a CHECKPOINT (as before the drains' windows)
 *   and a window of `seconds`. Per job enqueued in the window: the statements of both
 *   processes, by statement; the Postgres CPU of each one's backends; the WAL of the run's
 *   schema and the growth of its tables and indexes on disk (nothing is pruned); each
 *   process's Node CPU; the time from the enqueue call, and from the job row's creation, to
 *   the handler's start, p50/p99; the rates the enqueuer and the worker held; and the index
 *   entries read (the claim's index per claim). 100 jobs/s is a rate the 2-core machine of
 *   BENCHMARKS.md holds while other sessions load it; 500 and 2,000 are issue 27's.
 * - drain: the same jobs as a backlog (`spec.jobs`, enqueued in calls of DRAIN_ENQUEUE_CHUNK,
 *   measured as a window of its own), then drained by the same supervisor from its start until
 *   the database holds every job completed; after a warm-up of DRAIN_WARMUP jobs.
 * "Whole life" figures add, for the drain, the backlog's enqueue to the drain; the rate shapes'
 * windows hold both already.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import type * as JobvisorApi from '../../src/index.js';
import type * as JobvisorPostgres from '../../src/adapters/postgres/index.js';
import type { Sizes } from './options.js';
import { queryCount } from './query-counter.js';
import type { BenchResults } from './results.js';
import type { RunResult, RunSpec } from './run-spec.js';
import { openServerWindow, systemConnectionString } from './server-cost.js';
import { percentile } from './stats.js';
import type { EnqueuerMessage, EnqueuerRequest, EnqueuerSnapshot, EnqueuerSpec } from './steady-enqueuer.js';
import { steadyRate, type SteadyShape } from './steady-shapes.js';
import { loadJobvisor } from './jobvisor-root.js';

export const STEADY_CONCURRENCY = 64;
export const HANDLER_MS = { min: 1, max: 20 };
/** Characters of the payload's filler: with the enqueue time, the payload is about 1 KB. */
export const PAD_CHARS = 1_000;
export const DRAIN_ENQUEUE_CHUNK = 1_000;
const DRAIN_WARMUP = 1_000;

/** The sizes of each shape's run. */
export function steadySpec(shape: SteadyShape, sizes: Sizes): { jobs: number; concurrency: number; seconds?: number; warmupS?: number } {
  return steadyRate(shape) === undefined
    ? { jobs: sizes.steadyDrainJobs, concurrency: STEADY_CONCURRENCY }
    : { jobs: 0, concurrency: STEADY_CONCURRENCY, seconds: sizes.steadySeconds, warmupS: sizes.steadyWarmupS };
}

/** bench/results/steady.json: the last steady-only run, for BENCHMARKS.md. */
export interface SteadyResults {
  startedAt: string;
  runs: number;
  machine: BenchResults['machine'];
  versions: BenchResults['versions'];
  sizes: { seconds: number; warmupS: number; drainJobs: number };
  summary: BenchResults['summary'];
  load: Array<{ scenario: string; run: number; busyBefore: number; load1: number }>;
}

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const benchSrc = dirname(fileURLToPath(import.meta.url));
type Api = typeof JobvisorApi;
type Store = ReturnType<typeof JobvisorPostgres.postgresStore>;
type Payload = { at: number; pad: string };

export async function steadyLoad(spec: RunSpec, admin: pg.Client): Promise<RunResult> {
  const { api, postgresStore } = await loadJobvisor(spec.jobvisorRoot);
  // Named after the run, as the systems' connections are: the server's CPU is counted by it.
  const store = postgresStore({ connectionString: systemConnectionString(spec.connectionString, spec.schema), schema: spec.schema });
  await store.migrate();
  const pad = randomBytes((PAD_CHARS * 3) / 4).toString('base64');
  try {
    const rate = steadyRate(spec.steadyShape!);
    return rate === undefined ? await drain(spec, admin, api, store, pad) : await steady(spec, admin, api, store, pad, rate);
  } finally {
    await store.close();
  }
}

/** The worker: one queue, handlers that wait 1-20 ms, counting their starts and ends. */
function worker(api: Api, store: Store, concurrency: number) {
  const counts = { started: 0, handled: 0 };
  /** enqueue call → handler start (ms) of the jobs started while `recording`; and the job row's
   *  created_at (the enqueue's transaction, the server's clock) → handler start, which leaves
   *  out the time a call waited in the enqueuer's pool. */
  const startMs: number[] = [];
  const rowStartMs: number[] = [];
  let recording = false;
  const queue = api.defineQueue('bench', {
    concurrency,
    handlers: {
      work: async ({ payload, record }: JobvisorApi.Job<Payload>) => {
        counts.started += 1;
        if (recording) {
          startMs.push(performance.timeOrigin + performance.now() - payload.at);
          rowStartMs.push(Date.now() - record.createdAt.getTime());
        }
        await sleep(HANDLER_MS.min + Math.random() * (HANDLER_MS.max - HANDLER_MS.min));
        counts.handled += 1;
      },
    },
  });
  const supervisor = api.createSupervisor({ store, queues: [queue], logger: silent });
  return {
    queue,
    supervisor,
    counts,
    startMs,
    rowStartMs,
    record(on: boolean) {
      recording = on;
    },
  };
}

/** The run's schema on disk: what a window of server-cost.ts does not count. */
async function diskBytes(admin: pg.Client, schema: string): Promise<number> {
  // Tables with their indexes and TOAST (pg_total_relation_size), and sequences.
  const { rows } = await admin.query<{ n: string }>(
    `select coalesce(sum(pg_total_relation_size(c.oid)), 0)::text as n from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = $1 and c.relkind in ('r', 'p', 'm', 'S')`,
    [schema],
  );
  return Number(rows[0]!.n);
}

/** Index entries read so far (pg_stat_user_indexes) in the run's schema: all, and the claim's
 *  index. Approximate at a window's edges: a backend reports its counts at most once a second. */
async function indexReads(admin: pg.Client, schema: string): Promise<{ all: number; claim: number }> {
  const { rows } = await admin.query<{ all: string; claim: string }>(
    `select coalesce(sum(idx_tup_read), 0)::text as all, coalesce(sum(idx_tup_read) filter (where indexrelname = 'jobs_claim_idx'), 0)::text as claim
     from pg_stat_user_indexes where schemaname = $1`,
    [schema],
  );
  return { all: Number(rows[0]!.all), claim: Number(rows[0]!.claim) };
}

/** Per job: index entries read in the window, and per claim those of the claim's index. */
function indexReadsPerJob(before: { all: number; claim: number }, after: { all: number; claim: number }, jobs: number, claimsPerJob: number): Record<string, number> {
  return {
    indexEntriesReadPerJob: (after.all - before.all) / jobs,
    ...(claimsPerJob > 0 ? { claimIndexEntriesPerClaim: (after.claim - before.claim) / (claimsPerJob * jobs) } : {}),
  };
}

/** The statements this process sent since `before`, by statement key, per job. */
function statementsSince(before: Map<string, number>, jobs: number, own = 0): Record<string, number> {
  const out: Record<string, number> = {};
  let total = -own;
  for (const [key, n] of queryCount.byName) {
    const spent = n - (before.get(key) ?? 0) - (key === 'other' ? own : 0);
    total += n - (before.get(key) ?? 0);
    if (spent > 0) out[`statements.${key}`] = spent / jobs;
  }
  return { statementsPerJob: total / jobs, outcomeStatementsPerJob: out['statements.set_states_if_running'] ?? 0, claimStatementsPerJob: out['statements.claim_jobs'] ?? 0, ...out };
}

async function steady(spec: RunSpec, admin: pg.Client, api: Api, store: Store, pad: string, rate: number): Promise<RunResult> {
  const w = worker(api, store, spec.concurrency ?? STEADY_CONCURRENCY);
  const enqueuer = startEnqueuer({ connectionString: spec.connectionString, schema: spec.schema, jobvisorRoot: spec.jobvisorRoot, rate, pad });
  try {
    await enqueuer.ready;
    await w.supervisor.start();
    enqueuer.send({ type: 'start' });
    await sleep((spec.warmupS ?? 5) * 1000);

    await admin.query('checkpoint');
    globalThis.gc?.();
    const server = await openServerWindow(admin, spec.schema, '');
    const disk0 = await diskBytes(admin, spec.schema);
    const reads0 = await indexReads(admin, spec.schema);
    const e0 = await enqueuer.snapshot();
    server.markCpu();
    const statements0 = new Map(queryCount.byName);
    const handled0 = w.counts.handled;
    const cpu0 = process.cpuUsage();
    w.record(true);
    const t0 = performance.now();
    await sleep((spec.seconds ?? 30) * 1000);
    const ms = performance.now() - t0;
    w.record(false);
    const cpu = process.cpuUsage(cpu0);
    const handled = w.counts.handled - handled0;
    const e1 = await enqueuer.snapshot();
    const jobs = e1.done - e0.done;
    const statements = statementsSince(statements0, jobs);
    const serverCost = await server.close(jobs);
    const disk1 = await diskBytes(admin, spec.schema);
    const reads = indexReadsPerJob(reads0, await indexReads(admin, spec.schema), jobs, statements.claimStatementsPerJob!);
    const { rows } = await admin.query<{ n: number }>(`select count(*)::int as n from "${spec.schema}".jobs where state <> 'completed'`);
    if (e1.failed > 0) throw new Error(`${e1.failed} enqueues failed: ${e1.firstError}`);
    const enqueueStatements = (e1.statements - e0.statements) / jobs;
    const enqueuerCpuPerJobUs = (e1.cpuUs - e0.cpuUs) / jobs;
    return {
      metrics: {
        rate,
        seconds: ms / 1000,
        jobs,
        enqueuedPerSec: jobs / (ms / 1000),
        completedPerSec: handled / (ms / 1000),
        // Not completed when the window closed: held ahead, running, or behind.
        unfinishedAtEnd: rows[0]!.n,
        // Behind the schedule when the window closed (0 while the rate is kept).
        enqueueLagMs: e1.lagMs,
        enqueueCallP50Ms: percentile(e1.callMs, 50),
        enqueueCallP99Ms: percentile(e1.callMs, 99),
        startP50Ms: percentile(w.startMs, 50),
        startP99Ms: percentile(w.startMs, 99),
        rowStartP50Ms: percentile(w.rowStartMs, 50),
        rowStartP99Ms: percentile(w.rowStartMs, 99),
        cpuPerJobUs: (cpu.user + cpu.system) / jobs,
        enqueuerCpuPerJobUs,
        ...statements,
        enqueueStatementsPerJob: enqueueStatements,
        ...serverCost,
        diskBytesPerJob: (disk1 - disk0) / jobs,
        ...reads,
        lifeStatementsPerJob: statements.statementsPerJob! + enqueueStatements,
        lifePgCpuPerJobUs: serverCost.pgCpuPerJobUs! + (serverCost.enqueuerPgCpuPerJobUs ?? 0),
        lifeWalBytesPerJob: serverCost.walBytesPerJob!,
        lifeWalFpiBytesPerJob: serverCost.walFpiBytesPerJob!,
        lifeDiskBytesPerJob: (disk1 - disk0) / jobs,
      },
    };
  } finally {
    await enqueuer.stop();
    await w.supervisor.stop({ graceMs: 10_000 });
  }
}

async function drain(spec: RunSpec, admin: pg.Client, api: Api, store: Store, pad: string): Promise<RunResult> {
  const jobs = spec.jobs;
  const payloads = (n: number) => Array.from({ length: n }, () => ({ kind: 'work' as const, payload: { at: performance.timeOrigin + performance.now(), pad } }));
  // Warm-up: a first batch through a first supervisor, which is then stopped (as the drains of scenarios.ts).
  const first = worker(api, store, spec.concurrency ?? STEADY_CONCURRENCY);
  await first.queue.enqueueMany(store, payloads(DRAIN_WARMUP));
  await first.supervisor.start();
  while (first.counts.handled < DRAIN_WARMUP) await sleep(20);
  await first.supervisor.stop({ graceMs: 10_000 });
  const w = worker(api, store, spec.concurrency ?? STEADY_CONCURRENCY);

  const window = async (prefix: '' | 'enqueue', work: () => Promise<number>) => {
    await admin.query('checkpoint');
    globalThis.gc?.();
    const server = await openServerWindow(admin, spec.schema, prefix);
    const disk0 = await diskBytes(admin, spec.schema);
    const reads0 = await indexReads(admin, spec.schema);
    server.markCpu();
    const statements0 = new Map(queryCount.byName);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const own = await work();
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const statements = statementsSince(statements0, jobs, own);
    const serverCost = await server.close(jobs);
    const disk1 = await diskBytes(admin, spec.schema);
    const reads = indexReadsPerJob(reads0, await indexReads(admin, spec.schema), jobs, statements.claimStatementsPerJob!);
    return { ms, cpuPerJobUs: (cpu.user + cpu.system) / jobs, statements, serverCost, diskBytesPerJob: (disk1 - disk0) / jobs, reads };
  };
  const enqueue = await window('enqueue', async () => {
    for (let left = jobs; left > 0; left -= DRAIN_ENQUEUE_CHUNK) await w.queue.enqueueMany(store, payloads(Math.min(DRAIN_ENQUEUE_CHUNK, left)));
    return 0;
  });
  const run = await window('', async () => {
    await w.supervisor.start();
    // Counted here, then one look at the table a few ms apart (as keys-load.ts): the bench's
    // own statements, left out of the worker's.
    while (w.counts.handled < jobs) await sleep(5);
    let polls = 0;
    for (;;) {
      polls += 1;
      const { rows } = await admin.query<{ n: number }>(`select count(*)::int as n from "${spec.schema}".jobs where state <> 'completed'`);
      if (rows[0]!.n === 0) return polls;
      await sleep(5);
    }
  });
  await w.supervisor.stop({ graceMs: 10_000 });
  const enqueueStatements = enqueue.statements.statementsPerJob!;
  return {
    metrics: {
      jobs,
      jobsPerSec: jobs / (run.ms / 1000),
      ms: run.ms,
      cpuPerJobUs: run.cpuPerJobUs,
      ...run.statements,
      ...run.serverCost,
      diskBytesPerJob: run.diskBytesPerJob,
      ...run.reads,
      enqueueCpuPerJobUs: enqueue.cpuPerJobUs,
      enqueueStatementsPerJob: enqueueStatements,
      ...enqueue.serverCost,
      enqueueDiskBytesPerJob: enqueue.diskBytesPerJob,
      lifeStatementsPerJob: run.statements.statementsPerJob! + enqueueStatements,
      lifePgCpuPerJobUs: run.serverCost.pgCpuPerJobUs! + enqueue.serverCost.enqueuePgCpuPerJobUs!,
      lifeWalBytesPerJob: run.serverCost.walBytesPerJob! + enqueue.serverCost.enqueueWalBytesPerJob!,
      lifeWalFpiBytesPerJob: run.serverCost.walFpiBytesPerJob! + enqueue.serverCost.enqueueWalFpiBytesPerJob!,
      lifeDiskBytesPerJob: run.diskBytesPerJob + enqueue.diskBytesPerJob,
    },
  };
}

/** Forks the enqueuer; `snapshot()` asks for its counters, `stop()` waits for its exit. */
function startEnqueuer(enqueuerSpec: EnqueuerSpec) {
  const child = fork(join(benchSrc, 'steady-enqueuer.ts'), [JSON.stringify(enqueuerSpec)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting: Array<(m: EnqueuerMessage) => void> = [];
  child.on('message', (message: EnqueuerMessage) => waiting.shift()?.(message));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const next = () => new Promise<EnqueuerMessage>((resolve, reject) => {
    waiting.push(resolve);
    void exited.then(() => reject(new Error('the enqueuer exited')));
  });
  const send = (request: EnqueuerRequest) => child.send(request);
  return {
    ready: next(),
    send,
    async snapshot(): Promise<EnqueuerSnapshot> {
      const answer = next();
      send({ type: 'snapshot' });
      return (await answer) as EnqueuerSnapshot;
    },
    async stop(): Promise<void> {
      if (child.exitCode === null && child.signalCode === null) {
        send({ type: 'stop' });
        await Promise.race([exited, sleep(15_000).then(() => child.kill('SIGKILL'))]);
      }
    },
  };
}
