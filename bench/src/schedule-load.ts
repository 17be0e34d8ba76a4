/**
 * What schedules cost a supervisor (issue 17): `spec.jobs` schedules on one supervisor on
 * Postgres, the ticks' queue not run (only the scheduler works).
 * - idle: schedules whose next tick is a year away; CPU per second over IDLE_S.
 * - ticking: schedules that all tick together every `periodS` seconds (1 s for 1,000,
 *   5 s for 10,000: each tick is a job insert, and 10,000 a second is about what this
 *   machine's PostgreSQL inserts at all); CPU per second and event-loop delay over TICK_S.
 *   Then ticks missed: every tick of the window, for every schedule, must have its job
 *   within CATCH_UP_S after the window (late is not missed: the lag says how late), and how
 *   late ticks were enqueued (created_at − run_at, both the database's clock).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import type * as JobvisorApi from '../../src/index.js';
import type { BenchResults } from './results.js';
import type { RunResult, RunSpec } from './run-spec.js';
import { percentile } from './stats.js';
import { loadJobvisor } from './jobvisor-root.js';

export const IDLE_S = 10;
export const TICK_S = 20;
export const CATCH_UP_S = 30;
const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** Schedules per run: one scenario each. */
export const SCHEDULE_COUNTS = [1_000, 10_000];
/** Seconds between the ticks of each count's schedules. */
export const tickPeriodS = (count: number) => (count > 1_000 ? 5 : 1);
export const scheduleScenario = (count: number) => `schedules-${count / 1_000}k`;

/** bench/results/schedules.json: the last schedules-only run, for BENCHMARKS.md. */
export interface ScheduleResults {
  startedAt: string;
  runs: number;
  machine: BenchResults['machine'];
  versions: BenchResults['versions'];
  summary: BenchResults['summary'];
}

export async function scheduleLoad(spec: RunSpec, admin: pg.Client): Promise<RunResult> {
  const { api, postgresStore } = await loadJobvisor(spec.jobvisorRoot);
  const store = postgresStore({ connectionString: spec.connectionString, schema: spec.schema });
  await store.migrate();
  const ticks = api.defineQueue('ticks', { handlers: { tick: async () => {} } });
  const idleQueue = api.defineQueue('idle', { handlers: { none: async () => {} } });
  const schedules = (prefix: string, cron: string) =>
    Array.from({ length: spec.jobs }, (_, i) => api.defineSchedule({ name: `${prefix}${i}`, cron, queue: ticks, kind: 'tick', payload: { i } }));
  const supervise = async (list: JobvisorApi.Schedule[], seconds: number) => {
    const supervisor = api.createSupervisor({ store, queues: [idleQueue], schedules: list, logger: silent });
    await supervisor.start();
    await sleep(2_000); // registered, first statements planned
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const cpu0 = process.cpuUsage();
    const from = await dbNow(admin);
    await sleep(seconds * 1_000);
    const used = process.cpuUsage(cpu0);
    const until = await dbNow(admin);
    delay.disable();
    return { supervisor, from, until, cpuMsPerS: (used.user + used.system) / 1_000 / seconds, delay };
  };
  try {
    const idle = await supervise(schedules('yearly-', '0 0 1 1 *'), IDLE_S);
    await idle.supervisor.stop({ graceMs: 0 });

    const periodMs = tickPeriodS(spec.jobs) * 1_000;
    const tick = await supervise(schedules('ticking-', periodMs === 1_000 ? '* * * * * *' : `*/${periodMs / 1_000} * * * * *`), TICK_S);
    // The ticks strictly inside the window: every schedule has a job at each.
    const first = Math.ceil(tick.from.getTime() / periodMs) * periodMs;
    const last = Math.floor(tick.until.getTime() / periodMs) * periodMs;
    const expected = ((last - first) / periodMs + 1) * spec.jobs;
    const windowJobs = () =>
      admin.query<{ lag_ms: number }>(
        `select extract(epoch from created_at - run_at) * 1000 as lag_ms from "${spec.schema}".jobs
         where queue = 'ticks' and run_at between $1 and $2`,
        [new Date(first), new Date(last)],
      );
    const deadline = performance.now() + CATCH_UP_S * 1_000;
    let { rows } = await windowJobs();
    while (rows.length < expected && performance.now() < deadline) {
      await sleep(250);
      ({ rows } = await windowJobs());
    }
    await tick.supervisor.stop({ graceMs: 0 });
    const lags = rows.map((r) => Number(r.lag_ms));
    return {
      metrics: {
        schedules: spec.jobs,
        tickPeriodS: periodMs / 1_000,
        idleCpuMsPerS: idle.cpuMsPerS,
        tickCpuMsPerS: tick.cpuMsPerS,
        loopDelayP99Ms: tick.delay.percentile(99) / 1e6,
        loopDelayMaxMs: tick.delay.max / 1e6,
        ticksExpected: expected,
        ticksMissed: expected - rows.length,
        tickLagP50Ms: percentile(lags, 50),
        tickLagP99Ms: percentile(lags, 99),
      },
    };
  } finally {
    await store.close();
  }
}

async function dbNow(admin: pg.Client): Promise<Date> {
  return (await admin.query<{ now: Date }>('select clock_timestamp() as now')).rows[0]!.now;
}
