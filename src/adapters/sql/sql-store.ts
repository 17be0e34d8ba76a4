/**
 * The `JobStore` over SQL, shared by the Postgres and PGlite stores: the same statements
 * (queries/*.ts) through whichever driver. A store only adds how it connects and listens.
 */
import type { ClaimedJob, Clock, JobEvent, JobRecord } from '../../types.js';
import type {
  ClaimParams,
  EnqueueJob,
  EnqueueResult,
  JobCount,
  JobOutcome,
  JobStore,
  Lease,
  ListJobsParams,
  PruneParams,
  SqlClient,
  StoreCapabilities,
  Unsubscribe,
} from '../store.js';
import { migrate } from './migrate.js';
import { cancelJob } from './queries/cancel-job.js';
import { claimJobs } from './queries/claim-jobs.js';
import { enqueueJobs } from './queries/enqueue-jobs.js';
import { pruneJobs } from './queries/prune-jobs.js';
import { countJobs, getJob, getJobEvents, listJobs } from './queries/read-jobs.js';
import { renewLeases } from './queries/renew-leases.js';
import { rescueExpiredJobs } from './queries/rescue-expired-jobs.js';
import { retryJob } from './queries/retry-job.js';
import { setStatesIfRunning } from './queries/set-states-if-running.js';
import { SqlContext } from './sql-context.js';
import type { SqlDriver } from './sql-driver.js';
import type { SqlSchema } from './sql-schema.js';
import { WakeHub } from './wake-hub.js';
import type { Listen } from './wake-hub.js';

export interface SqlStoreParts {
  driver: SqlDriver;
  schema: SqlSchema;
  /** Undefined: the database's clock. */
  clock: Clock | undefined;
  listen: Listen;
  notifyDebounceMs: number;
  /** Releases what the store opened (not what the caller passed in). */
  release: () => Promise<void>;
}

export class SqlJobStore implements JobStore {
  readonly capabilities: StoreCapabilities = { notifications: true, transactionalEnqueue: true };
  /** The schema the store's tables live in. */
  readonly schema: string;

  readonly #ctx: SqlContext;
  readonly #wakes: WakeHub;
  readonly #release: () => Promise<void>;
  #closed: Promise<void> | undefined;

  constructor(parts: SqlStoreParts) {
    this.schema = parts.schema.name;
    this.#ctx = new SqlContext(parts.driver, parts.schema, parts.clock);
    this.#wakes = new WakeHub(parts.listen, parts.notifyDebounceMs);
    this.#release = parts.release;
  }

  /** Creates or upgrades the schema; safe to run from many processes at once. Returns the
   *  migration versions this call applied. */
  migrate(): Promise<number[]> {
    return migrate(this.#ctx.driver, this.#ctx.schema);
  }

  enqueueJobs(params: { jobs: readonly EnqueueJob[]; client?: SqlClient }): Promise<EnqueueResult[]> {
    return params.jobs.length === 0 ? Promise.resolve([]) : enqueueJobs(this.#ctx, params);
  }

  claimJobs(params: ClaimParams): Promise<ClaimedJob[]> {
    return claimJobs(this.#ctx, params);
  }

  renewLeases(params: { leases: readonly Lease[]; leaseMs: number }): Promise<boolean[]> {
    return renewLeases(this.#ctx, params);
  }

  setStatesIfRunning(params: { outcomes: readonly JobOutcome[] }): Promise<boolean[]> {
    return setStatesIfRunning(this.#ctx, params);
  }

  rescueExpiredJobs(): Promise<JobRecord[]> {
    return rescueExpiredJobs(this.#ctx);
  }

  cancelJob(params: { id: string }): Promise<{ job: JobRecord; cancelled: boolean } | null> {
    return cancelJob(this.#ctx, params);
  }

  retryJob(params: { id: string }): Promise<{ job: JobRecord; retried: boolean } | null> {
    return retryJob(this.#ctx, params);
  }

  getJob(params: { id: string }): Promise<JobRecord | null> {
    return getJob(this.#ctx, params);
  }

  listJobs(params: ListJobsParams): Promise<JobRecord[]> {
    return listJobs(this.#ctx, params);
  }

  getJobEvents(params: { id: string }): Promise<JobEvent[]> {
    return getJobEvents(this.#ctx, params);
  }

  countJobs(): Promise<JobCount[]> {
    return countJobs(this.#ctx);
  }

  pruneJobs(params: PruneParams): Promise<number> {
    return pruneJobs(this.#ctx, params);
  }

  subscribe(onWake: (queue: string) => void): Promise<Unsubscribe> {
    return this.#wakes.subscribe(onWake);
  }

  /** Stops listening and releases what the store opened; idempotent. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      await this.#wakes.close();
      await this.#release();
    })();
    return this.#closed;
  }
}
