/**
 * The measurements, the same code for every system. Each runs in its own process on a fresh
 * schema (see child.ts); timings use performance.now(), CPU process.cpuUsage().
 */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { actorFloor } from './actor-floor.js';
import { durableLoad } from './durable-load.js';
import { flowLoad } from './flow-load.js';
import { keysLoad } from './keys-load.js';
import { scheduleLoad } from './schedule-load.js';
import { steadyLoad } from './steady-load.js';
import type { RunResult, RunSpec } from './run-spec.js';
import { queryCount } from './query-counter.js';
import { newSample, pathSplit, type PathMarks } from './latency-path.js';
import { openServerWindow } from './server-cost.js';
import { percentile } from './stats.js';
import type { BenchSystem } from './systems/system.js';

/** Largest bulk call when building a backlog (bulk enqueue itself is one call). */
const ENQUEUE_CHUNK = 20_000;

export async function runScenario(spec: RunSpec, sys: BenchSystem, admin: pg.Client): Promise<RunResult> {
  await sys.setup();
  switch (spec.kind) {
    case 'enqueue':
      return bulkEnqueue(spec, sys, admin);
    case 'drain':
    case 'profile':
      return drain(spec, sys, admin);
    case 'latency':
      return latency(spec, sys);
    case 'memory':
      return memory(spec, sys, admin);
    case 'actor':
      return actorFloor(spec);
    case 'schedules':
      return scheduleLoad(spec, admin);
    case 'flows':
      return flowLoad(spec, admin);
    case 'durable':
      return durableLoad(spec, admin);
    case 'keys':
      return keysLoad(spec, admin);
    case 'steady':
      return steadyLoad(spec, admin);
  }
}

async function bulkEnqueue(spec: RunSpec, sys: BenchSystem, admin: pg.Client): Promise<RunResult> {
  // A small call first: the pool is connected and the statement planned, as in a live app.
  await sys.enqueueMany(spec.warmup ?? 100);
  await settle(admin);
  const server = await openServerWindow(admin, spec.schema, 'enqueue');
  const t0 = performance.now();
  await sys.enqueueMany(spec.jobs);
  const ms = performance.now() - t0;
  return { metrics: { jobsPerSec: spec.jobs / (ms / 1000), ms, ...(await server.close(spec.jobs)) } };
}

/**
 * Warm up (a small batch through a first worker, then stopped), enqueue the backlog, then
 * time a fresh worker from its first handler's start until the database holds `measure`
 * more jobs completed. CPU is the whole process over that window: the worker, plus this
 * loop's counting queries once every handler has run.
 */
async function drain(spec: RunSpec, sys: BenchSystem, admin: pg.Client): Promise<RunResult> {
  const concurrency = spec.concurrency ?? 10;
  const layout = spec.layout ?? 'single';
  const warmup = spec.warmup ?? 1_000;
  const measure = spec.measure ?? spec.jobs;

  if (warmup > 0) {
    await sys.enqueueMany(warmup);
    await sys.startWorker({ concurrency, layout, onJob: () => {} });
    await until(async () => (await sys.completedCount()) >= warmup, 20, 120_000, 'warm-up jobs');
    await sys.stopWorker();
  }
  await settle(admin);
  const enqueueServer = await openServerWindow(admin, spec.schema, 'backlogEnqueue');
  const enqueueStart = performance.now();
  for (let left = spec.jobs; left > 0; left -= ENQUEUE_CHUNK) await sys.enqueueMany(Math.min(ENQUEUE_CHUNK, left));
  const enqueueMs = performance.now() - enqueueStart;
  const enqueueCost = await enqueueServer.close(spec.jobs);
  await settle(admin);

  // The window opens when the first handler starts: a worker's start-up (graphile-worker
  // checks its migrations, ~100 ms) is a one-off, not throughput.
  let handled = 0;
  let firstStart = 0;
  let cpu0 = process.cpuUsage();
  let queries0 = 0;
  const allHandled = deferred<void>();
  const onJob = () => {
    handled += 1;
    if (handled === 1) {
      server.markCpu();
      firstStart = performance.now();
      cpu0 = process.cpuUsage();
      queries0 = queryCount.total;
    }
    if (handled === measure) allHandled.resolve();
  };
  const profiler = spec.kind === 'profile' ? await startProfiler() : undefined;
  // WAL from before the worker starts (its first claim precedes the first handler); server
  // CPU from the first handler's start, as the worker's own CPU.
  const server = await openServerWindow(admin, spec.schema, '');
  const t0 = performance.now();
  await sys.startWorker({ concurrency, layout, onJob });
  await withTimeout(allHandled.promise, 400_000, `${measure} handlers to run`);
  const handlersMs = performance.now() - firstStart;
  let polls = 0;
  await until(async () => (polls++, (await sys.completedCount()) >= warmup + measure), 2, 120_000, 'completions');
  const ms = performance.now() - firstStart;
  const cpu = process.cpuUsage(cpu0);
  // Statements the worker sent in the window; the polls above are the bench's own.
  const statements = queryCount.total - queries0 - polls;
  const serverCost = await server.close(measure);
  const profile = await profiler?.stop();
  await sys.stopWorker();
  if (profile && spec.profileOut) await writeFile(spec.profileOut, JSON.stringify(profile));

  const cpuUs = cpu.user + cpu.system;
  return {
    metrics: {
      jobsPerSec: measure / (ms / 1000),
      ms,
      handlersMs,
      startupMs: firstStart - t0,
      cpuPerJobUs: cpuUs / measure,
      cpuUserPerJobUs: cpu.user / measure,
      cpuSystemPerJobUs: cpu.system / measure,
      statementsPer1kJobs: (statements / measure) * 1000,
      enqueueMs,
      ...serverCost,
      ...enqueueCost,
      // A job's whole life on the server: its share of the backlog's bulk enqueue, then its run.
      lifeWalBytesPerJob: serverCost.walBytesPerJob! + enqueueCost.backlogEnqueueWalBytesPerJob!,
      lifePgCpuPerJobUs: serverCost.pgCpuPerJobUs! + enqueueCost.backlogEnqueuePgCpuPerJobUs!,
    },
  };
}

/** Enqueue one job on an idle worker and time until its handler starts; one at a time. */
async function latency(spec: RunSpec, sys: BenchSystem): Promise<RunResult> {
  const samples = spec.samples ?? 200;
  const warmup = spec.warmup ?? 20;
  let started: ((at: number) => void) | undefined;
  await sys.startWorker({
    concurrency: spec.concurrency ?? 10,
    onJob: () => {
      const resolve = started;
      started = undefined;
      resolve?.(performance.now());
    },
  });
  await sleep(300);
  const latencies: number[] = [];
  const split: { t0: number; start: number; marks: PathMarks }[] = [];
  for (let i = 0; i < warmup + samples; i++) {
    const handlerStart = new Promise<number>((resolve) => (started = resolve));
    const marks = newSample();
    const t0 = performance.now();
    await sys.enqueueOne();
    const at = await withTimeout(handlerStart, 10_000, 'a job to start');
    if (i >= warmup) {
      latencies.push(at - t0);
      split.push({ t0, start: at, marks });
    }
    // Let the completion be written and the worker go idle again.
    await sleep(20);
  }
  await sys.stopWorker();
  return {
    metrics: {
      p50Ms: percentile(latencies, 50),
      p95Ms: percentile(latencies, 95),
      p99Ms: percentile(latencies, 99),
      maxMs: Math.max(...latencies),
      meanMs: latencies.reduce((a, b) => a + b, 0) / latencies.length,
      ...pathSplit(split),
    },
  };
}

/** `jobs` handlers running at once: each waits until all have started. Peak memory is
 *  sampled every 5 ms from the worker's start until the last completion is written. */
async function memory(spec: RunSpec, sys: BenchSystem, admin: pg.Client): Promise<RunResult> {
  const n = spec.jobs;
  await sys.enqueueMany(n);
  await settle(admin);
  globalThis.gc?.();
  const base = process.memoryUsage();
  let peakRss = base.rss;
  let peakHeap = base.heapUsed;
  const sample = () => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  };
  const sampler = setInterval(sample, 5);
  let handled = 0;
  const allStarted = deferred<void>();
  const release = deferred<void>();
  const t0 = performance.now();
  await sys.startWorker({
    concurrency: spec.concurrency ?? n,
    onJob: () => {
      handled += 1;
      if (handled === n) allStarted.resolve();
      return release.promise;
    },
  });
  await withTimeout(allStarted.promise, 120_000, `${n} jobs to start`);
  const startAllMs = performance.now() - t0;
  sample();
  const atAllStarted = process.memoryUsage();
  // What the jobs in flight hold, their garbage collected: the peak also counts what a
  // collection would free.
  globalThis.gc?.();
  const retained = process.memoryUsage().heapUsed;
  release.resolve();
  await until(async () => (await sys.completedCount()) >= n, 5, 120_000, 'completions');
  const ms = performance.now() - t0;
  clearInterval(sampler);
  sample();
  await sys.stopWorker();
  const mb = (bytes: number) => bytes / 1024 / 1024;
  return {
    metrics: {
      peakRssMb: mb(peakRss),
      peakHeapUsedMb: mb(peakHeap),
      baseRssMb: mb(base.rss),
      baseHeapUsedMb: mb(base.heapUsed),
      allStartedRssMb: mb(atAllStarted.rss),
      allStartedHeapUsedMb: mb(atAllStarted.heapUsed),
      heapPerJobKb: (peakHeap - base.heapUsed) / 1024 / n,
      retainedHeapPerJobKb: (retained - base.heapUsed) / 1024 / n,
      startAllMs,
      ms,
    },
  };
}

/** Before a measured window: flush what the setup wrote, so a checkpoint does not land in it. */
async function settle(admin: pg.Client): Promise<void> {
  await admin.query('checkpoint');
  globalThis.gc?.();
}

async function startProfiler(): Promise<{ stop(): Promise<unknown> }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  return {
    async stop() {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      return profile;
    },
  };
}

async function until(check: () => Promise<boolean>, everyMs: number, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
