/**
 * What the scenarios need from a job system. One adapter per system hides its API; every
 * scenario drives the three the same way, through public API calls only.
 */
export const SYSTEM_NAMES = ['jobvisor', 'graphile-worker', 'pg-boss'] as const;
export type SystemName = (typeof SYSTEM_NAMES)[number];

export interface WorkerOptions {
  concurrency: number;
  /** Runs at the start of each job's handler; the handler awaits what it returns. */
  onJob: () => void | Promise<void>;
}

export interface BenchSystem {
  readonly name: SystemName;
  /** Creates the system's tables in the run's fresh schema. */
  setup(): Promise<void>;
  /** `count` no-op jobs in one bulk API call. */
  enqueueMany(count: number): Promise<void>;
  /** One job through the single-job API. */
  enqueueOne(): Promise<void>;
  /** Starts a worker with these settings; resolves once it is running. */
  startWorker(options: WorkerOptions): Promise<void>;
  stopWorker(): Promise<void>;
  /** How many of the jobs enqueued so far the database holds as completed. */
  completedCount(): Promise<number>;
  close(): Promise<void>;
}

export interface SystemContext {
  connectionString: string;
  /** Fresh for each run; the parent drops it when the run's process has exited. */
  schema: string;
  /** The checkout whose src/ is benchmarked as jobvisor. */
  jobvisorRoot: string;
}

/** The settings each system runs with, for the report. */
export const SYSTEM_SETTINGS: Record<SystemName, string> = {
  jobvisor:
    'defaults: `postgresStore({ connectionString, schema })` (pg pool of 10), one queue with ' +
    '`concurrency: c`, `createSupervisor({ store, queues, logger: silent })`; every job an ' +
    'XState actor, every transition written with its history row',
  'graphile-worker':
    '`run({ pgPool, concurrency: c, noHandleSignals: true, preset: { worker: { localQueue: ' +
    '{ size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } } })`, pool of ' +
    'max(10, c + 2) as its docs advise; enqueue through `makeWorkerUtils` `addJobs` / `addJob`',
  'pg-boss':
    '`new PgBoss({ connectionString, schema, useListenNotify: true })`, queue created with ' +
    '`{ notify: true }`, `work(name, { batchSize: c, burstWhenBatchFull: true }, handler)` ' +
    '(one fetch loop taking c jobs at a time, the batch run concurrently); enqueue through ' +
    '`insert` / `send`',
};
