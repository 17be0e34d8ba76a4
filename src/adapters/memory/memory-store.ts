/**
 * The memory store: the `JobStore` contract held in plain maps, for unit tests and users'
 * own handler tests. It keeps exactly the semantics of the SQL stores (checked by the
 * conformance suite), including fencing, unique keys and the history table.
 *
 * Every operation runs synchronously inside its promise, so each one is atomic, as a single
 * SQL statement is.
 */
import { randomUUID } from 'node:crypto';
import { InvalidOptionError, JobEndedError, JobExpired, JobNotFoundError } from '../../errors.js';
import { FINAL_JOB_STATES, systemClock } from '../../types.js';
import { type ClockSteps, clockSteps } from '../clock-steps.js';
import { pruneInBatches } from '../prune-batches.js';
import { inJsonbOrder } from '../jsonb-order.js';
import { rescueLimit } from '../rescue-limit.js';
import type { ClaimedJob, Clock, JobErrorInfo, JobEvent, JobRecord, JobState, JobStep } from '../../types.js';
import type {
  AlertClaim,
  ClaimParams,
  ClaimQueue,
  CountJobTransitionsParams,
  GetThroughputParams,
  GetThroughputSummaryParams,
  EnqueueJob,
  EnqueueResult,
  ChildJob,
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
  ProgressReport,
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
  ScanJobsParams,
  ScheduleAdvance,
  ScheduleState,
  ScheduleStates,
  TenantBacklog,
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
import { NEVER, WORKER_FORGET_MS } from '../store.js';
import { MemoryFlowGraph } from './memory-flows.js';
import { countTransitions, errorMatches, groupDeadJobs, queueBacklogs, queueDepths, scanJobs } from './memory-reads.js';
import { toJobListing } from '../job-listing.js';
import { MemoryThroughputSummary, throughput } from './memory-throughput.js';
import { assertAbsoluteTimes, assertEnqueueJob, assertSignal, resolveJobTimes } from '../../validation.js';

export interface MemoryStoreOptions {
  /** Where "now" comes from. Default: `systemClock` (the wall clock). */
  clock?: Clock;
  /** A monotonic clock: when `clock` steps against it, held leases move by the step
   *  (clock-steps.ts). Default `monotonicClock` with the default `clock`; with an injected
   *  `clock` and no `elapsed`, that clock's moves are time passing, never steps. */
  elapsed?: Clock;
}

/** States in which a unique key is taken (the SQL stores' partial unique index). */
const LIVE_STATES: readonly JobState[] = ['pending', 'retrying', 'running', 'sleeping'];
/** States a claim takes a due job from. */
const CLAIMABLE: readonly JobState[] = ['pending', 'retrying', 'sleeping'];
/** What retryJob revives. */
const RETRYABLE: readonly JobState[] = ['dead', 'cancelled', 'skipped'];
const DEFAULT_LIST_LIMIT = 50;
const DEFAULT_EVENTS_LIMIT = 100;

interface Subscription {
  onWake: (queue?: string) => void;
  onCancel: ((jobId: string) => void) | undefined;
}

export class MemoryStore implements JobStore {
  readonly capabilities: StoreCapabilities = { notifications: true, transactionalEnqueue: false };

  readonly #clock: Clock;
  readonly #steps: ClockSteps | undefined;
  /** Insertion order is id order, which `listJobs` relies on. */
  readonly #jobs = new Map<string, JobRecord>();
  readonly #events = new Map<string, JobEventEntry[]>();
  /** Every job's events by event id, in append order. */
  readonly #eventLog = new Map<number, JobEventEntry>();
  /** `queue \0 uniqueKey` → id of the live job holding it. */
  readonly #liveKeys = new Map<string, string>();
  readonly #subscriptions = new Set<Subscription>();
  /** Per schedule, its last enqueued tick. */
  readonly #schedules = new Map<string, Date>();
  /** Paused schedules: since when (pauseSchedule). */
  readonly #pausedSchedules = new Map<string, Date>();
  /** Per dead-job alert dedupe key, when its last alert went out and how many were held back since. */
  readonly #alerts = new Map<string, { sentAt: number; suppressed: number }>();
  /** Every queue ever enqueued to, paused or resumed, by name; prune keeps them. */
  readonly #queues = new Map<string, QueueInfo>();
  /** Every supervisor's last heartbeat, by workerId. */
  readonly #workers = new Map<string, WorkerInfo>();
  /** Per rate-limited queue, the times of its claims still inside its window. */
  readonly #starts = new Map<string, number[]>();
  /** Per job, the signals no wait has taken yet, oldest first (docs/durable-jobs.md). */
  readonly #mailboxes = new Map<string, Array<{ name: string; payload: unknown }>>();
  /** Per debounced job, its key and the burst's bound (migration 0019's columns). */
  readonly #debounced = new Map<string, { key: string; until: number | null }>();
  /** `queue \0 debounceKey` → id of the job of the key's current burst, if it is still one
   *  (`#burstHolder`). */
  readonly #bursts = new Map<string, string>();
  /** Per job of a fair queue, its tenant and rank (migration 0020's columns). */
  readonly #fair = new Map<string, { tenant: string | null; rank: number }>();
  /** `queue \0 tenant` ('' for the default tenant) → the last rank handed out. */
  readonly #tenantRanks = new Map<string, number>();
  /** Flows: what waits for what (src/flows). */
  readonly #graph = new MemoryFlowGraph();
  /** Closed buckets of throughput the inspector saved; pruneJobs leaves them. */
  readonly #throughputSummary = new MemoryThroughputSummary();
  #nextId = 1;
  #nextEventId = 1;

  constructor(options: MemoryStoreOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#steps = clockSteps(options.clock, options.elapsed);
  }

  async enqueueJobs(params: { jobs: readonly EnqueueJob[]; client?: SqlClient }): Promise<EnqueueResult[]> {
    for (const job of params.jobs) assertEnqueueJob(job);
    if (params.client !== undefined) {
      throw new InvalidOptionError('client', 'the memory store cannot join a SQL transaction (capabilities.transactionalEnqueue is false)');
    }
    const now = this.#now();
    // Every job's times by this store's clock, all checked before any job is written. A
    // debounced job is due delayMs from now.
    const jobs = params.jobs.map((input) => ({
      ...input,
      ...resolveJobTimes(input.debounce ? { ...input, runIn: input.debounce.delayMs } : input, now),
    }));
    const woken = new Set<string>();
    const results = jobs.map((input) => this.#insert(input, now, woken));
    this.#wake(woken);
    return results;
  }

  async claimJobs(params: ClaimParams): Promise<ClaimedJob[]> {
    const now = this.#now();
    const claimed: ClaimedJob[] = [];
    for (const entry of params.queues) {
      if (this.#queues.get(entry.queue)?.pausedAt) continue;
      const limit = Math.min(entry.limit, this.#rateAllowance(entry, now.getTime()));
      if (limit <= 0) continue;
      const keyLimit = entry.perKeyLimit ?? 1;
      const running = this.#runningByKey(entry.queue);
      // As the SQL claim: the first `limit` due jobs whose key is below its limit, then no
      // more of each key than its free slots.
      // A fair queue: its ranked jobs only, in rank order (the SQL stores' fair claim).
      const fair = entry.fairShare === true;
      const candidates = [...this.#jobs.values()]
        .filter(
          (job) =>
            job.queue === entry.queue &&
            (job.state === 'pending' || job.state === 'retrying' || job.state === 'sleeping') &&
            job.runAt.getTime() <= now.getTime() &&
            (!fair || this.#fair.has(job.id)) &&
            (job.concurrencyKey === null || (running.get(job.concurrencyKey) ?? 0) < keyLimit),
        )
        .sort(fair ? (a, b) => this.#fair.get(a.id)!.rank - this.#fair.get(b.id)!.rank || claimOrder(a, b) : claimOrder)
        .slice(0, limit);
      for (const job of candidates) {
        if (job.concurrencyKey !== null) {
          const taken = running.get(job.concurrencyKey) ?? 0;
          if (taken >= keyLimit) continue;
          running.set(job.concurrencyKey, taken + 1);
        }
        const from = job.state;
        job.state = 'running';
        job.attempt += 1;
        job.workerId = params.workerId;
        job.leaseToken = randomUUID();
        job.leaseExpiresAt = new Date(now.getTime() + params.leaseMs);
        job.updatedAt = now;
        job.waitingForSignal = null;
        this.#appendEvent(job, from, null, now);
        if (entry.rateLimit) this.#starts.get(entry.queue)!.push(now.getTime());
        claimed.push(copyJob(job) as ClaimedJob);
      }
    }
    return claimed;
  }

  async renewLeases(params: { leases: readonly Lease[]; leaseMs: number }): Promise<LeaseRenewal[]> {
    const now = this.#now();
    return params.leases.map((lease) => {
      // No expiry check: like `WHERE state = 'running' AND lease_token = $t`, an expired lease
      // that nobody rescued yet is still this worker's.
      const job = this.#leased(lease);
      if (!job) return 'lost';
      job.leaseExpiresAt = new Date(now.getTime() + params.leaseMs);
      job.updatedAt = now;
      return job.cancelRequestedAt === null ? 'renewed' : 'cancel';
    });
  }

  async setProgressIfRunning(params: { updates: readonly ProgressUpdate[] }): Promise<boolean[]> {
    const now = this.#now();
    return params.updates.map((update) => {
      const job = this.#leased(update);
      if (!job) return false;
      this.#setProgress(job, update, now);
      job.updatedAt = now;
      return true;
    });
  }

  async setStatesIfRunning(params: { outcomes: readonly JobOutcome[] }): Promise<boolean[]> {
    const now = this.#now();
    // Applying in order makes a second outcome for the same job fail its fence: the first
    // one already moved the row out of `running`.
    return params.outcomes.map((outcome) => {
      const job = this.#leased(outcome);
      if (!job) return false;
      if (outcome.lastProgress) this.#setProgress(job, outcome.lastProgress, now);
      if (outcome.state === 'waiting') {
        this.#waitForChildren(job, outcome.children, now);
        return true;
      }
      let to: JobState = outcome.state === 'snoozed' ? 'pending' : outcome.state === 'released' ? 'retrying' : outcome.state;
      if (job.cancelRequestedAt !== null && (to === 'retrying' || to === 'pending')) {
        // The job was to run again, but a cancel was asked for meanwhile: the request wins.
        to = 'cancelled';
        job.error = { ...CANCELLED_BY_REQUEST };
      } else if (outcome.state === 'completed') {
        job.result = toJson(outcome.result);
        job.error = null;
      } else {
        job.error = toJson(outcome.error);
        if (outcome.state === 'retrying' || outcome.state === 'snoozed' || outcome.state === 'released') {
          job.runAt = new Date(now.getTime() + outcome.delayMs);
        }
        // Neither a snooze nor a release spends an attempt.
        if (outcome.state === 'snoozed' || outcome.state === 'released') job.maxAttempts += 1;
      }
      this.#moveFromRunning(job, to, now);
      return true;
    });
  }

  async rescueExpiredJobs(params: RescueParams = {}): Promise<JobRecord[]> {
    const limit = rescueLimit(params);
    const now = this.#now();
    const overdue = (at: Date | null) => at !== null && at.getTime() < now.getTime();
    // Stable sorts of jobs in id order: ties stay in id order.
    const byTime = (at: (job: JobRecord) => Date) => (a: JobRecord, b: JobRecord) => at(a).getTime() - at(b).getTime();
    const jobs = [...this.#jobs.values()];
    // As the SQL stores: expired leases first, then jobs past their expiresAt, each longest
    // overdue first, `limit` in all.
    const leases = jobs.filter((job) => job.state === 'running' && overdue(job.leaseExpiresAt)).sort(byTime((job) => job.leaseExpiresAt!));
    const notRunning: readonly JobState[] = ['pending', 'retrying', 'waiting', 'sleeping'];
    const pastDeadline = jobs
      .filter((job) => notRunning.includes(job.state) && job.expiresAt !== null && job.expiresAt.getTime() <= now.getTime())
      .sort(byTime((job) => job.expiresAt!));
    const rescued: JobRecord[] = [];
    for (const job of [...leases, ...pastDeadline].slice(0, limit)) {
      const expired = job.expiresAt !== null && job.expiresAt.getTime() <= now.getTime();
      if (job.state !== 'running') {
        const from = job.state;
        const { code, message } = new JobExpired(job.expiresAt!);
        job.error = { code, message };
        this.#setState(job, 'dead', now);
        // No worker: the reaper ends a job that waits (a waiting one's dependents follow).
        this.#appendEvent(job, from, job.error, now, null);
      } else if (job.cancelRequestedAt !== null) {
        job.error = { ...CANCELLED_BY_REQUEST };
        this.#moveFromRunning(job, 'cancelled', now);
      } else {
        job.error = { code: 'lease_expired', message: `lease of worker "${job.workerId}" expired` };
        if (job.attempt >= job.maxAttempts || expired) {
          this.#moveFromRunning(job, 'dead', now);
        } else {
          job.runAt = now;
          this.#moveFromRunning(job, 'retrying', now);
        }
      }
      rescued.push(copyJob(job));
    }
    return rescued.sort((a, b) => Number(a.id) - Number(b.id));
  }

  async cancelJob(params: { id: string }): Promise<{ job: JobRecord; cancelled: boolean } | null> {
    const job = this.#jobs.get(params.id);
    if (!job) return null;
    const cancelled = this.#cancel(job) === 'cancelled';
    return { job: copyJob(job), cancelled };
  }

  /** A job no worker holds is cancelled; a running one is asked to cancel (its worker is told). */
  #cancel(job: JobRecord): 'cancelled' | 'requested' | 'ended' {
    if (job.state === 'running') {
      if (job.cancelRequestedAt === null) {
        job.cancelRequestedAt = this.#now();
        job.updatedAt = job.cancelRequestedAt;
      }
      this.#notifyCancel(job.id);
      return 'requested';
    }
    if (job.state !== 'pending' && job.state !== 'retrying' && job.state !== 'waiting' && job.state !== 'sleeping') return 'ended';
    const now = this.#now();
    const from = job.state;
    job.error = { ...CANCELLED_BY_REQUEST };
    this.#setState(job, 'cancelled', now);
    this.#appendEvent(job, from, job.error, now, null);
    return 'cancelled';
  }

  /** The newest jobs matching the filters and `also`, at most `limit`: the store's own objects. */
  #newestMatching(filters: JobFilters, also: (job: JobRecord) => boolean, limit: number): JobRecord[] {
    const found: JobRecord[] = [];
    for (const job of [...this.#jobs.values()].reverse()) {
      if (found.length >= limit) break;
      if (filters.queue !== undefined && job.queue !== filters.queue) continue;
      if (filters.state !== undefined && job.state !== filters.state) continue;
      if (filters.kind !== undefined && job.kind !== filters.kind) continue;
      if (also(job)) found.push(job);
    }
    return found;
  }

  async retryJob(params: { id: string }): Promise<{ job: JobRecord; retried: boolean } | null> {
    const job = this.#jobs.get(params.id);
    if (!job) return null;
    const moved = this.#retryJobs([job.id], true);
    return { job: copyJob(job), retried: moved.has(job.id) };
  }

  async getJob(params: { id: string }): Promise<JobRecord | null> {
    const job = this.#jobs.get(params.id);
    return job ? copyJob(job) : null;
  }

  async listJobs(params: ListJobsParams): Promise<JobRecord[]> {
    const limit = params.limit ?? DEFAULT_LIST_LIMIT;
    const before = params.beforeId === undefined ? undefined : Number(params.beforeId);
    const page: JobRecord[] = [];
    const newestFirst = [...this.#jobs.values()].reverse();
    for (const job of newestFirst) {
      if (page.length >= limit) break;
      if (before !== undefined && !(Number(job.id) < before)) continue;
      if (params.queue !== undefined && job.queue !== params.queue) continue;
      if (params.state !== undefined && job.state !== params.state) continue;
      if (params.kind !== undefined && job.kind !== params.kind) continue;
      page.push(copyJob(job));
    }
    return page;
  }

  async getJobEvents(params: { id: string }): Promise<JobEvent[]> {
    return (this.#events.get(params.id) ?? []).map(({ id, ...event }) => copyEvent(event));
  }

  async countJobs(): Promise<JobCount[]> {
    const counts = new Map<string, JobCount>();
    for (const job of this.#jobs.values()) {
      const key = `${job.queue}\0${job.state}`;
      const entry = counts.get(key) ?? { queue: job.queue, state: job.state, count: 0 };
      entry.count += 1;
      counts.set(key, entry);
    }
    return [...counts.values()].sort(
      (a, b) => compareStrings(a.queue, b.queue) || compareStrings(a.state, b.state),
    );
  }

  async pruneJobs(params: PruneParams): Promise<number> {
    const completedBefore = params.completedBefore?.getTime();
    const deadBefore = params.deadBefore?.getTime();
    const pruned = await pruneInBatches(params, async (limit) => {
      let deleted = 0;
      for (const job of this.#jobs.values()) {
        if (deleted === limit) break;
        if (job.finishedAt === null) continue;
        const finished = job.finishedAt.getTime();
        const cutoff =
          job.state === 'completed' || job.state === 'skipped'
            ? completedBefore
            : job.state === 'dead' || job.state === 'cancelled'
              ? deadBefore
              : undefined;
        if (cutoff === undefined || !(finished < cutoff) || this.#waitedFor(job.id)) continue;
        this.#forget(job);
        deleted += 1;
      }
      return deleted;
    });
    if (deadBefore !== undefined) for (const [key, alert] of this.#alerts) if (alert.sentAt < deadBefore) this.#alerts.delete(key);
    return pruned;
  }

  async listJobEvents(params: ListJobEventsParams): Promise<JobEventEntry[]> {
    // Transitions only, as a SQL store's history holds them: creations come from listNewJobs.
    const page = walkIds(params, this.#nextEventId, (id) => {
      const entry = this.#eventLog.get(id);
      return entry && entry.fromState !== null ? entry : undefined;
    });
    return page.map((entry) => ({ ...copyEvent(entry), id: entry.id }));
  }

  async listNewJobs(params: ListNewJobsParams): Promise<NewJob[]> {
    const page = walkIds(params, this.#nextId, (id) => this.#jobs.get(String(id)));
    // The first entry of a job's story is its creation (this store keeps one for every job).
    return page.map((job) => ({ id: job.id, queue: job.queue, state: this.#events.get(job.id)?.[0]?.toState ?? job.state, createdAt: new Date(job.createdAt) }));
  }

  async scanJobs(params: ScanJobsParams): Promise<JobPage> {
    const page = scanJobs([...this.#jobs.values()].reverse(), params);
    return { ...page, jobs: page.jobs.map((job) => toJobListing(copyJob(job))) };
  }

  async countJobsUpTo(params: CountJobsUpToParams): Promise<BoundedCount> {
    const max = Math.max(0, params.max);
    const count = this.#newestMatching(params, () => true, max + 1).length;
    return { count: Math.min(count, max), capped: count > max };
  }

  async retryJobsMatching(params: JobFilters & { max: number; error?: ErrorMatch }): Promise<BulkResult> {
    const max = Math.max(0, params.max);
    const { error } = params;
    const retryable = (job: JobRecord) => RETRYABLE.includes(job.state) && (error === undefined || errorMatches(job, error));
    const picked = this.#newestMatching(params, retryable, max + 1);
    // One job per (queue, unique key), the newest: two revived holders would share the key.
    const seeds = new Map<string, string>();
    for (const job of picked.slice(0, max)) {
      const key = job.uniqueKey === null ? `#${job.id}` : `${job.queue}\0${job.uniqueKey}`;
      if (!seeds.has(key)) seeds.set(key, job.id);
    }
    const moved = this.#retryJobs([...seeds.values()], true);
    const applied = [...seeds.values()].filter((id) => moved.has(id)).length;
    return { matched: Math.min(picked.length, max), applied, capped: picked.length > max };
  }

  async getTenantBacklogs(params: { queue: string; maxScan?: number }): Promise<TenantBacklogs> {
    const maxScan = Math.max(1, params.maxScan ?? 10_000);
    const fair = [...this.#tenantRanks.keys()].some((key) => key.startsWith(`${params.queue}\0`));
    const byTenant = new Map<string | null, TenantBacklog>();
    const read = { waiting: 0, running: 0 };
    for (const job of this.#jobs.values()) {
      if (!fair || job.queue !== params.queue) continue;
      const phase = job.state === 'running' ? 'running' : ['pending', 'retrying', 'sleeping'].includes(job.state) && this.#fair.has(job.id) ? 'waiting' : null;
      if (phase === null || (read[phase] += 1) > maxScan) continue;
      const tenant = this.#fair.get(job.id)?.tenant ?? job.tenant;
      const backlog = byTenant.get(tenant) ?? { tenant, waiting: 0, running: 0 };
      backlog[phase] += 1;
      byTenant.set(tenant, backlog);
    }
    const tenants = [...byTenant.values()].sort(
      (a, b) => b.waiting - a.waiting || b.running - a.running || (a.tenant === null ? -1 : b.tenant === null ? 1 : compareStrings(a.tenant, b.tenant)),
    );
    return { tenants, partial: read.waiting > maxScan || read.running > maxScan };
  }

  async groupDeadJobs(params: GroupDeadJobsParams): Promise<DeadJobGroups> {
    const answer = groupDeadJobs([...this.#jobs.values()].reverse(), params);
    return { ...answer, groups: answer.groups.map((group) => ({ ...group, firstAt: copyDate(group.firstAt), lastAt: copyDate(group.lastAt) })) };
  }

  async cancelJobsMatching(params: JobFilters & { max: number }): Promise<BulkResult> {
    const max = Math.max(0, params.max);
    const live: readonly JobState[] = ['pending', 'retrying', 'waiting', 'sleeping', 'running'];
    const picked = this.#newestMatching(params, (job) => live.includes(job.state), max + 1);
    const targets = picked.slice(0, max);
    for (const job of targets) this.#cancel(job);
    return { matched: targets.length, applied: targets.length, capped: picked.length > max };
  }

  async getQueueDepths(): Promise<QueueDepth[]> {
    return queueDepths(this.#jobs.values(), this.#now());
  }

  async getQueueBacklogs(params: { maxCount?: number }): Promise<QueueBacklog[]> {
    return queueBacklogs(this.#jobs.values(), this.#now(), params.maxCount).map((backlog) => ({
      ...backlog,
      counts: { ...backlog.counts },
      later: { ...backlog.later },
      oldestRunAt: copyDate(backlog.oldestRunAt),
    }));
  }

  async countJobTransitions(params: CountJobTransitionsParams): Promise<TransitionCount[]> {
    const events = [...this.#eventLog.values()].map((event) => ({ queue: this.#jobs.get(event.jobId)!.queue, event }));
    return countTransitions(events, params);
  }

  async getThroughput(params: GetThroughputParams): Promise<ThroughputBucket[]> {
    const events = [...this.#eventLog.values()].map((event) => ({ queue: this.#jobs.get(event.jobId)!.queue, event }));
    return throughput(events, params);
  }

  async getThroughputSummary(params: GetThroughputSummaryParams): Promise<SavedThroughputBucket[]> {
    return this.#throughputSummary.get(params);
  }

  async saveThroughputSummary(params: SaveThroughputSummaryParams): Promise<void> {
    this.#throughputSummary.save(params);
  }

  async deleteJob(params: { id: string }): Promise<{ job: JobRecord; deleted: boolean } | null> {
    const job = this.#jobs.get(params.id);
    if (!job) return null;
    // As the SQL stores: neither a job a worker holds nor one that waiting jobs wait for.
    if (job.state === 'running' || this.#waitedFor(job.id)) return { job: copyJob(job), deleted: false };
    this.#forget(job);
    if (job.uniqueKey !== null && this.#liveKeys.get(keyOf(job.queue, job.uniqueKey)) === job.id) {
      this.#liveKeys.delete(keyOf(job.queue, job.uniqueKey));
    }
    return { job: copyJob(job), deleted: true };
  }

  async claimAlert(params: { key: string; windowMs: number }): Promise<AlertClaim> {
    const now = this.#now().getTime();
    const last = this.#alerts.get(params.key);
    if (last && last.sentAt > now - params.windowMs) {
      last.suppressed += 1;
      return { send: false };
    }
    this.#alerts.set(params.key, { sentAt: now, suppressed: 0 });
    return { send: true, suppressed: last?.suppressed ?? 0 };
  }

  async pauseQueue(params: { queue: string }): Promise<QueueInfo> {
    const queue = this.#recordQueue(params.queue, this.#now());
    queue.pausedAt ??= this.#now();
    return { ...queue };
  }

  async resumeQueue(params: { queue: string }): Promise<QueueInfo> {
    const queue = this.#recordQueue(params.queue, this.#now());
    queue.pausedAt = null;
    this.#wake([params.queue]);
    return { ...queue };
  }

  async listQueues(): Promise<QueueInfo[]> {
    return [...this.#queues.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((queue) => ({ ...queue }));
  }

  async recordWorker(params: { worker: WorkerHeartbeat }): Promise<void> {
    const now = this.#now();
    for (const [id, worker] of this.#workers) {
      if (id !== params.worker.workerId && worker.lastSeenAt.getTime() < now.getTime() - WORKER_FORGET_MS) this.#workers.delete(id);
    }
    const startedAt = this.#workers.get(params.worker.workerId)?.startedAt ?? now;
    const held = params.worker.held.map(({ id, queue }) => ({ id, queue }));
    this.#workers.set(params.worker.workerId, { ...params.worker, queues: [...params.worker.queues], held, startedAt, lastSeenAt: now });
  }

  async removeWorker(params: { workerId: string }): Promise<void> {
    this.#workers.delete(params.workerId);
  }

  async listWorkers(): Promise<WorkerInfo[]> {
    return [...this.#workers.values()]
      .sort((a, b) => (a.workerId < b.workerId ? -1 : a.workerId > b.workerId ? 1 : 0))
      .map((worker) => ({ ...worker, queues: [...worker.queues], held: worker.held && worker.held.map((job) => ({ ...job })) }));
  }

  async getSchedules(params: { names: readonly string[] }): Promise<ScheduleStates> {
    const schedules = [...new Set(params.names)]
      .filter((name) => this.#schedules.has(name))
      .sort(compareStrings)
      .map((name) => this.#scheduleState(name));
    return { now: this.#now(), schedules };
  }

  async pauseSchedule(params: { name: string }): Promise<ScheduleState | null> {
    if (!this.#schedules.has(params.name)) return null;
    if (!this.#pausedSchedules.has(params.name)) this.#pausedSchedules.set(params.name, this.#now());
    return this.#scheduleState(params.name);
  }

  async resumeSchedule(params: { name: string }): Promise<ScheduleState | null> {
    if (!this.#schedules.has(params.name)) return null;
    this.#pausedSchedules.delete(params.name);
    return this.#scheduleState(params.name);
  }

  #scheduleState(name: string): ScheduleState {
    return { name, lastTickAt: copyDate(this.#schedules.get(name)!), pausedAt: copyDate(this.#pausedSchedules.get(name) ?? null) };
  }

  async enqueueScheduledJobs(params: { advances: readonly ScheduleAdvance[] }): Promise<boolean[]> {
    if (new Set(params.advances.map((a) => a.schedule)).size < params.advances.length) {
      throw new InvalidOptionError('advances', 'names a schedule twice; advance each at most once per call');
    }
    const now = this.#now();
    const woken = new Set<string>();
    const applied = params.advances.map((advance) => {
      const last = this.#schedules.get(advance.schedule);
      const current = advance.previousTickAt === null ? last === undefined : last?.getTime() === advance.previousTickAt.getTime();
      // A tick after the store's now is never written, whatever the caller thought the time was.
      if (!current || advance.tickAt.getTime() > now.getTime()) return false;
      this.#schedules.set(advance.schedule, copyDate(advance.tickAt));
      // Paused: the schedule advances, its ticks enqueue nothing.
      if (!this.#pausedSchedules.has(advance.schedule)) for (const job of advance.jobs) this.#insert(job, now, woken);
      return true;
    });
    this.#wake(woken);
    return applied;
  }

  async enqueueFlow(params: { name: string; jobs: readonly FlowJob[]; client?: SqlClient }): Promise<{ flowId: string; jobs: JobRecord[] }> {
    if (params.client !== undefined) {
      throw new InvalidOptionError('client', 'the memory store cannot join a SQL transaction (capabilities.transactionalEnqueue is false)');
    }
    // Checked before anything is written, as the SQL function's rollback would leave nothing.
    for (const job of params.jobs) assertAbsoluteTimes('in a flow', job);
    for (const job of params.jobs) {
      for (const dep of job.dependsOn) if ('jobId' in dep && !this.#jobs.has(dep.jobId)) throw new JobNotFoundError(dep.jobId);
    }
    const now = this.#now();
    const flowId = this.#graph.addFlow(params.name, now);
    const woken = new Set<string>();
    const ids = params.jobs.map((input) => {
      const state = input.dependsOn.length > 0 ? 'waiting' : 'pending';
      const { job } = this.#insert({ ...input, uniqueKey: null }, now, woken, { state, flowId, node: input.node });
      if (input.dependsOn.length > 0) this.#graph.open.set(job.id, input.dependsOn.length);
      return job.id;
    });
    const stored = new Set<string>();
    params.jobs.forEach((input, i) => {
      for (const dep of input.dependsOn) {
        const dependsOnId = 'index' in dep ? ids[dep.index]! : dep.jobId;
        if ('jobId' in dep) stored.add(dep.jobId);
        this.#graph.addEdge({ jobId: ids[i]!, dependsOnId, name: dep.name, role: 'parent', onFailure: dep.onFailure });
      }
    });
    // Stored parents that ended already: replayed for the new jobs only.
    const only = new Set(ids);
    for (const id of [...stored].sort((a, b) => Number(a) - Number(b))) {
      const parent = this.#jobs.get(id)!;
      if (FINAL_JOB_STATES.includes(parent.state)) this.#releaseDependents(parent, now, only);
    }
    this.#wake(ids.map((id) => this.#jobs.get(id)!).filter((job) => job.state === 'pending').map((job) => job.queue));
    return { flowId, jobs: ids.map((id) => copyJob(this.#jobs.get(id)!)) };
  }

  async getJobDependencies(params: { id: string }): Promise<Array<JobDependency & { job: JobRecord }>> {
    return (this.#graph.dependencies.get(params.id) ?? [])
      .filter((edge) => this.#jobs.has(edge.dependsOnId))
      .sort((a, b) => Number(a.dependsOnId) - Number(b.dependsOnId))
      .map((edge) => ({ ...edge, job: copyJob(this.#jobs.get(edge.dependsOnId)!) }));
  }

  async getFlow(params: { id: string } | { jobId: string }): Promise<FlowRecord | null> {
    const flowId = 'id' in params ? params.id : this.#graph.membership.get(params.jobId)?.flowId;
    return flowId === undefined ? null : this.#graph.flowOf(flowId, (id) => this.#flowJobs(id));
  }

  async cancelFlow(params: { id: string }): Promise<{ cancelled: number; requested: number } | null> {
    if (!this.#graph.flows.has(params.id)) return null;
    const now = this.#now();
    const jobs = this.#flowJobs(params.id).map(({ job }) => this.#jobs.get(job.id)!);
    // As one SQL statement: every row first, then the history (and what it sets off).
    const cancelled: Array<{ job: JobRecord; from: JobState }> = [];
    let requested = 0;
    for (const job of jobs) {
      if (job.state === 'running') {
        job.cancelRequestedAt ??= now;
        job.updatedAt = now;
        this.#notifyCancel(job.id);
        requested += 1;
      } else if (job.state === 'pending' || job.state === 'retrying' || job.state === 'waiting' || job.state === 'sleeping') {
        cancelled.push({ job, from: job.state });
        job.error = { code: 'cancelled', message: 'flow cancelled by request' };
        this.#setState(job, 'cancelled', now);
      }
    }
    for (const { job, from } of cancelled) this.#appendEvent(job, from, job.error, now, null);
    return { cancelled: cancelled.length, requested };
  }

  async retryFlow(params: { id: string }): Promise<{ retried: number; left: number } | null> {
    if (!this.#graph.flows.has(params.id)) return null;
    const failed = () => this.#flowJobs(params.id).filter(({ job }) => RETRYABLE.includes(job.state)).map(({ job }) => job.id);
    const seeds = failed();
    const moved = this.#retryJobs(seeds, false);
    return { retried: seeds.filter((id) => moved.has(id)).length, left: failed().length };
  }

  async subscribe(onWake: (queue?: string) => void, onCancel?: (jobId: string) => void): Promise<Unsubscribe> {
    const subscription: Subscription = { onWake, onCancel };
    this.#subscriptions.add(subscription);
    return async () => {
      this.#subscriptions.delete(subscription);
    };
  }

  async checkpointSteps(params: { steps: readonly StepCheckpoint[] }): Promise<boolean[]> {
    return params.steps.map((step) => {
      const job = this.#leased(step);
      if (!job) return false;
      job.steps.push({ kind: 'step', name: step.name, at: this.#now(), result: toJson(step.result ?? null) });
      return true;
    });
  }

  async suspendIfRunning(request: SuspendRequest): Promise<SuspendAnswer> {
    const job = this.#leased(request);
    if (!job) return { answer: 'lost' };
    const now = this.#now();
    if (request.kind === 'signal') {
      const mailbox = this.#mailboxes.get(job.id) ?? [];
      const index = mailbox.findIndex((signal) => signal.name === request.signal);
      if (index >= 0) {
        const { payload } = mailbox.splice(index, 1)[0]!;
        job.steps.push({ kind: 'signal', name: request.name, at: now, signal: request.signal, status: 'received', until: null, payload });
        return { answer: 'received', payload: structuredClone(payload) };
      }
    }
    const until = 'at' in request.wake ? new Date(request.wake.at.getTime()) : new Date(now.getTime() + request.wake.delayMs);
    const step = (status: 'waiting' | 'timedOut'): JobStep =>
      request.kind === 'sleep'
        ? { kind: 'sleep', name: request.name, at: now, until }
        : { kind: 'signal', name: request.name, at: now, signal: request.signal, status, until: until.getTime() >= NEVER.getTime() ? null : until };
    if (until.getTime() <= now.getTime()) {
      job.steps.push(step('timedOut'));
      return { answer: request.kind === 'signal' ? 'timedOut' : 'awake' };
    }
    if (job.cancelRequestedAt !== null) {
      job.error = { ...CANCELLED_BY_REQUEST };
      this.#moveFromRunning(job, 'cancelled', now);
      return { answer: 'cancelled' };
    }
    job.steps.push(step('waiting'));
    job.runAt = until;
    job.waitingForSignal = request.kind === 'signal' ? request.signal : null;
    // No attempt spent: the next claim adds one.
    job.maxAttempts += 1;
    job.error = null;
    job.leaseToken = null;
    job.leaseExpiresAt = null;
    this.#setState(job, 'sleeping', now);
    this.#appendEvent(job, 'running', sleepReason(request, until), now);
    return { answer: 'sleeping' };
  }

  async nextDueIn(params: NextDueQuestion): Promise<number | null> {
    const now = this.#now().getTime();
    const since = now - (params.sinceMs ?? 0);
    const queues = new Set(params.queues);
    let first: number | null = null;
    for (const job of this.#jobs.values()) {
      if (!queues.has(job.queue) || !(job.state === 'pending' || job.state === 'retrying' || job.state === 'sleeping')) continue;
      // As the SQL store's index: a pending job counts only when enqueued for later.
      if (job.state === 'pending' && job.runAt.getTime() <= job.createdAt.getTime()) continue;
      const at = job.runAt.getTime();
      if (at > since && at - now <= params.withinMs && (first === null || at < first)) first = at;
    }
    return first === null ? null : Math.max(0, first - now);
  }

  async sendSignal(params: { id: string; name: string; payload: unknown; client?: SqlClient }): Promise<SignalDelivery> {
    assertSignal(params);
    if (params.client !== undefined) {
      throw new InvalidOptionError('client', 'the memory store cannot join a SQL transaction (capabilities.transactionalEnqueue is false)');
    }
    const job = this.#jobs.get(params.id);
    if (!job) throw new JobNotFoundError(params.id);
    if (FINAL_JOB_STATES.includes(job.state)) throw new JobEndedError(job.id, job.state);
    const mailbox = this.#mailboxes.get(job.id) ?? [];
    this.#mailboxes.set(job.id, mailbox);
    mailbox.push({ name: params.name, payload: toJson(params.payload ?? null) });
    if (job.state !== 'sleeping' || job.waitingForSignal !== params.name) return { delivered: 'queued', state: job.state };
    const now = this.#now();
    job.runAt = now;
    job.waitingForSignal = null;
    this.#setState(job, 'pending', now);
    this.#appendEvent(job, 'sleeping', { code: 'signal', message: `signal "${params.name}" arrived` }, now, job.workerId);
    this.#wake([job.queue]);
    return { delivered: 'woke', state: 'pending' };
  }

  async close(): Promise<void> {
    this.#subscriptions.clear();
  }

  #recordQueue(name: string, now: Date): QueueInfo {
    let queue = this.#queues.get(name);
    if (!queue) {
      queue = { name, createdAt: now, pausedAt: null };
      this.#queues.set(name, queue);
    }
    return queue;
  }

  /** Every operation's time; first moves held leases by a step of the clock, if any. */
  #now(): Date {
    const step = this.#steps?.take() ?? 0;
    if (step !== 0) {
      for (const job of this.#jobs.values()) {
        if (job.state === 'running' && job.leaseExpiresAt !== null) job.leaseExpiresAt = new Date(job.leaseExpiresAt.getTime() + step);
      }
    }
    return new Date(this.#clock.now());
  }

  /** Inserts one job, or answers the live holder of its unique key. */
  #insert(
    input: EnqueueJob,
    now: Date,
    woken: Set<string>,
    flow?: { state: 'pending' | 'waiting'; flowId: string; node: string },
  ): EnqueueResult {
    const uniqueKey = input.uniqueKey ?? null;
    const debounce = input.debounce ?? null;
    // As next_fair_rank: taken first, whatever the enqueue then does.
    const fair = input.fairShare ? { tenant: input.fairShare.tenant, rank: this.#nextFairRank(input.queue, input.fairShare) } : null;
    let replaced = false;
    if (debounce !== null) {
      const holder = this.#burstHolder(input.queue, debounce.key);
      if (holder) {
        const until = this.#debounced.get(holder.id)!.until;
        const runAt = input.runAt!.getTime();
        this.#rewrite(holder, { ...input, runAt: new Date(until === null ? runAt : Math.min(runAt, until)) }, now);
        woken.add(holder.queue);
        return { job: copyJob(holder), created: false };
      }
    } else if (uniqueKey !== null) {
      const existingId = this.#liveKeys.get(keyOf(input.queue, uniqueKey));
      const existing = existingId === undefined ? undefined : this.#jobs.get(existingId);
      const mode = input.onConflict ?? 'return';
      if (existing) {
        const busy = existing.state === 'running' || existing.state === 'sleeping';
        if (mode === 'return' || (mode === 'replace' && busy)) return { job: copyJob(existing), created: false };
        if (!busy) {
          // Attempts spent stay spent; at least one is left.
          this.#rewrite(existing, { ...input, maxAttempts: Math.max(input.maxAttempts, existing.attempt + 1) }, now);
          woken.add(existing.queue);
          return { job: copyJob(existing), created: false, replaced: true };
        }
        this.#cancelReplaced(existing, now);
        replaced = true;
      }
    }
    const job: JobRecord = {
      id: String(this.#nextId++),
      queue: input.queue,
      kind: input.kind,
      payload: input.payload === undefined ? {} : toJson(input.payload),
      state: flow?.state ?? 'pending',
      priority: input.priority ?? 0,
      runAt: input.runAt ? new Date(input.runAt.getTime()) : now,
      attempt: 0,
      maxAttempts: input.maxAttempts,
      uniqueKey,
      concurrencyKey: input.concurrencyKey ?? null,
      workerId: null,
      leaseToken: null,
      leaseExpiresAt: null,
      result: null,
      error: null,
      createdAt: now,
      updatedAt: now,
      finishedAt: null,
      expiresAt: input.expiresAt ? new Date(input.expiresAt.getTime()) : null,
      cancelRequestedAt: null,
      progress: null,
      traceContext: input.traceContext ? toJson(input.traceContext) : null,
      steps: [],
      waitingForSignal: null,
      tenant: fair?.tenant ?? null,
      debounceKey: debounce?.key ?? null,
    };
    this.#jobs.set(job.id, job);
    this.#recordQueue(job.queue, now);
    this.#events.set(job.id, []);
    if (flow) this.#graph.membership.set(job.id, { flowId: flow.flowId, node: flow.node });
    if (uniqueKey !== null) this.#liveKeys.set(keyOf(job.queue, uniqueKey), job.id);
    if (fair !== null) this.#fair.set(job.id, fair);
    if (debounce !== null) {
      const until = debounce.maxWaitMs === undefined ? null : now.getTime() + debounce.maxWaitMs;
      this.#debounced.set(job.id, { key: debounce.key, until });
      this.#bursts.set(keyOf(job.queue, debounce.key), job.id);
    }
    this.#appendEvent(job, null, null, now);
    woken.add(job.queue);
    return { job: copyJob(job), created: true, ...(replaced ? { replaced } : {}) };
  }

  /** The tenant's next rank: after its last by 1 / weight, never below the queue's frontier
   *  (the lowest rank waiting to be claimed; with none, the highest handed out). */
  #nextFairRank(queue: string, { tenant, weight }: { tenant: string | null; weight: number }): number {
    let frontier: number | undefined;
    for (const [id, { rank }] of this.#fair) {
      const job = this.#jobs.get(id);
      if (!job || job.queue !== queue || !CLAIMABLE.includes(job.state)) continue;
      if (frontier === undefined || rank < frontier) frontier = rank;
    }
    if (frontier === undefined) {
      for (const [key, rank] of this.#tenantRanks) {
        if (key.startsWith(`${queue}\0`) && (frontier === undefined || rank > frontier)) frontier = rank;
      }
    }
    const key = keyOf(queue, tenant ?? '');
    const last = this.#tenantRanks.get(key);
    const rank = last === undefined ? (frontier ?? 0) : Math.max(last + 1 / weight, frontier ?? 0);
    this.#tenantRanks.set(key, rank);
    return rank;
  }

  /** The job of the key's burst: debounced with it and never claimed (pending, attempt 0),
   *  as migration 0019's jobs_debounce_idx holds it. */
  #burstHolder(queue: string, key: string): JobRecord | undefined {
    const id = this.#bursts.get(keyOf(queue, key));
    const job = id === undefined ? undefined : this.#jobs.get(id);
    return job && job.state === 'pending' && job.attempt === 0 ? job : undefined;
  }

  /** Whether reviving `job` to pending would give its debounce key two bursts' jobs (the SQL
   *  stores' unique index refuses it). */
  #debounceTaken(job: JobRecord): boolean {
    const debounce = this.#debounced.get(job.id);
    if (!debounce || job.attempt > 0) return false;
    const holder = this.#burstHolder(job.queue, debounce.key);
    return holder !== undefined && holder.id !== job.id;
  }

  /** A pending or retrying job takes a new enqueue's kind, payload, times and options. */
  #rewrite(job: JobRecord, input: EnqueueJob, now: Date): void {
    job.kind = input.kind;
    job.payload = input.payload === undefined ? {} : toJson(input.payload);
    job.priority = input.priority ?? 0;
    job.runAt = new Date(input.runAt!.getTime());
    job.maxAttempts = input.maxAttempts;
    job.concurrencyKey = input.concurrencyKey ?? null;
    job.expiresAt = input.expiresAt ? new Date(input.expiresAt.getTime()) : null;
    job.traceContext = input.traceContext ? toJson(input.traceContext) : null;
    job.updatedAt = now;
  }

  /** A running or sleeping holder of a unique key that `replaceRunning` takes: cancelled at
   *  once with its lease gone, so nothing its attempt writes lands; its worker is told. */
  #cancelReplaced(job: JobRecord, now: Date): void {
    const from = job.state;
    job.error = { code: 'replaced', message: 'replaced by a new job with its unique key' };
    job.leaseToken = null;
    job.leaseExpiresAt = null;
    job.waitingForSignal = null;
    this.#setState(job, 'cancelled', now);
    this.#appendEvent(job, from, job.error, now, null);
    this.#notifyCancel(job.id);
  }

  /** Running jobs of a queue per concurrency key. */
  #runningByKey(queue: string): Map<string, number> {
    const running = new Map<string, number>();
    for (const job of this.#jobs.values()) {
      if (job.queue !== queue || job.state !== 'running' || job.concurrencyKey === null) continue;
      running.set(job.concurrencyKey, (running.get(job.concurrencyKey) ?? 0) + 1);
    }
    return running;
  }

  /** Claims a queue may still make now: unlimited without a rate limit, else its max less
   *  its claims in the last interval (a start at t counts while now - interval < t). */
  #rateAllowance(entry: ClaimQueue, now: number): number {
    if (!entry.rateLimit) return Infinity;
    const { max, intervalMs } = entry.rateLimit;
    const recent = (this.#starts.get(entry.queue) ?? []).filter((at) => at > now - intervalMs);
    this.#starts.set(entry.queue, recent);
    return Math.max(0, max - recent.length);
  }

  #setProgress(job: JobRecord, report: ProgressReport, now: Date): void {
    job.progress = { percent: report.percent, message: report.message, at: now };
  }

  /** The row, if it is running under this lease. */
  #leased(lease: Lease): JobRecord | undefined {
    const job = this.#jobs.get(lease.id);
    return job && job.state === 'running' && job.leaseToken === lease.leaseToken ? job : undefined;
  }

  /** Ends an attempt: clears the lease (the worker id stays, for the record) and appends the
   *  transition with the row's error. */
  #moveFromRunning(job: JobRecord, to: JobState, now: Date): void {
    job.leaseToken = null;
    job.leaseExpiresAt = null;
    this.#setState(job, to, now);
    this.#appendEvent(job, 'running', to === 'completed' ? null : job.error, now);
  }

  /** Removes the job and its history. */
  #forget(job: JobRecord): void {
    for (const event of this.#events.get(job.id) ?? []) this.#eventLog.delete(Number(event.id));
    this.#jobs.delete(job.id);
    this.#events.delete(job.id);
    this.#mailboxes.delete(job.id);
    this.#debounced.delete(job.id);
    this.#fair.delete(job.id);
    this.#graph.forget(job.id);
  }

  #setState(job: JobRecord, to: JobState, now: Date): void {
    job.state = to;
    job.updatedAt = now;
    job.finishedAt = FINAL_JOB_STATES.includes(to) ? now : null;
    if (job.uniqueKey === null) return;
    const key = keyOf(job.queue, job.uniqueKey);
    if (LIVE_STATES.includes(to)) this.#liveKeys.set(key, job.id);
    else if (this.#liveKeys.get(key) === job.id) this.#liveKeys.delete(key);
  }

  /** Appends the transition that just moved `job` into its current state. */
  #appendEvent(
    job: JobRecord,
    fromState: JobState | null,
    error: JobErrorInfo | null,
    at: Date,
    workerId: string | null = job.workerId,
  ): void {
    const id = this.#nextEventId++;
    const entry: JobEventEntry = {
      id: String(id),
      jobId: job.id,
      fromState,
      toState: job.state,
      attempt: job.attempt,
      workerId,
      at,
      error: error === null ? null : structuredClone(error),
    };
    this.#events.get(job.id)?.push(entry);
    this.#eventLog.set(id, entry);
    // As the SQL stores' trigger (migration 0009): a job others wait for has ended.
    const ended = FINAL_JOB_STATES.includes(job.state) && (fromState === null || !FINAL_JOB_STATES.includes(fromState));
    if (ended && this.#graph.dependents.has(job.id)) this.#releaseDependents(job, at);
  }

  /** The end of `dep` as its waiting dependents see it (only those in `only`, when given):
   *  each one's count goes down, and it is due when that reaches 0; or, when `dep` did not
   *  complete, it follows its edge's failure policy. Dependents in id order, as SQL locks them. */
  #releaseDependents(dep: JobRecord, at: Date, only?: ReadonlySet<string>): void {
    const edges = [...(this.#graph.dependents.get(dep.id) ?? [])].sort((a, b) => Number(a.jobId) - Number(b.jobId));
    for (const edge of edges) {
      const job = this.#jobs.get(edge.jobId);
      if (!job || job.state !== 'waiting' || this.#graph.ended.has(edge) || (only && !only.has(job.id))) continue;
      this.#graph.ended.add(edge);
      const open = this.#graph.open.get(job.id) ?? 0;
      if (dep.state === 'completed' || edge.onFailure === 'run') {
        if (open > 1) {
          this.#graph.open.set(job.id, open - 1);
          continue;
        }
        this.#graph.open.set(job.id, 0);
        const failed = (this.#graph.dependencies.get(job.id) ?? [])
          .map((e) => ({ e, parent: this.#jobs.get(e.dependsOnId) }))
          .filter(({ parent }) => parent !== undefined && parent.state !== 'completed')
          .sort((a, b) => Number(a.e.dependsOnId) - Number(b.e.dependsOnId));
        const reason: JobErrorInfo | null =
          failed.length === 0
            ? null
            : {
                code: 'dependency_failed',
                message: `${failed.map(({ e, parent }) => `${e.role} "${e.name}" (job ${parent!.id}) ended ${parent!.state}`).join('; ')}; runs anyway (onFailure: run)`,
              };
        this.#setState(job, 'pending', at);
        this.#appendEvent(job, 'waiting', reason, at, null);
        this.#wake([job.queue]);
      } else {
        const ended: JobState = edge.onFailure === 'die' ? 'dead' : 'cancelled';
        this.#graph.open.set(job.id, open - 1);
        job.error = {
          code: 'dependency_failed',
          message: `${edge.role} "${edge.name}" (job ${dep.id}) ended ${dep.state}; ${ended === 'dead' ? 'dies' : 'cancelled'} (onFailure: ${edge.onFailure})`,
        };
        this.#setState(job, ended, at);
        // Its own dependents follow from here.
        this.#appendEvent(job, 'waiting', job.error, at, null);
      }
    }
  }

  /** The `waiting` outcome: the children whose keys are new, then the row waits for every
   *  child that has not ended (due at once if none), with one more attempt allowed. */
  #waitForChildren(job: JobRecord, children: readonly ChildJob[], now: Date): void {
    if (job.cancelRequestedAt !== null) {
      job.error = { ...CANCELLED_BY_REQUEST };
      this.#moveFromRunning(job, 'cancelled', now);
      return;
    }
    let member = this.#graph.membership.get(job.id);
    if (!member) {
      member = { flowId: this.#graph.addFlow(job.kind, now), node: job.kind };
      this.#graph.membership.set(job.id, member);
    }
    const woken = new Set<string>();
    for (const child of children) {
      if (this.#graph.hasDependency(job.id, child.key)) continue;
      const { job: added } = this.#insert({ ...child, uniqueKey: null }, now, woken, { state: 'pending', flowId: member.flowId, node: child.key });
      this.#graph.addEdge({ jobId: job.id, dependsOnId: added.id, name: child.key, role: 'child', onFailure: child.onFailure });
    }
    const open = (this.#graph.dependencies.get(job.id) ?? []).filter(
      (edge) => edge.role === 'child' && !FINAL_JOB_STATES.includes(this.#jobs.get(edge.dependsOnId)?.state ?? 'completed'),
    ).length;
    this.#graph.open.set(job.id, open);
    job.maxAttempts += 1;
    job.runAt = now;
    job.error = null;
    this.#moveFromRunning(job, open > 0 ? 'waiting' : 'pending', now);
    if (open === 0) woken.add(job.queue);
    this.#wake(woken);
  }

  /**
   * Retry by hand, as migration 0018's retry_jobs: the dead, cancelled or skipped jobs of
   * `seeds` whose unique key no live job holds, and with `cascade` every job that ended
   * cancelled or dead because one of them failed (code dependency_failed), transitively; less,
   * to a fixed point, each job with a failed parent outside the set under an edge that is not
   * 'run'. Each revived job waits for the jobs it depends on that have not ended, or is due. The
   * waiting dependents, and the released ones not claimed yet, wait for it again. Returns the
   * jobs moved.
   */
  #retryJobs(seeds: readonly string[], cascade: boolean): Set<string> {
    const set = new Set(
      seeds.filter((id) => {
        const job = this.#jobs.get(id);
        return (
          job &&
          RETRYABLE.includes(job.state) &&
          (job.uniqueKey === null || !this.#liveKeys.has(keyOf(job.queue, job.uniqueKey))) &&
          !this.#debounceTaken(job)
        );
      }),
    );
    const dependentsOf = (id: string) => (this.#graph.dependents.get(id) ?? []).map((edge) => edge.jobId);
    const edgesOf = (id: string) => this.#graph.dependencies.get(id) ?? [];
    if (cascade) {
      for (const id of set) {
        for (const dependent of dependentsOf(id)) {
          const job = this.#jobs.get(dependent);
          if (job && (job.state === 'dead' || job.state === 'cancelled') && job.error?.code === 'dependency_failed') set.add(dependent);
        }
      }
    }
    for (let changed = true; changed; ) {
      changed = false;
      for (const id of set) {
        const blocked = edgesOf(id).some((edge) => {
          const parent = this.#jobs.get(edge.dependsOnId);
          return edge.onFailure !== 'run' && parent !== undefined && RETRYABLE.includes(parent.state) && !set.has(parent.id);
        });
        if (blocked) {
          set.delete(id);
          changed = true;
        }
      }
    }
    const moved = new Set<string>();
    if (set.size === 0) return moved;
    const deps = [...set]
      .flatMap(dependentsOf)
      .filter((id, i, all) => all.indexOf(id) === i && !set.has(id))
      .map((id) => this.#jobs.get(id))
      .filter((job): job is JobRecord => job !== undefined && !FINAL_JOB_STATES.includes(job.state));
    const back = deps.filter((job) => job.state === 'waiting' || job.state === 'pending');
    for (const job of [...[...set].map((id) => this.#jobs.get(id)!), ...deps]) {
      for (const edge of edgesOf(job.id)) {
        const dep = this.#jobs.get(edge.dependsOnId);
        if (dep === undefined || (!set.has(dep.id) && FINAL_JOB_STATES.includes(dep.state))) this.#graph.ended.add(edge);
        else this.#graph.ended.delete(edge);
      }
    }
    const now = this.#now();
    const rows = [...[...set].map((id) => this.#jobs.get(id)!), ...back].sort((a, b) => Number(a.id) - Number(b.id));
    const woken = new Set<string>();
    for (const job of rows) {
      const open = edgesOf(job.id).filter((edge) => !this.#graph.ended.has(edge)).length;
      const from = job.state;
      const to: JobState = open > 0 ? 'waiting' : 'pending';
      this.#graph.open.set(job.id, open);
      if (set.has(job.id)) {
        job.runAt = now;
        job.maxAttempts = Math.max(job.maxAttempts, job.attempt + 1);
        job.cancelRequestedAt = null;
        if (job.expiresAt !== null && job.expiresAt.getTime() <= now.getTime()) job.expiresAt = null;
      }
      if (from === to) {
        job.updatedAt = now;
        continue;
      }
      this.#setState(job, to, now);
      const retried = edgesOf(job.id)
        .filter((edge) => set.has(edge.dependsOnId))
        .sort((a, b) => Number(a.dependsOnId) - Number(b.dependsOnId))
        .map((edge) => `${edge.role} "${edge.name}" (job ${edge.dependsOnId})`);
      const reason = set.has(job.id) ? null : { code: 'dependency_retried', message: `${retried.join(', ')} retried; waits for it again` };
      this.#appendEvent(job, from, reason, now, null);
      moved.add(job.id);
      if (to === 'pending') woken.add(job.queue);
    }
    this.#wake(woken);
    return moved;
  }

  /** Whether a `waiting` job waits for this one, or a `sleeping` one will read it again when it
   *  wakes (its handler runs from the top): deleteJob and pruneJobs keep it. */
  #waitedFor(id: string): boolean {
    return (this.#graph.dependents.get(id) ?? []).some((edge) => {
      const state = this.#jobs.get(edge.jobId)?.state;
      return state === 'waiting' || state === 'sleeping';
    });
  }

  #flowJobs(flowId: string): FlowRecord['jobs'] {
    const jobs: FlowRecord['jobs'] = [];
    for (const job of this.#jobs.values()) {
      const member = this.#graph.membership.get(job.id);
      if (member?.flowId === flowId) jobs.push({ node: member.node, job: copyJob(job) });
    }
    return jobs;
  }

  #wake(queues: Iterable<string>): void {
    for (const queue of new Set(queues)) {
      for (const subscription of this.#subscriptions) {
        // One microtask per subscriber: a subscriber that throws does not starve the others.
        // The membership check honours an unsubscribe that happens before the microtask runs.
        queueMicrotask(() => {
          if (this.#subscriptions.has(subscription)) subscription.onWake(queue);
        });
      }
    }
  }

  #notifyCancel(jobId: string): void {
    for (const subscription of this.#subscriptions) {
      const { onCancel } = subscription;
      if (!onCancel) continue;
      queueMicrotask(() => {
        if (this.#subscriptions.has(subscription)) onCancel(jobId);
      });
    }
  }
}

/** A memory store reading time from `options.clock` (default: the wall clock). */
export function memoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  return new MemoryStore(options);
}

/** The error a job cancelled from outside carries, as the SQL stores write it. */
const CANCELLED_BY_REQUEST: JobErrorInfo = { code: 'cancelled', message: 'cancelled by request' };

function keyOf(queue: string, uniqueKey: string): string {
  return `${queue}\0${uniqueKey}`;
}

/** priority DESC, runAt ASC, id ASC: the SQL stores' claim index order. */
function claimOrder(a: JobRecord, b: JobRecord): number {
  return b.priority - a.priority || a.runAt.getTime() - b.runAt.getTime() || Number(a.id) - Number(b.id);
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What a jsonb column gives back: undefined becomes null, undefined fields vanish, Dates
 *  become strings, and each object's keys come in jsonb's order. */
function toJson(value: unknown): any {
  const text = JSON.stringify(value);
  return text === undefined ? null : inJsonbOrder(JSON.parse(text));
}

function copyDate(date: Date): Date;
function copyDate(date: Date | null): Date | null;
function copyDate(date: Date | null): Date | null {
  return date === null ? null : new Date(date.getTime());
}

/** Rows leave the store as deep copies, so callers cannot change what it holds. */
function copyJob(job: JobRecord): JobRecord {
  return {
    ...job,
    payload: structuredClone(job.payload),
    result: structuredClone(job.result),
    error: structuredClone(job.error),
    runAt: copyDate(job.runAt),
    leaseExpiresAt: copyDate(job.leaseExpiresAt),
    createdAt: copyDate(job.createdAt),
    updatedAt: copyDate(job.updatedAt),
    finishedAt: copyDate(job.finishedAt),
    expiresAt: copyDate(job.expiresAt),
    cancelRequestedAt: copyDate(job.cancelRequestedAt),
    progress: job.progress && { ...job.progress, at: copyDate(job.progress.at) },
    traceContext: job.traceContext && { ...job.traceContext },
    steps: structuredClone(job.steps),
    // A cancel or the reaper ends a waiting job without clearing the name: as the SQL stores
    // read it, only a sleeping job waits.
    waitingForSignal: job.state === 'sleeping' ? job.waitingForSignal : null,
  };
}

/** The history's reason for a move to `sleeping`, as the SQL stores write it. */
function sleepReason(request: SuspendRequest, until: Date): JobErrorInfo {
  return request.kind === 'signal'
    ? { code: 'signal_wait', message: `waits for signal "${request.signal}"` }
    : { code: 'sleep', message: `sleeps until ${until.toISOString()}` };
}

function copyEvent(event: JobEvent): JobEvent {
  return { ...event, at: copyDate(event.at), error: structuredClone(event.error) };
}

/** Rows by id after `afterId` (or the newest `limit`), oldest first, looked up one id at a time
 *  from where the caller stands, not over the whole table: a poll costs what it returns. */
function walkIds<Row>(
  params: { afterId?: string; limit?: number },
  nextId: number,
  get: (id: number) => Row | undefined,
): Row[] {
  const limit = Math.max(0, params.limit ?? DEFAULT_EVENTS_LIMIT);
  const page: Row[] = [];
  if (params.afterId === undefined) {
    for (let id = nextId - 1; id >= 1 && page.length < limit; id--) {
      const row = get(id);
      if (row) page.push(row);
    }
    return page.reverse();
  }
  const after = Number(params.afterId);
  if (!Number.isSafeInteger(after)) return [];
  for (let id = Math.max(after, 0) + 1; id < nextId && page.length < limit; id++) {
    const row = get(id);
    if (row) page.push(row);
  }
  return page;
}
