/**
 * The storage adapter interface. Every operation is one round trip with a params object;
 * every write to a claimed job is fenced by the attempt's lease token and reports, per job,
 * whether it applied. The memory store and the SQL stores (Postgres, PGlite) implement the
 * same semantics, checked by one conformance suite (test/adapters/conformance.ts).
 *
 * Time: each store reads "now" from its own clock (the memory store from an injected
 * `Clock`; the SQL stores from the database unless a clock is injected for tests).
 */
import type { ClaimedJob, JobErrorInfo, JobEvent, JobRecord, JobState, JsonValue } from '../types.js';
import type { RunTimeBins } from './run-time-bins.js';

/** The structural type of a SQL client (`pg.Client`, `pg.PoolClient`, `pg.Pool`): enough
 *  to run the enqueue statement inside the caller's own open transaction. */
export interface SqlClient {
  query(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
}

export interface EnqueueJob {
  queue: string;
  kind: string;
  /** Already checked to be JSON-serialisable. Absent (undefined): `{}`. */
  payload: unknown;
  /** Higher runs first. Default 0. */
  priority?: number;
  /** Not claimed before this time. Default: now (or `runIn`). */
  runAt?: Date;
  /** Not claimed before this many ms after the store's now (not with `runAt`). Only
   *  `enqueueJobs` takes it; flows and children take `runAt`. */
  runIn?: number;
  maxAttempts: number;
  /** While a job of this queue with this key is pending, retrying or running, enqueueing
   *  another returns the existing one. */
  uniqueKey?: string | null;
  /** The deadline across all attempts: at it the job is dead, whatever attempts remain.
   *  The store refuses one that does not come after the job's runAt as it resolves it. */
  expiresAt?: Date | null;
  /** The deadline this many ms after the store's now (not with `expiresAt`). Only
   *  `enqueueJobs` takes it. */
  expiresIn?: number;
  /** The enqueue span's context, for the attempts' spans. */
  traceContext?: Record<string, string> | null;
  /** Jobs of this queue with this key run at most the claim's `perKeyLimit` at once, across
   *  every worker. */
  concurrencyKey?: string | null;
  /** What happens when a live job holds `uniqueKey`: `return` it (the default); `replace` a
   *  pending or retrying holder's kind, payload, priority, times, attempts and concurrency key
   *  in place (a running or sleeping holder is returned as it is); `replaceRunning`: as
   *  `replace`, and a running or sleeping holder is cancelled at once (its lease is gone, so
   *  nothing its attempt writes lands; its worker is told to abort) and this job is queued. */
  onConflict?: OnConflict;
  /** One job per burst of enqueues with this key (docs/enqueueing.md): while a job of the
   *  queue with the key waits for its first attempt, an enqueue rewrites it (kind, payload,
   *  priority, attempts, keys) and moves it to `delayMs` from now, but never past `maxWaitMs`
   *  after the burst's first enqueue. Not with `uniqueKey`, `runAt` or `runIn`. */
  debounce?: Debounce | null;
  /** On a queue defined with `fairShare`: the job's tenant (null: the queue's default tenant)
   *  and its weight. The job is ranked after its tenant's previous one by 1 / weight, and never
   *  before the queue's earliest unclaimed rank, so that claims in rank order go round-robin
   *  across tenants (weight 2: two jobs a round). */
  fairShare?: FairShareJob | null;
}

export interface FairShareJob {
  tenant: string | null;
  /** Jobs per round, > 0; default 1. */
  weight: number;
}

export type OnConflict = 'return' | 'replace' | 'replaceRunning';

export interface Debounce {
  key: string;
  /** The job runs this long after the burst's last enqueue, by the store's clock. */
  delayMs: number;
  /** ...or this long after its first, whichever comes first. Default: no bound. */
  maxWaitMs?: number;
}

/** What a job does when a job it waits for ends dead, cancelled or skipped: `cancel` (the
 *  default) it is cancelled; `run` it runs all the same once the others are done; `die` it is
 *  dead. Either way the choice and the reason are in its history. */
export type OnDependencyFailure = 'cancel' | 'run' | 'die';

/** One job of a flow, as `enqueueFlow` gives it to the store: already checked. */
export interface FlowJob extends EnqueueJob {
  /** Its name in the flow. */
  node: string;
  /** The jobs it waits for: another job of this call (by index) or a job already stored. */
  dependsOn: readonly FlowDependency[];
}

export type FlowDependency = {
  /** How the waiting job names this parent (`job.parents()`'s key): the parent's node name,
   *  or its id for a stored job. */
  name: string;
  onFailure: OnDependencyFailure;
} & ({ index: number } | { jobId: string });

/** A child a handler adds before it asks to continue. */
export interface ChildJob extends EnqueueJob {
  /** Unique among the job's children: a child whose key is there already is not added again. */
  key: string;
  onFailure: OnDependencyFailure;
}

/** One edge of a flow: `jobId` waits for `dependsOnId`. `role` says which way round the
 *  handlers see it: a static flow's `parent`, or a `child` a handler added. */
export interface JobDependency {
  jobId: string;
  dependsOnId: string;
  name: string;
  role: 'parent' | 'child';
  onFailure: OnDependencyFailure;
}

export interface FlowRecord {
  id: string;
  name: string;
  createdAt: Date;
  /** Every job of the flow, by id, with its node name (a child's key for added children). */
  jobs: Array<{ node: string; job: JobRecord }>;
  edges: JobDependency[];
}

export interface EnqueueResult {
  job: JobRecord;
  /** false when a live job with the same unique key was returned (or rewritten: `replaced`)
   *  instead, or a debounced job of the burst was rewritten. */
  created: boolean;
  /** true when this enqueue replaced a live holder of the unique key (`onConflict`): rewrote
   *  it (`created` false) or cancelled its attempt and queued this job (`created` true). */
  replaced?: boolean;
}

export interface ClaimParams {
  workerId: string;
  leaseMs: number;
  /** How many jobs to take from each queue, at most; queues with limit 0 are skipped. */
  queues: ReadonlyArray<ClaimQueue>;
}

export interface ClaimQueue {
  queue: string;
  limit: number;
  /** Jobs with the same concurrency key running at once, at most, counting every worker's.
   *  Default 1. Jobs without a key are not limited. */
  perKeyLimit?: number;
  /** At most `max` claims of this queue in any `intervalMs`, counting every worker's. */
  rateLimit?: RateLimit;
  /** The queue is defined with `fairShare`: its jobs are claimed in the order of their fair
   *  ranks (EnqueueJob's `fairShare`), round-robin across tenants; jobs without one are not
   *  claimed. */
  fairShare?: boolean;
}

export interface RateLimit {
  max: number;
  intervalMs: number;
}

/** A schedule's progress: its ticks at or before `lastTickAt` are enqueued (or came before
 *  the schedule was first registered). */
export interface ScheduleState {
  name: string;
  lastTickAt: Date;
  /** Since when its ticks pass with no job (pauseSchedule); null when it runs. */
  pausedAt: Date | null;
}

/** What `getSchedules` answers: the schedules, and the time by the store's clock when it read
 *  them, so that supervisors compute ticks by one clock whatever their own clocks say. */
export interface ScheduleStates {
  now: Date;
  schedules: ScheduleState[];
}

/** Moves a schedule from `previousTickAt` to `tickAt` and enqueues `jobs` with it, or does
 *  nothing if its last tick is no longer `previousTickAt` (another supervisor moved it). */
export interface ScheduleAdvance {
  schedule: string;
  /** null: register the schedule, which must not exist yet. */
  previousTickAt: Date | null;
  tickAt: Date;
  /** The jobs of the ticks in (previousTickAt, tickAt]. */
  jobs: readonly EnqueueJob[];
}

export interface RescueParams {
  /** Rows changed at most. Default 1,000. */
  limit?: number;
}

export interface Lease {
  id: string;
  leaseToken: string;
}

/** The outcome of one attempt, written only while the row is `running` under its lease.
 *  `retrying`, `snoozed` and `released` wait `delayMs` from the store's own now (its clock,
 *  never the worker's: one clock for the fleet) before they are due again.
 *  `snoozed`: the row goes back to `pending` with one more attempt allowed, so the snooze
 *  spends none. `released`: the worker stopped before the attempt finished (its grace period
 *  ran out); the row goes back to `retrying`, also with one more attempt allowed, so
 *  `attempt` never passes `maxAttempts`. A `retrying`, `snoozed` or
 *  `released` outcome for a job whose cancel was requested writes `cancelled` instead: the
 *  job never starts another attempt.
 *  `lastProgress`: the attempt's last report, not yet written (throttled), stored with it. */
export type JobOutcome = Lease & { lastProgress?: ProgressReport } & (
    | { state: 'completed'; result: unknown }
    /** The handler added `children` and continues once they have all ended: the row waits
     *  (`waiting`, no lease, no slot) with one more attempt allowed, and becomes `pending`
     *  when the last child ends (at once if none is left). A child whose key the job already
     *  added (an earlier round) is not added again. Cancelled instead if a cancel was
     *  requested. Children are in the job's flow (a new one, named after its kind, if none). */
    | { state: 'waiting'; children: readonly ChildJob[] }
    | { state: 'retrying' | 'snoozed' | 'released'; error: JobErrorInfo; delayMs: number }
    | { state: 'dead' | 'skipped' | 'cancelled'; error: JobErrorInfo }
  );

export interface ProgressReport {
  /** 0 to 100. */
  percent: number;
  message: string | null;
}

/** A running attempt's progress, written only while the row is `running` under its lease. */
export type ProgressUpdate = Lease & ProgressReport;

/** A lease's renewal: `renewed`; `cancel`: renewed, and a cancel was requested (the holder
 *  aborts the attempt and writes `cancelled`); `lost`: the row is no longer running under
 *  this lease, nothing was written. */
export type LeaseRenewal = 'renewed' | 'cancel' | 'lost';

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

/** One row of the history with its event id: a decimal string that grows with every append,
 *  across all jobs. */
export interface JobEventEntry extends JobEvent {
  id: string;
}

export interface ListJobEventsParams {
  /** Events appended after this event id. Without it: the newest `limit` events. */
  afterId?: string;
  /** Default 100. */
  limit?: number;
}

export interface ListNewJobsParams {
  /** Jobs created after this job id. Without it: the newest `limit` jobs. */
  afterId?: string;
  /** Default 100. */
  limit?: number;
}

/** A job as listNewJobs reads it: enough for the live feed to show it came. */
export interface NewJob {
  id: string;
  queue: string;
  /** The state it was created in (`pending`, or `waiting` for a flow's dependent): the same
   *  as the first entry of its story, however far it has run since. */
  state: JobState;
  createdAt: Date;
}

export interface ScanJobsParams {
  queue?: string;
  state?: JobState;
  kind?: string;
  uniqueKey?: string;
  /** Jobs whose payload contains this JSON, as PostgreSQL's jsonb `@>` says (an object's
   *  keys with contained values, an array's elements in any order). */
  payloadContains?: JsonValue;
  /** Jobs whose error message contains this text, ignoring case. */
  errorContains?: string;
  /** Newest first; pass the previous page's `nextBeforeId` to go on. */
  beforeId?: string;
  /** Jobs per page at most. Default 50. */
  limit?: number;
  /** Jobs examined per call at most, where no index serves the filters (always, with
   *  `payloadContains` or `errorContains`). Default 10,000. */
  maxScan?: number;
}

/** A job as a list shows it (scanJobs): the row without what may be large or is not for a
 *  list (payload, result, durable steps, lease token, trace context), which the SQL stores
 *  then never read, and its error as code and message only. */
export type JobListing = Omit<JobRecord, 'payload' | 'result' | 'steps' | 'leaseToken' | 'traceContext' | 'error'> & {
  error: Pick<JobErrorInfo, 'code' | 'message'> | null;
};

/** The filters of a count or a bulk action (the inspector's list's, less its search). */
export interface JobFilters {
  queue?: string;
  state?: JobState;
  kind?: string;
}

export interface CountJobsUpToParams extends JobFilters {
  /** Counted exactly up to this many. */
  max: number;
  /** Jobs examined at most where no index narrows the filters to the matches (a `kind`, or
   *  `completed`): past it the count is a lower bound. Default 20,000. */
  maxScan?: number;
}

/** A fair queue's tenant (null: the default tenant) and its jobs waiting to be claimed
 *  (pending, retrying, sleeping) and running. */
export interface TenantBacklog {
  tenant: string | null;
  waiting: number;
  running: number;
}

export interface TenantBacklogs {
  /** Most waiting first. */
  tenants: TenantBacklog[];
  /** The queue holds more than `maxScan` waiting (or running) jobs: the counts are of the
   *  first `maxScan` of them. */
  partial: boolean;
}

/** A dead job's error as the grouping of dead jobs names it (groupDeadJobs). */
export interface ErrorMatch {
  code: string | null;
  message: string | null;
}

export interface GroupDeadJobsParams {
  queue: string;
  /** The newest dead jobs of the queue read at most. Default 10,000. */
  maxScan?: number;
  /** Groups answered at most, most jobs first. Default 50. */
  limit?: number;
}

/** Dead jobs that died of the same error (code and message). */
export interface DeadJobGroup extends ErrorMatch {
  count: number;
  /** When the first and the last of them died. */
  firstAt: Date;
  lastAt: Date;
  /** The newest of them, for a link to one. */
  newestJobId: string;
}

export interface DeadJobGroups {
  groups: DeadJobGroup[];
  /** Dead jobs read; `partial`: the queue holds more than `maxScan`, the groups count the newest. */
  examined: number;
  partial: boolean;
}

export interface BoundedCount {
  count: number;
  /** The count is a lower bound: more match than `max`, or the count stopped at `maxScan`. */
  capped: boolean;
}

/** A bulk action's answer: how many jobs it picked (newest first, at most `max`), how many it
 *  changed, and whether more than `max` matched. */
export interface BulkResult {
  matched: number;
  applied: number;
  capped: boolean;
}

export interface JobPage {
  jobs: JobListing[];
  /** Where the next page starts (its `beforeId`), or null when no older job matches. A page
   *  shorter than `limit` may still have a next one: the call stopped at `maxScan`. */
  nextBeforeId: string | null;
}

/** The row states a queue's backlog is counted in: every state but `completed`. */
export type BacklogState = Exclude<JobState, 'completed'>;

/** Every BacklogState, in the order counts are listed. */
export const BACKLOG_STATES: readonly BacklogState[] = ['pending', 'retrying', 'running', 'dead', 'skipped', 'cancelled', 'waiting', 'sleeping'];

/** A count of 0 for every BacklogState. */
export function zeroBacklogCounts(): Record<BacklogState, number> {
  return Object.fromEntries(BACKLOG_STATES.map((state) => [state, 0])) as Record<BacklogState, number>;
}

export interface QueueBacklog {
  queue: string;
  /** Jobs per state, each counted up to `maxCount`: a count equal to it means at least. */
  counts: Record<BacklogState, number>;
  /** The earliest `runAt` among the queue's pending and retrying jobs, due or not. */
  oldestRunAt: Date | null;
  /** Its pending jobs whose `runAt` is still ahead, each counted up to `maxCount`: `scheduled`
   *  never ran (enqueued to run later), `snoozed` ran before and waits to run again (a snooze,
   *  or a release at a worker's stop). The rest of `counts.pending` is due. */
  later: { scheduled: number; snoozed: number };
}

/** One queue's exact depth, for metrics (getQueueDepths). */
export interface QueueDepth {
  queue: string;
  /** Jobs per state, exact; completed jobs are not counted. */
  counts: Record<BacklogState, number>;
  /** Seconds, by the store's clock, since the earliest `runAt` among the queue's pending and
   *  retrying jobs that are due; 0 when none is due. */
  oldestDueAgeSeconds: number;
}

export interface CountJobTransitionsParams {
  /** Transitions at or after this time. */
  since: Date;
  /** Width of a bucket: a transition at `at` falls in bucket floor((at - since) / bucketMs). */
  bucketMs: number;
  /** History rows read at most (default 100,000); past it the counts cover part of the window. */
  maxEvents?: number;
}

export interface TransitionCount {
  queue: string;
  toState: JobState;
  bucket: number;
  count: number;
}

export interface GetThroughputParams {
  /** Start of the first bucket: events at or after this time. */
  since: Date;
  /** Events before this time only; default: no end. */
  until?: Date;
  /** Width of a bucket: an event at `at` falls in bucket floor((at - since) / bucketMs). */
  bucketMs: number;
  /** History rows read at most (default 100,000); past it the numbers cover part of the window. */
  maxEvents?: number;
}

/** What one queue did in one bucket of time. */
export interface QueueActivity {
  queue: string;
  /** Jobs that completed. */
  completed: number;
  /** Attempts that failed and will run again (transitions into `retrying`). */
  retried: number;
  /** Jobs that died (transitions into `dead`, from an attempt or not). */
  dead: number;
  /** Attempts that ended in the bucket, whatever their outcome, whose start is in the history. */
  attempts: number;
  /** Run time of those attempts (from entering `running` to leaving it), in ms: nearest-rank
   *  percentiles (the smallest duration that at least 50 % / 95 % of them do not exceed);
   *  null when no attempt ended. */
  p50Ms: number | null;
  p95Ms: number | null;
  /** The same run times in bins that merge (run-time-bins.ts): a longer bucket's percentiles
   *  are read from the sum of its parts' bins. */
  runTimes: RunTimeBins;
}

/** What one queue did in one bucket, from the history. A bucket with nothing is left out. */
export interface ThroughputBucket extends QueueActivity {
  bucket: number;
  /** History rows read for the bucket (what `maxEvents` counts). */
  events: number;
}

/** A closed bucket of throughput, saved by the inspector that read it from the history so
 *  that the next one need not (src/inspector/throughput.ts; migration 0025). */
export interface SavedThroughputBucket {
  start: Date;
  /** Each queue that did anything in it; none: it was idle. */
  queues: QueueActivity[];
}

export interface GetThroughputSummaryParams {
  /** Width of the buckets. */
  bucketMs: number;
  /** The saved buckets that start at or after `since` and before `until`. */
  since: Date;
  until: Date;
}

export interface SaveThroughputSummaryParams {
  /** Width of the buckets. */
  bucketMs: number;
  /** Closed buckets: a bucket already saved keeps what it had (the first save stands). */
  buckets: readonly SavedThroughputBucket[];
  /** Saved buckets of this width that start before it are deleted, at most
   *  THROUGHPUT_SUMMARY_PRUNE_BATCH per call (oldest first), and none of `buckets` before it
   *  is saved. */
  pruneBefore: Date;
}

/** Saved buckets one `saveThroughputSummary` deletes at most: a save adds a handful, so each
 *  keeps up while no call deletes an unbounded number of rows. */
export const THROUGHPUT_SUMMARY_PRUNE_BATCH = 1_000;

export interface PruneParams {
  /** Delete completed and skipped jobs (and their history) finished before this time. */
  completedBefore?: Date;
  /** Delete dead and cancelled jobs (and their history) finished before this time, and the
   *  dead-job alert dedupe rows whose last alert went out before it. */
  deadBefore?: Date;
  /** Jobs deleted at most per batch, a positive integer; default 1,000
   *  (DEFAULT_PRUNE_BATCH_SIZE). On SQL each batch is one statement, its own transaction, so
   *  the WAL it writes and the locks it holds stay bounded however many jobs go. The prune
   *  goes on until a batch deletes fewer. */
  batchSize?: number;
  /** Called after each batch that deleted jobs: that batch's count, and the total so far.
   *  A throw stops the prune there (what earlier batches deleted stays deleted). */
  onBatch?: (progress: PruneProgress) => void;
}

/** How far a `pruneJobs` has got (its `onBatch`). */
export interface PruneProgress {
  /** Jobs the batch just done deleted. */
  deleted: number;
  /** Jobs deleted so far by this prune. */
  total: number;
}

/** A queue the store knows: recorded when its first job is enqueued, kept by `pruneJobs`. */
export interface QueueInfo {
  name: string;
  createdAt: Date;
  /** While set, no claim (of any worker on the store) takes the queue's jobs. */
  pausedAt: Date | null;
}

/** What a supervisor says of itself at each heartbeat (`recordWorker`). */
export interface WorkerHeartbeat {
  workerId: string;
  host: string;
  pid: number;
  queues: readonly string[];
  /** Jobs it holds now (claimed and not yet finished). */
  running: number;
  /** The jobs among them claimed ahead of a free slot, waiting here for one: their handler
   *  has not started. */
  held: ReadonlyArray<HeldJob>;
}

export interface HeldJob {
  id: string;
  queue: string;
}

/** A supervisor on the store, as last recorded. */
export interface WorkerInfo extends Omit<WorkerHeartbeat, 'queues' | 'held'> {
  queues: string[];
  /** As of its last heartbeat; null when an older version wrote the row. */
  held: HeldJob[] | null;
  /** Its first heartbeat. */
  startedAt: Date;
  /** Its last heartbeat; an old one is a worker that died without stopping. */
  lastSeenAt: Date;
}

/** A worker row not seen for this long is dropped at the next heartbeat of any worker. */
export const WORKER_FORGET_MS = 86_400_000;

/** The answer to `claimAlert`: send, with how many alerts of the key were held back since
 *  its last one; or do not (this one is counted as held back). */
export type AlertClaim = { send: true; suppressed: number } | { send: false };

export interface StoreCapabilities {
  /** The store pushes wake-ups when jobs are enqueued (LISTEN/NOTIFY or in-process). */
  notifications: boolean;
  /** `enqueueJobs` accepts the caller's SQL client to join its transaction. */
  transactionalEnqueue: boolean;
}

export type Unsubscribe = () => Promise<void>;

/** A schema that fits this build (schema-version.ts). */
export interface SchemaCheck {
  /** Migrations a newer build applied, none of them breaking (`0021-name`): this build runs
   *  beside it, as in a rolling deploy. */
  readonly newer: readonly string[];
}

export interface JobStore {
  readonly capabilities: StoreCapabilities;

  /** A store with a schema (SQL): refuses one that does not fit this build with a
   *  SchemaVersionError (never migrated, migrations missing, or a newer build's breaking
   *  one). The supervisor calls it on start; the store itself before its first statement. */
  checkSchema?(): Promise<SchemaCheck>;

  /** A store with a schema: creates or upgrades it, safe from many processes at once. Returns
   *  the migration versions this call applied. */
  migrate?(): Promise<number[]>;

  /** Inserts jobs in one statement; unique keys return the live job instead. */
  enqueueJobs(params: { jobs: readonly EnqueueJob[]; client?: SqlClient }): Promise<EnqueueResult[]>;

  /** Takes up to `limit` due jobs per queue (priority desc, runAt, id), none of a paused
   *  queue, never one that another claim holds, and leases them to the worker: state running, attempt + 1, fresh token.
   *  Looks at the first `limit` due jobs whose concurrency key is below its limit, and takes
   *  those that keep every key within `perKeyLimit`; a rate-limited queue gives at most what
   *  its window has left. Under contention a claim may skip a key or rate-limited queue that
   *  another claim is taking at that moment; it never waits for it, and never errs. */
  claimJobs(params: ClaimParams): Promise<ClaimedJob[]>;

  /** Pushes each lease's expiry to now + leaseMs. Answers per lease, in input order. */
  renewLeases(params: { leases: readonly Lease[]; leaseMs: number }): Promise<LeaseRenewal[]>;

  /** Stores each attempt's progress, fenced by lease, with no history row. Answers per
   *  update, in input order, whether it applied; of two for one job the last one stays. */
  setProgressIfRunning(params: { updates: readonly ProgressUpdate[] }): Promise<boolean[]>;

  /** Writes each attempt's outcome and appends its history, fenced by lease. Applied per
   *  outcome, in input order. */
  setStatesIfRunning(params: { outcomes: readonly JobOutcome[] }): Promise<boolean[]>;

  /** The reaper. Every running job whose lease expired goes to `retrying` (attempts left) or
   *  `dead` (attempts spent, or past its `expiresAt`), with error code `lease_expired`; to
   *  `cancelled` if its cancel was requested. Every pending or retrying job past its
   *  `expiresAt` goes to `dead` with code `expired`. At most `limit` rows per call, expired
   *  leases first, each kind longest overdue first: call again while a call returns `limit`.
   *  Returns the changed rows, by id. */
  rescueExpiredJobs(params?: RescueParams): Promise<JobRecord[]>;

  /** A pending, retrying or waiting job becomes `cancelled`. A running one is left to its worker, which
   *  is told: its `cancelRequestedAt` is set (kept if already set), its worker hears it by
   *  notification and at its next lease renewal, aborts the attempt and writes `cancelled`.
   *  The result says `cancelled: false` then, with the row as it stands. */
  cancelJob(params: { id: string }): Promise<{ job: JobRecord; cancelled: boolean } | null>;

  /** A dead, cancelled or skipped job goes back to `pending`, with at least one attempt left,
   *  no cancel request, and no `expiresAt` if that has passed. In a flow it goes to `waiting`
   *  while a parent has not ended, the jobs its failure cancelled or killed come back with it,
   *  and those that wait for it wait again (docs/workflows.md, "Retrying a flow"). Not retried
   *  (`retried: false`) while a live job holds its unique key, or a parent has failed under
   *  an edge that is not `run`. */
  retryJob(params: { id: string }): Promise<{ job: JobRecord; retried: boolean } | null>;

  getJob(params: { id: string }): Promise<JobRecord | null>;
  listJobs(params: ListJobsParams): Promise<JobRecord[]>;
  /** The job's transitions, oldest first. */
  getJobEvents(params: { id: string }): Promise<JobEvent[]>;
  countJobs(): Promise<JobCount[]>;
  /** Deletes finished jobs and their history, `batchSize` jobs at a time; returns how many
   *  jobs went. A job that a `waiting` or `sleeping` job depends on is kept until that one
   *  has left that state. */
  pruneJobs(params: PruneParams): Promise<number>;

  // Reads and actions for the inspector: each bounded, whatever the size of the table.

  /** History across all jobs, oldest first, by event id: what changed since the last call.
   *  Transitions only: a job's creation is in its story (getJobEvents), not here (listNewJobs). */
  listJobEvents(params: ListJobEventsParams): Promise<JobEventEntry[]>;
  /** Jobs by id, oldest first, for the live feed: a job's creation is not a history row. */
  listNewJobs(params: ListNewJobsParams): Promise<NewJob[]>;
  /** Jobs newest first matching every filter given, a page at a time. */
  scanJobs(params: ScanJobsParams): Promise<JobPage>;
  /** How many jobs match the filters, exactly up to `max`, through an index where one serves. */
  countJobsUpTo(params: CountJobsUpToParams): Promise<BoundedCount>;
  /** retryJob on the newest `max` dead, cancelled or skipped jobs matching, at once: one job per
   *  (queue, unique key) among them, none whose key a live job holds. `applied`: those retried.
   *  With `error`, only jobs whose error has that code and message (null: none). */
  retryJobsMatching(params: JobFilters & { max: number; error?: ErrorMatch }): Promise<BulkResult>;
  /** The queue's dead jobs grouped by their error (code and message), most jobs first: the
   *  newest `maxScan` of them, through the index that holds dead jobs. Retry a group with
   *  retryJobsMatching's `error`. */
  groupDeadJobs(params: GroupDeadJobsParams): Promise<DeadJobGroups>;
  /** A queue defined with `fairShare`: its tenants with their backlogs, reading at most
   *  `maxScan` (default 10,000) waiting and as many running jobs. A queue that is not fair
   *  answers no tenant. */
  getTenantBacklogs(params: { queue: string; maxScan?: number }): Promise<TenantBacklogs>;
  /** cancelJob on the newest `max` pending, retrying, waiting, sleeping or running jobs
   *  matching, at once: `applied` counts those cancelled and the running ones asked to cancel
   *  (their workers abort them, as for cancelJob). */
  cancelJobsMatching(params: JobFilters & { max: number }): Promise<BulkResult>;
  /** Per queue that has any job in a backlog state: its counts, capped, and oldest runAt. */
  getQueueBacklogs(params: { maxCount?: number }): Promise<QueueBacklog[]>;
  /** Per queue that has any job in a backlog state: exact counts and the age of its oldest due
   *  job, by queue name (byte order). Reads indexes of unfinished and of dead, skipped and
   *  cancelled jobs only: its cost grows with those, never with the completed history. */
  getQueueDepths(): Promise<QueueDepth[]>;
  /** Transitions per queue, state entered and time bucket: throughput from the history. */
  countJobTransitions(params: CountJobTransitionsParams): Promise<TransitionCount[]>;
  /** Per queue and bucket since a time: completed, retried and dead jobs, and the run time
   *  percentiles of the attempts that ended; queues by name (byte order), then bucket. */
  getThroughput(params: GetThroughputParams): Promise<ThroughputBucket[]>;
  /** The saved closed buckets of throughput of one width in a time range, oldest first. */
  getThroughputSummary(params: GetThroughputSummaryParams): Promise<SavedThroughputBucket[]>;
  /** Saves closed buckets of throughput (each once: the first save stands), and deletes a
   *  bounded batch of saved ones that are too old. Jobs pruned later keep their throughput. */
  saveThroughputSummary(params: SaveThroughputSummaryParams): Promise<void>;
  /** Deletes a job that no worker holds (any state but `running`) with its history. A running
   *  one is left to its worker, and one that a `waiting` job waits for (a flow's parent, a
   *  child added before continuing) is kept until that job has left `waiting`: the result says
   *  `deleted: false`. */
  deleteJob(params: { id: string }): Promise<{ job: JobRecord; deleted: boolean } | null>;

  /** The right to send one dead-job alert for `key`, shared by every worker on the store: at
   *  most one per `windowMs` per key, by the store's clock. */
  claimAlert(params: { key: string; windowMs: number }): Promise<AlertClaim>;

  /** Stops every worker on the store from claiming the queue's jobs; its jobs stay as they
   *  are, and attempts already running finish. Records the queue if it is new; a queue
   *  already paused keeps its `pausedAt`. */
  pauseQueue(params: { queue: string }): Promise<QueueInfo>;
  /** Lets claims take the queue's jobs again, and wakes the workers (as an enqueue does).
   *  Records the queue if it is new. */
  resumeQueue(params: { queue: string }): Promise<QueueInfo>;
  /** Every queue the store knows, by name. */
  listQueues(): Promise<QueueInfo[]>;

  /** A supervisor's heartbeat: its row is written (startedAt kept from the first), lastSeenAt
   *  is the store's now; rows no worker has refreshed for WORKER_FORGET_MS go. */
  recordWorker(params: { worker: WorkerHeartbeat }): Promise<void>;
  /** A supervisor that stopped: its row goes. */
  removeWorker(params: { workerId: string }): Promise<void>;
  /** Every worker row, by workerId. */
  listWorkers(): Promise<WorkerInfo[]>;

  /** Each schedule's state, by name; names never registered are left out. With the store's
   *  "now" (also when no name is given). */
  getSchedules(params: { names: readonly string[] }): Promise<ScheduleStates>;
  /** Pauses a schedule: it still advances tick by tick, but its ticks enqueue no job until
   *  resumeSchedule. Null when no supervisor has registered that name. Idempotent: a paused
   *  one keeps its first pausedAt. */
  pauseSchedule(params: { name: string }): Promise<ScheduleState | null>;
  resumeSchedule(params: { name: string }): Promise<ScheduleState | null>;
  /** Compare-and-set per schedule, each with its jobs (enqueued as by `enqueueJobs`, a live
   *  unique key keeping the older job): answers per entry, in input order, whether it applied.
   *  A tick is enqueued once however many supervisors try, even after its job is gone. An
   *  entry whose `tickAt` is after the store's now does not apply either (`false`): no tick is
   *  written before its time by the store's clock, whatever the caller's estimate of it. */
  enqueueScheduledJobs(params: { advances: readonly ScheduleAdvance[] }): Promise<boolean[]>;

  /** Calls `onWake(queue)` when jobs become available, `onWake()` with no queue when any
   *  queue may have some (listening again after a lost connection: notifications may have
   *  been missed), and `onCancel(jobId)` when a cancel is requested for a running job
   *  (whichever process holds it). Only when capabilities.notifications. */
  subscribe(onWake: (queue?: string) => void, onCancel?: (jobId: string) => void): Promise<Unsubscribe>;

  // Flows (src/flows): jobs that wait for jobs.

  /** Inserts a flow's jobs and their edges at once, all or nothing. A job with parents waits
   *  (`waiting`) until the last of them ends; one whose stored parents have all ended is due
   *  (or follows its failure policy) at once. Throws JobNotFoundError, writing nothing, when a
   *  stored parent does not exist. Jobs come back in input order. */
  enqueueFlow(params: { name: string; jobs: readonly FlowJob[]; client?: SqlClient }): Promise<{ flowId: string; jobs: JobRecord[] }>;
  /** What the job waits or waited for (its parents, or the children it added), with their
   *  rows as they stand: what `job.parents()` and `job.children()` read. */
  getJobDependencies(params: { id: string }): Promise<Array<JobDependency & { job: JobRecord }>>;
  /** The flow with this id, or the one the job `jobId` belongs to; null if none. */
  getFlow(params: { id: string } | { jobId: string }): Promise<FlowRecord | null>;
  /** Cancels every job of the flow that no worker holds and has not ended (pending,
   *  retrying, waiting), and asks the workers of the running ones to cancel them, as
   *  `cancelJob` does, in one step. Null if there is no such flow. */
  cancelFlow(params: { id: string }): Promise<{ cancelled: number; requested: number } | null>;
  /** Retries every dead, cancelled or skipped job of the flow at once, as `retryJob` does
   *  (docs/workflows.md, "Retrying a flow"): `retried` jobs, and how many are `left` ended
   *  that way (a stored parent outside the flow failed). Null if there is no such flow. */
  retryFlow(params: { id: string }): Promise<{ retried: number; left: number } | null>;

  // Durable jobs (docs/durable-jobs.md): steps, sleeps and signals.

  /** Appends each step's result to its running attempt's stored steps, fenced by the
   *  attempt's lease: per step, in order, false (nothing written) when the job's row is no
   *  longer running under that lease. The supervisor batches its jobs' checkpoints into one
   *  call, as it does their outcomes. */
  checkpointSteps(params: { steps: readonly StepCheckpoint[] }): Promise<boolean[]>;
  /** A running attempt sleeps or waits for a signal, fenced by its lease; see SuspendAnswer. */
  suspendIfRunning(params: SuspendRequest): Promise<SuspendAnswer>;
  /** Delivers a signal: wakes the job (sleeping → pending, history code `signal`) if it waits
   *  for this name, else keeps the payload in its mailbox (per job and name, oldest first)
   *  until a wait takes it. The job's row is locked first, so a signal and the job's own
   *  move to `sleeping` cannot miss each other. Throws JobNotFoundError when there is no such
   *  job, JobEndedError when it has ended; nothing is written then. */
  sendSignal(params: { id: string; name: string; payload: unknown; client?: SqlClient }): Promise<SignalDelivery>;
  /** How long, by the store's clock, until the first job of `queues` that is claimable but
   *  not yet due (sleeping, retrying, or pending with a later `runAt`) becomes due, if that is
   *  within `withinMs`; null when none is. One that became due in the last `sinceMs` counts,
   *  as 0 (it came due after the claim that asks, which could not take it). A supervisor sets
   *  its one wake-up timer by it, so a sleep or a backoff that ends between two polls is
   *  claimed when it ends. */
  nextDueIn(params: NextDueQuestion): Promise<number | null>;

  close(): Promise<void>;
}

export interface NextDueQuestion {
  queues: readonly string[];
  withinMs: number;
  /** Also jobs that came due this long ago at most (the claim round's own time). Default 0. */
  sinceMs?: number;
}

/** A step's result to store with a running attempt. */
export interface StepCheckpoint extends Lease {
  /** The step's name in this run (`charge`, `charge#2` for its second call). */
  name: string;
  /** Checked JSON. */
  result: unknown;
}

/** When a sleep or a wait ends: at a time, or a delay from the store's now. */
export type WakeAt = { at: Date } | { delayMs: number };

/** A running attempt asks to sleep (`kind: 'sleep'`) or to wait for the signal `signal`
 *  until `wake` (a wait with no timeout: `{ at: NEVER }`). */
export type SuspendRequest = Lease & { name: string; wake: WakeAt } & ({ kind: 'sleep' } | { kind: 'signal'; signal: string });

/**
 * What a sleep or wait did, fenced by the attempt's lease:
 * - `lost`: the row is not running under this lease; nothing written.
 * - `received` (signal): the mailbox held one of that name: taken (oldest first), its payload
 *   stored as the step's value; the row stays running.
 * - `timedOut` (signal) / `awake` (sleep): its time has passed already: stored; the row stays
 *   running.
 * - `sleeping`: the row is `sleeping` until then: no lease, no worker slot, no attempt spent
 *   (one more allowed), history running → sleeping.
 * - `cancelled`: a cancel had been requested: the row is `cancelled`.
 */
export type SuspendAnswer = { answer: 'lost' | 'timedOut' | 'awake' | 'sleeping' | 'cancelled' } | { answer: 'received'; payload: unknown };

/** What `sendSignal` did: `woke` the job, or left the signal in its mailbox (`queued`). */
export interface SignalDelivery {
  delivered: 'woke' | 'queued';
  /** The job's state after the signal. */
  state: JobState;
}

/** The time of a wait with no timeout: the latest a job can have. */
export const NEVER = new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999));
