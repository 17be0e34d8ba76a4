/**
 * One supervisor drains part of a large backlog on the Postgres store, in this process,
 * while we watch what it holds, its heap and its event loop:
 *
 * - held: jobs claimed whose handler has not returned (running, or prefetched and waiting
 *   for a slot), the most at any time; bounded by concurrency + maxPrefetch, whatever the
 *   backlog. Jobs whose handler returned and whose outcome is being written hold no slot:
 *   counted apart, as `writing`.
 * - heap: `heapUsed` after a full GC, sampled as the drain goes; it must not grow with the
 *   backlog (npm run load and test/reliability/load.test.ts compare two backlogs).
 * - event-loop delay: perf_hooks.monitorEventLoopDelay over the drain. On a machine busy
 *   with other work that includes time the process was simply not scheduled, so a probe also
 *   measures each gap between its 5 ms ticks in this process's own CPU time: the longest is
 *   the longest the supervisor itself kept the loop busy.
 *
 * The backlog's rows are inserted by one INSERT … SELECT, as enqueue would write them (less
 * their history rows, which claims never read): 100,000 enqueues would take far longer
 * than the drain being measured.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type pg from 'pg';
import { postgresStore } from '../../src/adapters/postgres/index.js';
import { createSupervisor, defineQueue } from '../../src/index.js';

export interface LoadOptions {
  pool: pg.Pool;
  /** A schema of the caller's own; migrated here. */
  schema: string;
  backlog: number;
  /** Jobs to finish before stopping. */
  drain: number;
  concurrency: number;
  /** Undefined: the supervisor's default. */
  maxPrefetch?: number;
  /** How many heap samples to take during the drain. */
  samples: number;
}

export interface LoadMeasurement {
  backlog: number;
  drained: number;
  durationMs: number;
  /** Most jobs claimed and not yet returned by their handler at once. */
  maxHeld: number;
  /** Most jobs whose handler returned and whose actor was not yet final (writing) at once. */
  maxWriting: number;
  /** heapUsed after a full GC, in MiB: before the supervisor started, then during the drain. */
  heapBeforeMb: number;
  heapDuringMb: number[];
  eventLoopDelayMaxMs: number;
  eventLoopDelayP99Ms: number;
  /** The longest gap between the probe's ticks, counted in this process's CPU time. */
  longestBusyMs: number;
}

const QUEUE = 'load';

export async function measureLoad(options: LoadOptions): Promise<LoadMeasurement> {
  const gc = exposeGc();
  const store = postgresStore({ pool: options.pool, schema: options.schema });
  await store.migrate();
  await options.pool.query(
    `insert into "${options.schema}".jobs (queue, kind, payload, run_at, max_attempts, created_at, updated_at)
     select $1, 'work', jsonb_build_object('n', n), now(), 3, now(), now() from generate_series(1, $2::int) as n`,
    [QUEUE, options.backlog],
  );

  let claimed = 0;
  let returned = 0;
  let finished = 0;
  let maxHeld = 0;
  let maxWriting = 0;
  const claim = store.claimJobs.bind(store);
  store.claimJobs = async (params) => {
    const jobs = await claim(params);
    claimed += jobs.length;
    maxHeld = Math.max(maxHeld, claimed - returned);
    return jobs;
  };
  const queue = defineQueue(QUEUE, {
    concurrency: options.concurrency,
    handlers: {
      work: async () => {
        await new Promise((resolve) => setImmediate(resolve));
        returned += 1;
        maxWriting = Math.max(maxWriting, returned - finished);
        return 1;
      },
    },
  });
  let reachedSample!: () => void;
  let nextSample = 0;
  const supervisor = createSupervisor({
    store,
    queues: [queue],
    pollIntervalMs: 100,
    ...(options.maxPrefetch !== undefined ? { maxPrefetch: options.maxPrefetch } : {}),
  });
  supervisor.counters.subscribe(({ context }) => {
    const q = context.queues[QUEUE]!;
    finished = q.completed + q.retrying + q.dead + q.skipped + q.cancelled + q.lost;
    if (finished >= nextSample) reachedSample?.();
  });

  const heapBeforeMb = heapAfterGc(gc);
  const heapDuringMb: number[] = [];
  const delay = monitorEventLoopDelay({ resolution: 10 });
  const busy = busyProbe();
  const started = performance.now();
  delay.enable();
  await supervisor.start();
  const step = Math.floor(options.drain / options.samples);
  for (let i = 1; i <= options.samples; i++) {
    nextSample = i * step;
    await new Promise<void>((resolve) => {
      reachedSample = resolve;
      if (finished >= nextSample) resolve();
    });
    // The forced GC blocks the loop itself: not counted as the supervisor's stall.
    delay.disable();
    busy.pause();
    heapDuringMb.push(heapAfterGc(gc));
    busy.resume();
    delay.enable();
  }
  await supervisor.stop({ graceMs: 10_000 });
  delay.disable();
  const longestBusyMs = busy.stop();
  const durationMs = performance.now() - started;
  await store.close();
  return {
    backlog: options.backlog,
    drained: finished,
    durationMs,
    maxHeld,
    maxWriting,
    heapBeforeMb,
    heapDuringMb,
    eventLoopDelayMaxMs: delay.max / 1e6,
    eventLoopDelayP99Ms: delay.percentile(99) / 1e6,
    longestBusyMs,
  };
}

/** Ticks every 5 ms; of each gap between ticks, takes the part this process spent on the CPU
 *  (never more than the gap itself, as GC threads run beside the loop). */
function busyProbe(): { pause(): void; resume(): void; stop(): number } {
  let longest = 0;
  let timer: NodeJS.Timeout | undefined;
  let last = { at: performance.now(), cpu: process.cpuUsage() };
  const tick = () => {
    const now = { at: performance.now(), cpu: process.cpuUsage() };
    const cpuMs = (now.cpu.user + now.cpu.system - last.cpu.user - last.cpu.system) / 1_000;
    longest = Math.max(longest, Math.min(cpuMs, now.at - last.at));
    last = now;
    timer = setTimeout(tick, 5);
  };
  const resume = () => {
    last = { at: performance.now(), cpu: process.cpuUsage() };
    timer = setTimeout(tick, 5);
  };
  resume();
  return {
    pause: () => clearTimeout(timer),
    resume,
    stop: () => {
      clearTimeout(timer);
      return Math.round(longest * 10) / 10;
    },
  };
}

/** Node's `gc()`, without starting node with --expose-gc. */
function exposeGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

function heapAfterGc(gc: () => void): number {
  gc();
  return Math.round((process.memoryUsage().heapUsed / 1_048_576) * 10) / 10;
}
