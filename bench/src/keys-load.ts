/**
 * What fair share and debounce cost (issue 28), jobvisor only, on PostgreSQL:
 * - drain: `TENANTS` tenants with `PER_TENANT` jobs each, all queued, drained by one supervisor
 *   at concurrency `CONCURRENCY` with no-op handlers; with `fairShare` on (every job ranked
 *   for its tenant, the fair claim) against off (the same jobs, no tenants, the plain claim).
 *   From the supervisor's start until the last job is completed: jobs/s, and the Postgres CPU
 *   of the store's own backends per job (server-cost.ts).
 * - enqueue: `ENQUEUES` enqueues one after another, one job each: plain, debounced on one key
 *   (every enqueue after the first rewrites the burst's job), and debounced on a key each (each
 *   one a new burst): µs per enqueue, and Postgres CPU per enqueue.
 * Each figure the median of `RUNS` runs, each on a fresh schema.
 *
 *   npx tsx bench/src/keys-load.ts   (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test)
 *
 * Writes bench/results/keys.json, which BENCHMARKS.md's "Fair share and debounce" quotes.
 */
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { postgresStore } from '../../src/adapters/postgres/index.js';
import type { EnqueueJob } from '../../src/adapters/store.js';
import { createSupervisor, defineQueue } from '../../src/index.js';
import { openServerWindow, systemConnectionString } from './server-cost.js';

const URL_ = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const TENANTS = 100;
const PER_TENANT = 100;
const CONCURRENCY = 10;
const ENQUEUES = 2_000;
const RUNS = Number(process.env.KEYS_BENCH_RUNS ?? 3);
const silent = { debug() {}, info() {}, warn() {}, error() {} };

const admin = new pg.Client({ connectionString: URL_ });
await admin.connect();
let schemas = 0;

async function fresh() {
  const schema = `jvb_keys_${process.pid}_${++schemas}`;
  const store = postgresStore({ connectionString: systemConnectionString(URL_, schema), schema });
  await store.migrate();
  return { schema, store };
}

async function drain(fair: boolean): Promise<{ jobsPerS: number; pgCpuPerJobUs: number }> {
  const { schema, store } = await fresh();
  const queue = defineQueue('bench', { concurrency: CONCURRENCY, ...(fair ? { fairShare: true } : {}), handlers: { noop: async () => {} } });
  const jobs: EnqueueJob[] = [];
  for (let i = 0; i < PER_TENANT; i++) {
    for (let t = 0; t < TENANTS; t++) {
      jobs.push({ queue: 'bench', kind: 'noop', payload: {}, maxAttempts: 3, ...(fair ? { fairShare: { tenant: `t${t}`, weight: 1 } } : {}) });
    }
  }
  for (let i = 0; i < jobs.length; i += 1_000) await store.enqueueJobs({ jobs: jobs.slice(i, i + 1_000) });
  await admin.query(`analyze "${schema}".jobs`);
  await admin.query('checkpoint');
  const server = await openServerWindow(admin, schema, '');
  const supervisor = createSupervisor({ store, queues: [queue], logger: silent });
  server.markCpu();
  const t0 = performance.now();
  await supervisor.start();
  for (;;) {
    const { rows } = await admin.query<{ n: number }>(`select count(*)::int as n from "${schema}".jobs where state <> 'completed'`);
    if (rows[0]!.n === 0) break;
    await sleep(5);
  }
  const ms = performance.now() - t0;
  const cost = await server.close(jobs.length);
  await supervisor.stop();
  await store.close();
  await admin.query(`drop schema "${schema}" cascade`);
  return { jobsPerS: (jobs.length * 1000) / ms, pgCpuPerJobUs: cost.pgCpuPerJobUs! };
}

type EnqueueShape = 'plain' | 'debounce-one-key' | 'debounce-key-each';

async function enqueueCost(shape: EnqueueShape): Promise<{ usPerEnqueue: number; pgCpuPerEnqueueUs: number }> {
  const { schema, store } = await fresh();
  const job = (i: number): EnqueueJob => ({
    queue: 'bench', kind: 'noop', payload: { i }, maxAttempts: 3,
    ...(shape === 'plain' ? {} : { debounce: { key: shape === 'debounce-one-key' ? 'k' : `k${i}`, delayMs: 60_000 } }),
  });
  for (let i = 0; i < 100; i++) await store.enqueueJobs({ jobs: [job(-i - 1)] }); // warm-up
  await admin.query('checkpoint');
  const server = await openServerWindow(admin, schema, '');
  server.markCpu();
  const t0 = performance.now();
  for (let i = 0; i < ENQUEUES; i++) await store.enqueueJobs({ jobs: [job(i)] });
  const ms = performance.now() - t0;
  const cost = await server.close(ENQUEUES);
  await store.close();
  await admin.query(`drop schema "${schema}" cascade`);
  return { usPerEnqueue: (ms * 1000) / ENQUEUES, pgCpuPerEnqueueUs: cost.pgCpuPerJobUs! };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const summary = (runs: Array<Record<string, number>>) =>
  Object.fromEntries(Object.keys(runs[0]!).map((k) => [k, { median: median(runs.map((r) => r[k]!)), min: Math.min(...runs.map((r) => r[k]!)), max: Math.max(...runs.map((r) => r[k]!)) }]));

const results: Record<string, unknown> = { startedAt: new Date().toISOString(), runs: RUNS, load1Before: loadavg()[0], tenants: TENANTS, perTenant: PER_TENANT, concurrency: CONCURRENCY, enqueues: ENQUEUES };
const drains: Record<string, Array<Record<string, number>>> = { off: [], on: [] };
const enqueues: Record<EnqueueShape, Array<Record<string, number>>> = { plain: [], 'debounce-one-key': [], 'debounce-key-each': [] };
for (let run = 0; run < RUNS; run++) {
  // Alternated, so that a change in the machine's load falls on both sides.
  for (const fair of run % 2 === 0 ? [false, true] : [true, false]) drains[fair ? 'on' : 'off']!.push(await drain(fair));
  for (const shape of Object.keys(enqueues) as EnqueueShape[]) enqueues[shape].push(await enqueueCost(shape));
  console.log(`run ${run + 1}/${RUNS}`, JSON.stringify({ drains, enqueues }));
}
results.drain = { off: summary(drains.off!), on: summary(drains.on!) };
results.enqueue = Object.fromEntries(Object.entries(enqueues).map(([k, v]) => [k, summary(v)]));
results.load1After = loadavg()[0];
await writeFile(new URL('../results/keys.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
console.log(JSON.stringify(results, null, 2));
await admin.end();
