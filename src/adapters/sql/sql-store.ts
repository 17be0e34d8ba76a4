/**
 * The `JobStore` over SQL, shared by the Postgres and PGlite stores: the same statements
 * (queries/*.ts) through whichever driver. A store only adds how it connects and listens.
 */
import type { ClaimedJob, Clock, JobEvent, JobRecord } from '../../types.js';
import type {
  AlertClaim,
  ClaimParams,
  CountJobTransitionsParams,
  GetThroughputParams,
  GetThroughputSummaryParams,
  EnqueueJob,
  EnqueueResult,
  FlowJob,
  FlowRecord,
  JobCount,
  JobDependency,
  JobEventEntry,
  JobOutcome,
  JobPage,
  BoundedCount,
  BulkResult,
  DeadJobGroups,
  ErrorMatch,
  GroupDeadJobsParams,
  CountJobsUpToParams,
  JobFilters,
  JobStore,
  Lease,
  LeaseRenewal,
  ListJobEventsParams,
  ListNewJobsParams,
  NewJob,
  ListJobsParams,
  ProgressUpdate,
  PruneParams,
  SavedThroughputBucket,
  SaveThroughputSummaryParams,
  QueueBacklog,
  QueueDepth,
  QueueInfo,
  WorkerHeartbeat,
  WorkerInfo,
  RescueParams,
  SchemaCheck,
  ScanJobsParams,
  ScheduleAdvance,
  ScheduleState,
  ScheduleStates,
  TenantBacklogs,
  SqlClient,
  StoreCapabilities,
  TransitionCount,
  ThroughputBucket,
  Unsubscribe,
  NextDueQuestion,
  SignalDelivery,
  StepCheckpoint,
  SuspendAnswer,
  SuspendRequest,
} from '../store.js';
import type { ClockSteps } from '../clock-steps.js';
import { migrate } from './migrate.js';
import { cancelJob } from './queries/cancel-job.js';
import { claimAlert } from './queries/claim-alert.js';
import { claimJobs } from './queries/claim-jobs.js';
import { countJobTransitions } from './queries/count-job-transitions.js';
import { getThroughput } from './queries/get-throughput.js';
import { getThroughputSummary, saveThroughputSummary } from './queries/throughput-summary.js';
import { deleteJob } from './queries/delete-job.js';
import { checkpointSteps, nextDueIn, sendSignal, suspendIfRunning } from './queries/durable-jobs.js';
import { toInput } from './queries/enqueue-input.js';
import { enqueueJobs } from './queries/enqueue-jobs.js';
import { enqueueFlow } from './queries/enqueue-flow.js';
import { cancelFlow, getFlow, getJobDependencies, waitForChildren } from './queries/flow-reads.js';
import { enqueueScheduledJobs } from './queries/enqueue-scheduled-jobs.js';
import { getQueueBacklogs } from './queries/get-queue-backlogs.js';
import { getQueueDepths } from './queries/get-queue-depths.js';
import { getSchedules, setSchedulePaused } from './queries/get-schedules.js';
import { listJobEvents } from './queries/list-job-events.js';
import { listNewJobs } from './queries/list-new-jobs.js';
import { pruneJobs } from './queries/prune-jobs.js';
import { listQueues, pauseQueue, resumeQueue } from './queries/queues.js';
import { listWorkers, recordWorker, removeWorker } from './queries/workers.js';
import { countJobs, getJob, getJobEvents, listJobs } from './queries/read-jobs.js';
import { renewLeases } from './queries/renew-leases.js';
import { rescueExpiredJobs } from './queries/rescue-expired-jobs.js';
import { retryFlow, retryJob } from './queries/retry-job.js';
import { scanJobs } from './queries/scan-jobs.js';
import { cancelJobsMatching, countJobsUpTo, retryJobsMatching } from './queries/bulk-jobs.js';
import { groupDeadJobs } from './queries/group-dead-jobs.js';
import { getTenantBacklogs } from './queries/tenant-backlogs.js';
import { setProgressIfRunning } from './queries/set-progress-if-running.js';
import { setStatesIfRunning } from './queries/set-states-if-running.js';
import { SqlContext } from './sql-context.js';
import type { SqlDriver } from './sql-driver.js';
import type { SqlSchema } from './sql-schema.js';
import { WakeHub } from './wake-hub.js';
import type { Listen } from './wake-hub.js';
import { assertAbsoluteTimes, assertEnqueueJob, assertSignal } from '../../validation.js';

export interface SqlStoreParts {
  driver: SqlDriver;
  schema: SqlSchema;
  /** Undefined: the database's clock. */
  clock: Clock | undefined;
  /** The embedded store's: steps of its clock, to move held leases by (clock-steps.ts). */
  steps?: ClockSteps | undefined;
  /** Undefined: no wake-ups pushed (`capabilities.notifications` false); workers poll. */
  listen: Listen | undefined;
  notifyDebounceMs: number;
  /** Releases what the store opened (not what the caller passed in). */
  release: () => Promise<void>;
}

/** Subscribing to a store without notifications (callers check `capabilities` first). */
const noListener: Listen = () => Promise.reject(new Error('this store pushes no wake-ups (capabilities.notifications is false)'));

export class SqlJobStore implements JobStore {
  readonly capabilities: StoreCapabilities;
  /** The schema the store's tables live in. */
  readonly schema: string;

  readonly #ctx: SqlContext;
  readonly #wakes: WakeHub;
  readonly #release: () => Promise<void>;
  #closed: Promise<void> | undefined;

  constructor(parts: SqlStoreParts) {
    this.schema = parts.schema.name;
    this.#ctx = new SqlContext(parts.driver, parts.schema, parts.clock, parts.steps);
    this.capabilities = { notifications: parts.listen !== undefined, transactionalEnqueue: true };
    this.#wakes = new WakeHub(parts.listen ?? noListener, parts.notifyDebounceMs);
    this.#release = parts.release;
  }

  /** Creates or upgrades the schema; safe to run from many processes at once. Returns the
   *  migration versions this call applied. Then checks the schema as `checkSchema` does: a
   *  schema a newer build migrated with a breaking migration is refused. */
  async migrate(): Promise<number[]> {
    const applied = await migrate(this.#ctx.driver, this.#ctx.schema);
    this.#ctx.forgetSchemaCheck();
    await this.#ctx.checkSchema();
    return applied;
  }

  /** Refuses a schema that does not fit this build with a SchemaVersionError (never
   *  migrated, migrations missing, or one of a newer build marked breaking); answers the newer
   *  ones that are not breaking. Every other call checks this once before its first statement. */
  checkSchema(): Promise<SchemaCheck> {
    return this.#ctx.checkSchema();
  }

  async enqueueJobs(params: { jobs: readonly EnqueueJob[]; client?: SqlClient }): Promise<EnqueueResult[]> {
    for (const job of params.jobs) assertEnqueueJob(job);
    return params.jobs.length === 0 ? [] : enqueueJobs(this.#ctx, params);
  }

  claimJobs(params: ClaimParams): Promise<ClaimedJob[]> {
    return claimJobs(this.#ctx, params);
  }

  renewLeases(params: { leases: readonly Lease[]; leaseMs: number }): Promise<LeaseRenewal[]> {
    return renewLeases(this.#ctx, params);
  }

  setProgressIfRunning(params: { updates: readonly ProgressUpdate[] }): Promise<boolean[]> {
    return setProgressIfRunning(this.#ctx, params);
  }

  async setStatesIfRunning(params: { outcomes: readonly JobOutcome[] }): Promise<boolean[]> {
    // A `waiting` outcome adds jobs: it has a statement of its own (wait_for_children), so
    // the batched one for every other outcome keeps its shape.
    if (!params.outcomes.some((o) => o.state === 'waiting')) return setStatesIfRunning(this.#ctx, params);
    const others = params.outcomes.filter((o) => o.state !== 'waiting');
    const [applied, waits] = await Promise.all([
      setStatesIfRunning(this.#ctx, { outcomes: others }),
      Promise.all(
        params.outcomes.map((o) =>
          o.state === 'waiting'
            ? waitForChildren(this.#ctx, {
                id: o.id,
                leaseToken: o.leaseToken,
                children: JSON.stringify(o.children.map((child, i) => ({ ...toInput(i, child), key: child.key, on_failure: child.onFailure }))),
              }).then((state) => state !== null)
            : undefined,
        ),
      ),
    ]);
    let next = 0;
    return waits.map((waited) => waited ?? applied[next++]!);
  }

  rescueExpiredJobs(params?: RescueParams): Promise<JobRecord[]> {
    return rescueExpiredJobs(this.#ctx, params);
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

  listJobEvents(params: ListJobEventsParams): Promise<JobEventEntry[]> {
    return listJobEvents(this.#ctx, params);
  }

  listNewJobs(params: ListNewJobsParams): Promise<NewJob[]> {
    return listNewJobs(this.#ctx, params);
  }

  scanJobs(params: ScanJobsParams): Promise<JobPage> {
    return scanJobs(this.#ctx, params);
  }

  countJobsUpTo(params: CountJobsUpToParams): Promise<BoundedCount> {
    return countJobsUpTo(this.#ctx, params);
  }

  retryJobsMatching(params: JobFilters & { max: number; error?: ErrorMatch }): Promise<BulkResult> {
    return retryJobsMatching(this.#ctx, params);
  }

  groupDeadJobs(params: GroupDeadJobsParams): Promise<DeadJobGroups> {
    return groupDeadJobs(this.#ctx, params);
  }

  getTenantBacklogs(params: { queue: string; maxScan?: number }): Promise<TenantBacklogs> {
    return getTenantBacklogs(this.#ctx, params);
  }

  cancelJobsMatching(params: JobFilters & { max: number }): Promise<BulkResult> {
    return cancelJobsMatching(this.#ctx, params);
  }

  getQueueBacklogs(params: { maxCount?: number }): Promise<QueueBacklog[]> {
    return getQueueBacklogs(this.#ctx, params);
  }

  getQueueDepths(): Promise<QueueDepth[]> {
    return getQueueDepths(this.#ctx);
  }

  countJobTransitions(params: CountJobTransitionsParams): Promise<TransitionCount[]> {
    return countJobTransitions(this.#ctx, params);
  }

  getThroughput(params: GetThroughputParams): Promise<ThroughputBucket[]> {
    return getThroughput(this.#ctx, params);
  }

  getThroughputSummary(params: GetThroughputSummaryParams): Promise<SavedThroughputBucket[]> {
    return getThroughputSummary(this.#ctx, params);
  }

  saveThroughputSummary(params: SaveThroughputSummaryParams): Promise<void> {
    return saveThroughputSummary(this.#ctx, params);
  }

  deleteJob(params: { id: string }): Promise<{ job: JobRecord; deleted: boolean } | null> {
    return deleteJob(this.#ctx, params);
  }

  claimAlert(params: { key: string; windowMs: number }): Promise<AlertClaim> {
    return claimAlert(this.#ctx, params);
  }

  pauseQueue(params: { queue: string }): Promise<QueueInfo> {
    return pauseQueue(this.#ctx, params);
  }

  resumeQueue(params: { queue: string }): Promise<QueueInfo> {
    return resumeQueue(this.#ctx, params);
  }

  listQueues(): Promise<QueueInfo[]> {
    return listQueues(this.#ctx);
  }

  recordWorker(params: { worker: WorkerHeartbeat }): Promise<void> {
    return recordWorker(this.#ctx, params);
  }

  removeWorker(params: { workerId: string }): Promise<void> {
    return removeWorker(this.#ctx, params);
  }

  listWorkers(): Promise<WorkerInfo[]> {
    return listWorkers(this.#ctx);
  }

  getSchedules(params: { names: readonly string[] }): Promise<ScheduleStates> {
    return getSchedules(this.#ctx, params);
  }

  pauseSchedule(params: { name: string }): Promise<ScheduleState | null> {
    return setSchedulePaused(this.#ctx, params.name, true);
  }

  resumeSchedule(params: { name: string }): Promise<ScheduleState | null> {
    return setSchedulePaused(this.#ctx, params.name, false);
  }

  enqueueScheduledJobs(params: { advances: readonly ScheduleAdvance[] }): Promise<boolean[]> {
    return enqueueScheduledJobs(this.#ctx, params);
  }

  async enqueueFlow(params: { name: string; jobs: readonly FlowJob[]; client?: SqlClient }): Promise<{ flowId: string; jobs: JobRecord[] }> {
    for (const job of params.jobs) assertAbsoluteTimes('in a flow', job);
    return enqueueFlow(this.#ctx, params);
  }

  getJobDependencies(params: { id: string }): Promise<Array<JobDependency & { job: JobRecord }>> {
    return getJobDependencies(this.#ctx, params);
  }

  getFlow(params: { id: string } | { jobId: string }): Promise<FlowRecord | null> {
    return getFlow(this.#ctx, params);
  }

  cancelFlow(params: { id: string }): Promise<{ cancelled: number; requested: number } | null> {
    return cancelFlow(this.#ctx, params);
  }

  retryFlow(params: { id: string }): Promise<{ retried: number; left: number } | null> {
    return retryFlow(this.#ctx, params);
  }

  checkpointSteps(params: { steps: readonly StepCheckpoint[] }): Promise<boolean[]> {
    return checkpointSteps(this.#ctx, params.steps);
  }

  suspendIfRunning(params: SuspendRequest): Promise<SuspendAnswer> {
    return suspendIfRunning(this.#ctx, params);
  }

  nextDueIn(params: NextDueQuestion): Promise<number | null> {
    return nextDueIn(this.#ctx, params);
  }

  // async: bad input rejects the promise, as on the memory store, rather than throwing.
  async sendSignal(params: { id: string; name: string; payload: unknown; client?: SqlClient }): Promise<SignalDelivery> {
    assertSignal(params);
    return sendSignal(this.#ctx, params);
  }

  subscribe(onWake: (queue?: string) => void, onCancel?: (jobId: string) => void): Promise<Unsubscribe> {
    return this.#wakes.subscribe(onWake, onCancel);
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
