/**
 * What fair share and debounce cost (issue 28), jobvisor only, each shape its own run in its
 * own process on a fresh schema:
 * - drain-off / drain-on: KEYS_TENANTS tenants × `spec.jobs / KEYS_TENANTS` jobs, enqueued in
 *   calls of ENQUEUE_CHUNK (the tenants interleaved), then drained by one supervisor at
 *   concurrency `spec.concurrency` with no-op handlers. on: a queue with `fairShare`, every job
 *   ranked for its tenant (the fair claim); off: the same jobs without tenants on a plain queue
 *   (the plain claim). Two windows: the bulk enqueue (metrics `enqueue…`), and the drain, from
 *   the supervisor's start until the database holds every job completed.
 * - enqueue-plain / enqueue-debounce-one-key / enqueue-debounce-key-each / enqueue-fair:
 *   `spec.jobs` enqueues one after another, one job each: plain; debounced on one key (every
 *   enqueue after the first rewrites the burst's job); debounced on a key each (each a new
 *   burst); ranked for a tenant of KEYS_TENANTS in turn, on a fair queue.
 * Per window: wall time, this process's CPU, the Postgres CPU of the store's own backends and
 * the WAL of the run's schema (server-cost.ts), each per job.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import type * as JobvisorApi from '../../src/index.js';
import type * as JobvisorPostgres from '../../src/adapters/postgres/index.js';
import type { EnqueueJob } from '../../src/adapters/store.js';
import type { KeysShape } from './keys-shapes.js';
import type { Sizes } from './options.js';
import type { BenchResults } from './results.js';
import type { RunResult, RunSpec } from './run-spec.js';
import { openServerWindow, systemConnectionString } from './server-cost.js';
import { loadJobvisor } from './jobvisor-root.js';

export const KEYS_TENANTS = 100;
export const KEYS_CONCURRENCY = 10;
/** Jobs per call of a drain's bulk enqueue. */
export const ENQUEUE_CHUNK = 1_000;
/** Enqueues before an enqueue shape's window (one a call), and jobs of a bulk one's warm-up call. */
const WARMUP = 100;

/** The sizes of each shape's run: the drains' backlog, or the enqueues one after another. */
export function keysSpec(shape: KeysShape, sizes: Sizes): { jobs: number; concurrency: number } {
  return { jobs: shape.startsWith('drain-') ? KEYS_TENANTS * sizes.keysJobsPerTenant : sizes.keysEnqueues, concurrency: KEYS_CONCURRENCY };
}

/** bench/results/keys.json: the last keys-only run, for BENCHMARKS.md. */
export interface KeysResults {
  startedAt: string;
  runs: number;
  machine: BenchResults['machine'];
  versions: BenchResults['versions'];
  sizes: { jobsPerTenant: number; enqueues: number };
  summary: BenchResults['summary'];
  load: Array<{ scenario: string; run: number; busyBefore: number; load1: number }>;
}

const silent = { debug() {}, info() {}, warn() {}, error() {} };
type Store = ReturnType<typeof JobvisorPostgres.postgresStore>;

export async function keysLoad(spec: RunSpec, admin: pg.Client): Promise<RunResult> {
  const shape = spec.keysShape!;
  const { api, postgresStore } = await loadJobvisor(spec.jobvisorRoot);
  // Named after the run, as the systems' connections are: the server's CPU is counted by it.
  const store = postgresStore({ connectionString: systemConnectionString(spec.connectionString, spec.schema), schema: spec.schema });
  await store.migrate();
  try {
    if (shape === 'drain-off' || shape === 'drain-on') return await drain(spec, admin, api, store, shape === 'drain-on');
    return await enqueueOneByOne(spec, admin, store, shape);
  } finally {
    await store.close();
  }
}

/** The window around `work`: wall time and this process's CPU per job, and the server's cost
 *  (its metrics named with `prefix`, server-cost.ts). */
async function measured(spec: RunSpec, admin: pg.Client, prefix: '' | 'enqueue', jobs: number, work: () => Promise<void>): Promise<Record<string, number>> {
  await admin.query('checkpoint');
  globalThis.gc?.();
  const server = await openServerWindow(admin, spec.schema, prefix);
  server.markCpu();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await work();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const name = (metric: string) => (prefix ? `${prefix}${metric[0]!.toUpperCase()}${metric.slice(1)}` : metric);
  return {
    [name('ms')]: ms,
    [name('usPerJob')]: (ms * 1000) / jobs,
    [name('cpuPerJobUs')]: (cpu.user + cpu.system) / jobs,
    ...(await server.close(jobs)),
  };
}

async function drain(spec: RunSpec, admin: pg.Client, api: typeof JobvisorApi, store: Store, fair: boolean): Promise<RunResult> {
  const perTenant = Math.max(1, Math.round(spec.jobs / KEYS_TENANTS));
  const jobs = perTenant * KEYS_TENANTS;
  let handled = 0;
  const queue = api.defineQueue('bench', {
    concurrency: spec.concurrency ?? KEYS_CONCURRENCY,
    ...(fair ? { fairShare: true } : {}),
    handlers: { noop: async () => void (handled += 1) },
  });
  const job = (queueName: string, t: number): EnqueueJob => ({
    queue: queueName, kind: 'noop', payload: {}, maxAttempts: 3, ...(fair ? { fairShare: { tenant: `t${t}`, weight: 1 } } : {}),
  });
  // The tenants interleaved, as many sources enqueue at once; a tenant's own jobs in order.
  const backlog = Array.from({ length: jobs }, (_, i) => job('bench', i % KEYS_TENANTS));
  // A warm-up call of the same kind, to a queue no worker serves: statements planned, pool open.
  await store.enqueueJobs({ jobs: Array.from({ length: WARMUP }, (_, i) => job('warm-up', i % KEYS_TENANTS)) });
  const enqueue = await measured(spec, admin, 'enqueue', jobs, async () => {
    for (let i = 0; i < jobs; i += ENQUEUE_CHUNK) await store.enqueueJobs({ jobs: backlog.slice(i, i + ENQUEUE_CHUNK) });
  });
  await admin.query(`analyze "${spec.schema}".jobs`);
  const supervisor = api.createSupervisor({ store, queues: [queue], logger: silent });
  try {
    const run = await measured(spec, admin, '', jobs, async () => {
      await supervisor.start();
      // Counted here, then one look at the table: polling a count of 10,000 rows every few ms
      // would load the server the drain is measured on.
      while (handled < jobs) await sleep(5);
      for (;;) {
        const { rows } = await admin.query<{ n: number }>(`select count(*)::int as n from "${spec.schema}".jobs where queue = 'bench' and state <> 'completed'`);
        if (rows[0]!.n === 0) break;
        await sleep(5);
      }
    });
    return { metrics: { jobs, tenants: KEYS_TENANTS, jobsPerSec: jobs / (run.ms! / 1000), ...run, ...enqueue } };
  } finally {
    await supervisor.stop({ graceMs: 10_000 });
  }
}

async function enqueueOneByOne(spec: RunSpec, admin: pg.Client, store: Store, shape: Exclude<KeysShape, 'drain-off' | 'drain-on'>): Promise<RunResult> {
  const job = (i: number): EnqueueJob => ({
    queue: 'bench', kind: 'noop', payload: { i }, maxAttempts: 3,
    ...(shape === 'enqueue-debounce-one-key' ? { debounce: { key: 'k', delayMs: 60_000 } } : {}),
    ...(shape === 'enqueue-debounce-key-each' ? { debounce: { key: `k${i}`, delayMs: 60_000 } } : {}),
    ...(shape === 'enqueue-fair' ? { fairShare: { tenant: `t${(i + KEYS_TENANTS) % KEYS_TENANTS}`, weight: 1 } } : {}),
  });
  for (let i = 0; i < WARMUP; i++) await store.enqueueJobs({ jobs: [job(-i - 1)] });
  const metrics = await measured(spec, admin, '', spec.jobs, async () => {
    for (let i = 0; i < spec.jobs; i++) await store.enqueueJobs({ jobs: [job(i)] });
  });
  return { metrics: { jobs: spec.jobs, ...metrics } };
}
