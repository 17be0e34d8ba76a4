/**
 * The steady scenario's enqueuer (steady-load.ts forks it): a process of its own, so that its
 * CPU and its statements stay out of the worker's figures. Open loop (open-loop.ts): one job a
 * call through the public single-job API (`queue.enqueue`), at most MAX_IN_FLIGHT at once (the
 * store's pool); the rate held is what `done` counts. Its connections carry an
 * application_name of their own (server-cost.ts, `enqueuerConnectionString`), so that the
 * server's CPU for them is counted apart from the worker's.
 *
 * Messages from the parent: 'start'; 'snapshot' (answered with the counters so far and the
 * enqueue call times since the last snapshot); 'stop' (answered once every call has returned
 * and the store is closed).
 */
import type * as JobvisorApi from '../../src/index.js';
import { countQueries, queryCount } from './query-counter.js';
import { enqueuerConnectionString } from './server-cost.js';
import { loadJobvisor } from './jobvisor-root.js';
import { openLoop } from './open-loop.js';

export interface EnqueuerSpec {
  connectionString: string;
  schema: string;
  jobvisorRoot: string;
  rate: number;
  /** The payload's filler, the same string for every job. */
  pad: string;
}

export type EnqueuerRequest = { type: 'start' } | { type: 'snapshot' } | { type: 'stop' };

export interface EnqueuerSnapshot {
  type: 'snapshot';
  /** Calls issued, returned and failed since 'start'. */
  issued: number;
  done: number;
  failed: number;
  firstError?: string;
  statements: number;
  cpuUs: number;
  /** Durations of the calls that returned since the previous snapshot (ms). */
  callMs: number[];
  /** How far behind the schedule the calls are (ms): 0 while the rate is kept. */
  lagMs: number;
}

export type EnqueuerMessage = EnqueuerSnapshot | { type: 'ready' } | { type: 'stopped' };

/** The store's default pool. */
const MAX_IN_FLIGHT = 10;

const spec = JSON.parse(process.argv[2] ?? '') as EnqueuerSpec;
const send = (message: EnqueuerMessage) => process.send?.(message);

countQueries(spec.jobvisorRoot);
const { api, postgresStore } = await loadJobvisor(spec.jobvisorRoot);
const store = postgresStore({ connectionString: enqueuerConnectionString(spec.connectionString, spec.schema), schema: spec.schema });
// No handlers: this process only enqueues to the queue the worker serves.
const queue = api.defineQueue('bench', { handlers: {} as Record<'work', (job: JobvisorApi.Job) => Promise<void>> });

let done = 0;
let failed = 0;
let firstError: string | undefined;
let callMs: number[] = [];
const cpu0 = process.cpuUsage();

const loop = openLoop(spec.rate, MAX_IN_FLIGHT, () => {
  const started = performance.now();
  // The enqueue's moment, comparable across processes of the machine (the handler's start is
  // taken the same way in the worker).
  return queue.enqueue(store, 'work', { at: performance.timeOrigin + started, pad: spec.pad }).then(
    () => {
      done += 1;
      callMs.push(performance.now() - started);
    },
    (error: unknown) => {
      failed += 1;
      firstError ??= error instanceof Error ? error.message : String(error);
    },
  );
});

process.on('message', (message: EnqueuerRequest) => {
  switch (message.type) {
    case 'start':
      loop.start();
      break;
    case 'snapshot': {
      const cpu = process.cpuUsage(cpu0);
      send({ type: 'snapshot', issued: loop.issued(), done, failed, ...(firstError ? { firstError } : {}), statements: queryCount.total, cpuUs: cpu.user + cpu.system, callMs, lagMs: loop.lagMs() });
      callMs = [];
      break;
    }
    case 'stop':
      void loop
        .stop()
        .then(() => store.close())
        .then(() => send({ type: 'stopped' }))
        .finally(() => process.exit());
      break;
  }
});

// One call before 'ready': the pool connected and the statement prepared on one connection.
await queue.enqueue(store, 'work', { at: performance.timeOrigin + performance.now(), pad: spec.pad });
send({ type: 'ready' });
