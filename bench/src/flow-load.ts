/**
 * What a flow costs against the same jobs without one (issue 16), jobvisor only, on one
 * supervisor at concurrency `spec.concurrency`, no-op handlers. Three shapes, each its own run:
 * - plain: `spec.jobs + 1` jobs in one `enqueueMany`, no flow: the yardstick;
 * - static: one `enqueueFlow`: a root, `spec.jobs` children that wait for it, a sink that
 *   waits for every child (`spec.jobs + 2` jobs);
 * - continue: one job whose handler fans out `spec.jobs` children (`continueAfter`) and runs
 *   again once they have all ended (`spec.jobs + 1` rows, one more execution).
 * After a warm-up of the same shape at a tenth of the width, the window runs from the enqueue
 * call until the last job is completed in the database: end to end, enqueue included.
 * Statements: every `pg` query of the process in the window, the bench's own polls left out.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import type * as JobvisorApi from '../../src/index.js';
import { queryCount } from './query-counter.js';
import type { BenchResults } from './results.js';
import type { RunResult, RunSpec } from './run-spec.js';
import { openServerWindow, systemConnectionString } from './server-cost.js';
import { loadJobvisor } from './jobvisor-root.js';

export const FLOW_SHAPES = ['plain', 'static', 'continue'] as const;
export type FlowShape = (typeof FLOW_SHAPES)[number];
export const FLOW_WIDTH = 1_000;
export const FLOW_CONCURRENCY = 50;
export const flowScenario = (shape: FlowShape) => `flows-${shape}`;

/** bench/results/flows.json: the last flows-only run, for BENCHMARKS.md. */
export interface FlowResults {
  startedAt: string;
  runs: number;
  machine: BenchResults['machine'];
  versions: BenchResults['versions'];
  summary: BenchResults['summary'];
  /** Each run's machine load just before it: share of the CPUs other processes kept busy, and load1. */
  load: Array<{ scenario: string; run: number; busyBefore: number; load1: number }>;
}

const silent = { debug() {}, info() {}, warn() {}, error() {} };

export async function flowLoad(spec: RunSpec, admin: pg.Client): Promise<RunResult> {
  const shape = spec.flowShape!;
  const width = spec.jobs;
  const { api, postgresStore } = await loadJobvisor(spec.jobvisorRoot);
  // Named after the run, as the systems' connections are: the server's CPU is counted by it.
  const store = postgresStore({ connectionString: systemConnectionString(spec.connectionString, spec.schema), schema: spec.schema });
  await store.migrate();

  /** Resolved when the handler of the round's last job has run (its row written soon after). */
  let lastRan: (() => void) | undefined;
  let plainLeft = 0;
  const queue = api.defineQueue('fan', {
    concurrency: spec.concurrency ?? FLOW_CONCURRENCY,
    handlers: {
      noop: async () => {
        if (shape === 'plain' && --plainLeft === 0) lastRan?.();
      },
      sink: async () => {
        lastRan?.();
      },
      fan: async (job: JobvisorApi.Job<{ width: number }>) => {
        const children = await job.children();
        if (Object.keys(children).length === 0) {
          return job.continueAfter(
            Object.fromEntries(Array.from({ length: job.payload.width }, (_, i) => [`c${i}`, { queue: 'fan', kind: 'noop', payload: {} }])),
          );
        }
        lastRan?.();
        return { children: Object.keys(children).length };
      },
    },
  });
  const supervisor = api.createSupervisor({ store, queues: [queue], logger: silent });
  await supervisor.start();

  /** Enqueues one round of the shape; answers how many rows it makes. */
  const enqueue = async (n: number): Promise<number> => {
    switch (shape) {
      case 'plain': {
        plainLeft = n + 1;
        await queue.enqueueMany(store, Array.from({ length: n + 1 }, () => ({ kind: 'noop' as const, payload: {} })));
        return n + 1;
      }
      case 'static': {
        const children = Object.fromEntries(Array.from({ length: n }, (_, i) => [`c${i}`, api.flowJob(queue, 'noop', {}, { dependsOn: ['root'] })]));
        const flow = api.defineFlow('fan', {
          root: api.flowJob(queue, 'noop', {}),
          ...children,
          sink: api.flowJob(queue, 'sink', {}, { dependsOn: Object.keys(children) }),
        });
        await api.enqueueFlow(store, flow);
        return n + 2;
      }
      case 'continue': {
        await queue.enqueue(store, 'fan', { width: n });
        return n + 1;
      }
    }
  };
  let polls = 0;
  /** The last round's enqueue call: the static flow's is one statement that inserts row by row. */
  let enqueueMs = 0;
  /** One round: enqueued, then done when the last job's handler has run and no job of the
   *  schema is left unfinished (polled every 2 ms). */
  const round = async (n: number) => {
    const ran = new Promise<void>((resolve) => (lastRan = resolve));
    const t0 = performance.now();
    const rows = await enqueue(n);
    enqueueMs = performance.now() - t0;
    await ran;
    for (;;) {
      polls += 1;
      const { rows: left } = await admin.query<{ n: number }>(`select count(*)::int as n from "${spec.schema}".jobs where state <> 'completed'`);
      if (left[0]!.n === 0) return rows;
      await sleep(2);
    }
  };

  try {
    await round(Math.max(10, Math.round(width / 10)));
    await admin.query('checkpoint');
    globalThis.gc?.();
    const server = await openServerWindow(admin, spec.schema, '');
    server.markCpu();
    polls = 0;
    const queries0 = queryCount.total;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const rows = await round(width);
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const statements = queryCount.total - queries0 - polls;
    const serverCost = await server.close(rows);
    return {
      metrics: {
        jobs: rows,
        ms,
        enqueueMs,
        jobsPerSec: rows / (ms / 1000),
        statementsPer1kJobs: (statements / rows) * 1000,
        cpuPerJobUs: (cpu.user + cpu.system) / rows,
        ...serverCost,
      },
    };
  } finally {
    await supervisor.stop({ graceMs: 10_000 });
    await store.close();
  }
}
