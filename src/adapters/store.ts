/**
 * The storage adapter interface. Every operation is one round trip with a params object;
 * every write to a claimed job is fenced by the attempt's lease token and reports, per job,
 * whether it applied. The memory store and the SQL stores (Postgres, PGlite) implement the
 * same semantics, checked by one conformance suite (test/adapters/conformance.ts).
 *
 * Time: each store reads "now" from its own clock (the memory store from an injected
 * `Clock`; the SQL stores from the database unless a clock is injected for tests).
 */
import type { ClaimedJob, JobErrorInfo, JobEvent, JobRecord, JobState } from '../types.js';

/** The structural type of a SQL client (`pg.Client`, `pg.PoolClient`, `pg.Pool`): enough
 *  to run the enqueue statement inside the caller's own open transaction. */
export interface SqlClient {
  query(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
}

export interface EnqueueJob {
  queue: string;
  kind: string;
  /** Already checked to be JSON-serialisable. */
  payload: unknown;
  /** Higher runs first. Default 0. */
  priority?: number;
  /** Not claimed before this time. Default: now. */
  runAt?: Date;
  maxAttempts: number;
  /** While a job of this queue with this key is pending, retrying or running, enqueueing
   *  another returns the existing one. */
  uniqueKey?: string | null;
}

export interface EnqueueResult {
  job: JobRecord;
  /** false when a live job with the same unique key was returned instead. */
  created: boolean;
}

export interface ClaimParams {
  workerId: string;
  leaseMs: number;
  /** How many jobs to take from each queue, at most; queues with limit 0 are skipped. */
  queues: ReadonlyArray<{ queue: string; limit: number }>;
}

export interface Lease {
  id: string;
  leaseToken: string;
}

/** The outcome of one attempt, written only while the row is `running` under its lease. */
export type JobOutcome = Lease &
  (
    | { state: 'completed'; result: unknown }
    | { state: 'retrying'; error: JobErrorInfo; runAt: Date }
    | { state: 'dead' | 'skipped' | 'cancelled'; error: JobErrorInfo }
  );

export interface ListJobsParams {
  queue?: string;
  state?: JobState;
  kind?: string;
  /** Newest first; pass the last id of a page to get the next one. */
  beforeId?: string;
  /** Default 50. */
  limit?: number;
}

export interface JobCount {
  queue: string;
  state: JobState;
  count: number;
}

export interface PruneParams {
  /** Delete completed and skipped jobs (and their history) finished before this time. */
  completedBefore?: Date;
  /** Delete dead and cancelled jobs (and their history) finished before this time. */
  deadBefore?: Date;
}

export interface StoreCapabilities {
  /** The store pushes wake-ups when jobs are enqueued (LISTEN/NOTIFY or in-process). */
  notifications: boolean;
  /** `enqueueJobs` accepts the caller's SQL client to join its transaction. */
  transactionalEnqueue: boolean;
}

export type Unsubscribe = () => Promise<void>;

export interface JobStore {
  readonly capabilities: StoreCapabilities;

  /** Inserts jobs in one statement; unique keys return the live job instead. */
  enqueueJobs(params: { jobs: readonly EnqueueJob[]; client?: SqlClient }): Promise<EnqueueResult[]>;

  /** Takes up to `limit` due jobs per queue (priority desc, runAt, id), never one that another
   *  claim holds, and leases them to the worker: state running, attempt + 1, fresh token. */
  claimJobs(params: ClaimParams): Promise<ClaimedJob[]>;

  /** Pushes each lease's expiry to now + leaseMs. Applied per lease, in input order. */
  renewLeases(params: { leases: readonly Lease[]; leaseMs: number }): Promise<boolean[]>;

  /** Writes each attempt's outcome and appends its history, fenced by lease. Applied per
   *  outcome, in input order. */
  setStatesIfRunning(params: { outcomes: readonly JobOutcome[] }): Promise<boolean[]>;

  /** The reaper: every running job whose lease expired goes to `retrying` (attempts left) or
   *  `dead` (attempts spent), with error code `lease_expired`. Returns the rescued rows. */
  rescueExpiredJobs(): Promise<JobRecord[]>;

  /** A pending or retrying job becomes `cancelled`. A running one is left to its worker
   *  (the result says `cancelled: false`). */
  cancelJob(params: { id: string }): Promise<{ job: JobRecord; cancelled: boolean } | null>;

  /** A dead, cancelled or skipped job goes back to `pending`, with at least one attempt left. */
  retryJob(params: { id: string }): Promise<{ job: JobRecord; retried: boolean } | null>;

  getJob(params: { id: string }): Promise<JobRecord | null>;
  listJobs(params: ListJobsParams): Promise<JobRecord[]>;
  /** The job's transitions, oldest first. */
  getJobEvents(params: { id: string }): Promise<JobEvent[]>;
  countJobs(): Promise<JobCount[]>;
  /** Deletes finished jobs and their history; returns how many jobs went. */
  pruneJobs(params: PruneParams): Promise<number>;

  /** Calls `onWake(queue)` when jobs become available. Only when capabilities.notifications. */
  subscribe(onWake: (queue: string) => void): Promise<Unsubscribe>;

  close(): Promise<void>;
}
