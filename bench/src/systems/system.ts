/**
 * What the scenarios need from a job system. One adapter per system hides its API; every
 * scenario drives the three the same way, through public API calls only.
 */
export const SYSTEM_NAMES = ['jobvisor', 'graphile-worker', 'pg-boss'] as const;
export type SystemName = (typeof SYSTEM_NAMES)[number];

export interface WorkerOptions {
  concurrency: number;
  /**
   * 'single' (default): one queue. 'multi': the busy queue the jobs are enqueued on, beside
   * three queues that stay empty, each with the same concurrency; where the system has named
   * limits shared across queues (jobvisor's gates), one of size `concurrency` is shared by
   * the busy queue and one idle queue.
   */
  layout?: 'single' | 'multi';
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
  /** For the system's own connections: their backends are the run's (server-cost.ts). */
  connectionString: string;
  /** For the bench's counting reads, which are not the system's cost. */
  readerConnectionString: string;
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
    'XState actor, every transition written with its history row; multi-queue: queues `idle-1` … ' +
    '`idle-3` beside it with the same concurrency, gate `shared` of size c on `bench` and `idle-1`',
  'graphile-worker':
    '`run({ pgPool, concurrency: c, noHandleSignals: true, preset: { worker: { localQueue: ' +
    '{ size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } } })`, pool of ' +
    'max(10, c + 2) as its docs advise; enqueue through `makeWorkerUtils` `addJobs` / `addJob`; ' +
    'multi-queue: three more task identifiers in the same worker (its queues are serial queues, and it has no ' +
    'limit shared across them)',
  'pg-boss':
    '`new PgBoss({ connectionString, schema, useListenNotify: true })`, queue created with ' +
    '`{ notify: true }`, `work(name, { batchSize: c, burstWhenBatchFull: true }, handler)` ' +
    '(one fetch loop taking c jobs at a time, the batch run concurrently); enqueue through ' +
    '`insert` / `send`; multi-queue: three more queues, each with its own `work()` of the same ' +
    'batch size (no limit shared across queues)',
};
