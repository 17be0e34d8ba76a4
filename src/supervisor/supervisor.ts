/**
 * The supervisor: one per process. It wires its parts and carries the public API; it decides
 * nothing about claims itself. When to claim is its actor's machine (supervisor-machine.ts),
 * which and how many the planner's (claim-planner.ts); the job actors live in the job runtime
 * (job-runtime.ts), which tells the actor what changed.
 */
import { hostname } from 'node:os';
import { type AnyActorRef, createActor } from 'xstate';
import type { ClaimQueue, JobOutcome, JobStore, Lease, LeaseRenewal, StepCheckpoint, Unsubscribe } from '../adapters/store.js';
import { isPermanentStoreError } from '../adapters/store-errors.js';
import { DatabaseUnavailableError, InvalidOptionError } from '../errors.js';
import type { JobActorFinalState } from '../machines/job-machine.js';
import type { Queue } from '../queue.js';
import type { Schedule } from '../schedule.js';
import { SupervisorMetrics } from '../telemetry/metrics.js';
import { activeTracer } from '../telemetry/tracing.js';
import type { JobRecord, Logger } from '../types.js';
import { MAX_TIMER_MS } from '../validation.js';
import { createDeadJobAlerter } from './alerts.js';
import { createBatcher } from './batcher.js';
import { ClaimPlanner } from './claim-planner.js';
import { type CountersStore, createCountersStore } from './counters.js';
import { type FinishedAttempt, JobRuntime } from './job-runtime.js';
import { ProgressWriter } from './progress-writer.js';
import { Reaper } from './reaper.js';
import { WorkerPresence } from './worker-heartbeat.js';
import { jobLogLine } from '../telemetry/job-log.js';
import { promiseOf } from './promise-of.js';
import { Scheduler } from './scheduler.js';
import { waitUntil } from './timer.js';
import { schedulerMachine } from './scheduler-machine.js';
import { DEFAULTS, type ResolvedOptions, resolveOptions, resolveStopOptions, type StopOptions, type SupervisorClock, type SupervisorOptions } from './supervisor-options.js';
import { type ClaimRound, type SupervisorEvent, type SupervisorRuntime, supervisorMachine } from './supervisor-machine.js';

export type { StopOptions, SupervisorClock, SupervisorOptions } from './supervisor-options.js';

export interface Supervisor {
  readonly workerId: string;
  /** Live counters by queue; `supervisor.counters.getSnapshot().context`, or subscribe. */
  readonly counters: CountersStore;
  /** Attempt durations and queue lag per queue, as histograms (see `registerMetrics` in `jobvisor/prometheus`). */
  readonly metrics: SupervisorMetrics;
  /** The supervisor's own actor, for inspection. */
  readonly actor: AnyActorRef;
  /** Starts claiming and reaping. */
  start(): Promise<void>;
  /** Runs every due job, and what becomes due while they run, then resolves with how many
   *  attempts ran. For tests and one-off batches; not while started. */
  drain(): Promise<number>;
  /** Stops claiming, lets running jobs finish within the grace period, then aborts them and
   *  releases their rows for retry. Idempotent: every call returns the same promise, which
   *  resolves once every job has ended. Called from inside one of this supervisor's handlers,
   *  it neither aborts nor waits for that job: it resolves once every other job has ended (as
   *  the outer promise would), and the outer promise then waits for that handler to return and
   *  its outcome to be written (docs/supervisor.md). */
  stop(options?: StopOptions): Promise<void>;
  /** Cancels a job: one held here is aborted and ends `cancelled`; a pending or retrying one
   *  is cancelled by the store; one running in another process gets a cancel request, which
   *  its supervisor hears (notification, else its next lease renewal) and acts on. Resolves
   *  whether the job was cancelled or a cancel is under way. */
  cancel(jobId: string): Promise<boolean>;
  /** Runs the reaper once; resolves with how many jobs it rescued. */
  reap(): Promise<number>;
}


export function createSupervisor(options: SupervisorOptions): Supervisor {
  const settings = resolveOptions(options);
  return new SupervisorImpl(options, settings);
}

class SupervisorImpl implements Supervisor, SupervisorRuntime {
  readonly workerId: string;
  readonly counters: CountersStore;
  readonly metrics: SupervisorMetrics;
  readonly actor;
  private readonly store: JobStore;
  private readonly queues: Map<string, Queue>;
  private readonly logger: Logger;
  private readonly clock: SupervisorClock;
  private readonly planner: ClaimPlanner;
  private readonly jobs: JobRuntime;
  /** Enqueues the schedules' ticks while started; none without schedules. */
  private scheduler: ReturnType<typeof createActor<typeof schedulerMachine>> | undefined;
  private readonly reaper: Reaper;
  private readonly renewers = new Map<number, (lease: Lease) => Promise<LeaseRenewal>>();
  private readonly progress: ProgressWriter;
  private readonly alertDead: (job: JobRecord, error: JobRecord['error']) => void;
  private readonly finishedTally = new Map<string, Partial<Record<JobActorFinalState, number>>>();
  private claimsInFlight = 0;
  /** The last store call failed: the next one that succeeds tells the actor the store is back. */
  private storeDown = false;
  private started = false;
  private stopPromise: Promise<void> | undefined;
  /** stop()'s storeWaitMs: how long the stop waits for the store once the grace period is over. */
  private storeWaitMs: number = DEFAULTS.storeWaitMs;
  /** When the grace period ended (abortAll), by this clock: the stop's one store wait counts from it. */
  private storeWaitFrom: number | undefined;
  private resolveStopped!: () => void;
  /** What stop() answers a handler of ours: every job but those whose handler called it has ended. */
  private othersEnded: Promise<void> | undefined;
  private resolveOthersEnded!: () => void;
  private drainWaiters: Array<() => void> = [];
  private attemptsRun = 0;
  /** attemptsRun when the last claim was sent (endedSinceClaim). */
  private attemptsAtClaim = 0;
  private unsubscribe: Unsubscribe | undefined;
  /** The heartbeat row, while started. */
  private presence: WorkerPresence | undefined;
  /** When (this clock) the first job known to become due later is due: the wake-up timer's
   *  time. A hint only: the claim it triggers decides by the store's clock what is due. */
  private dueAt: number | undefined;
  /** When the store was last asked for the next due job (`nextDueIn`), and whether the next
   *  round must ask again (a wake-up fired: something may have been early or taken). */
  private dueAskedAt = Number.NEGATIVE_INFINITY;
  private askDue = false;
  /** A `nextDueIn` not answered yet: no other is asked meanwhile (learnNextDue). */
  private dueAsked = false;
  private roundEndedAt = 0;

  constructor(
    private readonly options: SupervisorOptions,
    private readonly settings: ResolvedOptions,
  ) {
    this.store = options.store;
    // Its calls are watched too: a pass that goes through after a failure says the store is back.
    this.reaper = new Reaper({ rescueExpiredJobs: (params) => this.watched(this.store.rescueExpiredJobs(params)) });
    this.workerId = settings.workerId;
    this.logger = settings.logger;
    this.clock = settings.clock;
    this.queues = new Map(options.queues.map((q) => [q.name, q as Queue]));
    this.planner = new ClaimPlanner(options.queues as Queue[], settings.concurrency, settings.gates, settings.prefetch, this.clock, settings.pollIntervalMs);
    this.counters = createCountersStore(options.queues.map((q) => q.name));
    this.metrics = new SupervisorMetrics(options.queues.map((q) => q.name));
    // One outcome the store refuses for good is tried alone, so that it fails alone.
    const writeOutcome = createBatcher((outcomes: JobOutcome[]) => this.watched(this.store.setStatesIfRunning({ outcomes })), {
      isolate: isPermanentStoreError,
    });
    // The running jobs' step checkpoints, as their outcomes: one store call for all that are ready.
    const checkpointSteps = createBatcher((steps: StepCheckpoint[]) => this.store.checkpointSteps({ steps }), {
      isolate: isPermanentStoreError,
    });
    this.progress = new ProgressWriter(this.store, this.clock, settings.progressIntervalMs, this.logger);
    this.alertDead = createDeadJobAlerter({
      sink: options.onDead,
      throttleMs: settings.alertThrottleMs,
      claimAlert: (params) => this.store.claimAlert(params),
      logger: this.logger,
      alertKey: (job) => this.queues.get(job.queue)?.alertKey(job),
    });
    this.actor = createActor(supervisorMachine, {
      input: {
        runtime: this,
        pollIntervalMs: settings.pollIntervalMs,
        reaperIntervalMs: settings.reaperIntervalMs,
        errorBackoffMs: settings.errorBackoffMs,
        maxErrorBackoffMs: settings.maxErrorBackoffMs,
      },
      ...this.actorOptions(),
    });
    this.jobs = new JobRuntime({
      queues: this.queues,
      planner: this.planner,
      clock: this.clock,
      logger: this.logger,
      metrics: this.metrics,
      progress: this.progress,
      store: {
        getJobDependencies: (params) => this.store.getJobDependencies(params),
        suspendIfRunning: (request) => this.store.suspendIfRunning(request),
        checkpointStep: checkpointSteps,
      },
      tracer: activeTracer(),
      writeRetryMs: settings.writeRetryMs,
      random: settings.random,
      // The attempt's last progress report, if the throttle still holds it, goes with its outcome.
      writeOutcome: (outcome) => {
        const progress = this.progress.pending(outcome.id);
        return writeOutcome(progress ? { ...outcome, lastProgress: progress } : outcome);
      },
      renewerFor: (leaseMs) => this.renewerFor(leaseMs),
      tell: (event) => this.tell(event),
      slept: (wake, askedAt) => ('delayMs' in wake ? this.noteDue(wake.delayMs, askedAt) : this.noteDue(wake.at.getTime() - Date.now())),
      finished: (attempt) => this.attemptFinished(attempt),
      actorOptions: this.actorOptions(),
    });
    this.actor.start();
  }

  // ── public API ──────────────────────────────────────────────────────────────────────────

  async start(): Promise<void> {
    if (this.started || this.stopPromise) return;
    this.started = true;
    try {
      if (this.options.migrate) await this.store.migrate?.();
      const newer = (await this.store.checkSchema?.())?.newer ?? [];
      if (newer.length > 0) this.logger.warn({ newer }, 'the schema holds migrations of a newer jobvisor (none breaking): running beside it');
    } catch (error) {
      // A schema that does not fit is refused, and so is a migration that could not run. A
      // database that cannot be reached for the check is ridden out, as it is once started (a
      // worker restarted during an outage): the store checks the schema before its first
      // statement once it is back, and claims fail until then.
      if (this.options.migrate || !(error instanceof DatabaseUnavailableError)) {
        this.started = false;
        throw error;
      }
      this.logger.warn({ err: error }, 'cannot reach the database to check its schema; starting, and checking once it is back');
    }
    if (this.stopPromise) return;
    if (this.store.capabilities.notifications) {
      try {
        const unsubscribe = await this.store.subscribe(
          (queue) => this.tell({ type: 'supervisor.wake', ...(queue === undefined ? {} : { queue }) }),
          (jobId) => this.jobs.cancelHeld(jobId),
        );
        // A stop that came while the subscription was on its way has closed down already:
        // this start goes no further, and the subscription just made is ended.
        if (this.stopPromise) {
          void this.endSubscription(unsubscribe);
          return;
        }
        this.unsubscribe = unsubscribe;
      } catch (error) {
        this.logger.warn({ err: error }, 'cannot subscribe to store notifications; polling only');
      }
    }
    this.presence = new WorkerPresence(this.store, this.clock, this.logger, () => ({
      workerId: this.workerId,
      host: hostname(),
      pid: process.pid,
      queues: [...this.queues.keys()],
      running: this.jobs.size,
      held: this.jobs.held(),
    }));
    this.presence.start();
    this.logger.info({ workerId: this.workerId, queues: [...this.queues.keys()] }, 'supervisor started');
    this.actor.send({ type: 'supervisor.start' });
    if (this.options.schedules?.length) this.startScheduler(this.options.schedules);
  }

  drain(): Promise<number> {
    if (this.actor.getSnapshot().value !== 'idle') {
      return Promise.reject(new InvalidOptionError('drain', 'the supervisor is started or stopping; drain() runs only on an idle supervisor'));
    }
    const before = this.attemptsRun;
    return new Promise<number>((resolve) => {
      this.drainWaiters.push(() => resolve(this.attemptsRun - before));
      this.actor.send({ type: 'supervisor.drain' });
    });
  }

  stop(options: StopOptions = {}): Promise<void> {
    if (this.stopPromise) return this.stopAsked();
    let graceMs: number;
    let storeWaitMs: number;
    try {
      ({ graceMs, storeWaitMs } = resolveStopOptions(options));
    } catch (error) {
      return Promise.reject(error);
    }
    this.storeWaitMs = storeWaitMs;
    this.stopPromise = new Promise<void>((resolve) => {
      this.resolveStopped = resolve;
    });
    this.othersEnded = new Promise<void>((resolve) => {
      this.resolveOthersEnded = resolve;
    });
    const promise = this.stopAsked();
    this.scheduler?.stop();
    this.actor.send({ type: 'supervisor.stop', graceMs, storeWaitMs });
    return promise;
  }

  /** The promise a stop() call gets once the stop is under way. A handler of ours waiting for
   *  the whole stop would wait for its own job, which waits for it, until the grace period
   *  aborted that job and released its finished work for a retry. So its job is marked: the
   *  stop leaves it out of the grace period's abort and of what the machine waits for (a
   *  wake-up makes the machine look again), and the handler's call resolves with everyone
   *  else's end. */
  private stopAsked(): Promise<void> {
    if (!this.jobs.markStopCaller()) return this.stopPromise!;
    this.tell({ type: 'supervisor.slotsFreed' });
    return this.othersEnded!;
  }

  async cancel(jobId: string): Promise<boolean> {
    if (this.jobs.cancelHeld(jobId)) return true;
    const answer = await this.store.cancelJob({ id: jobId });
    if (!answer) return false;
    return answer.cancelled || answer.job.state === 'running';
  }

  async reap(): Promise<number> {
    const count = await this.reaper.reap(
      (rescued) => {
        for (const job of rescued) {
          this.counters.trigger.rescued({ queue: job.queue, count: 1 });
          if (job.state === 'dead') this.alertDead(job, job.error);
        }
      },
      (batch) => this.logger.warn({ batch }, 'reaper statement timed out; rescuing in smaller batches'),
    );
    if (count > 0) this.logger.warn({ count }, 'reaper rescued jobs whose lease expired or ended jobs past their expiresAt');
    return count;
  }

  // ── runtime for the supervisor machine ─────────────────────────────────────────────────

  hasFreeSlots(): boolean {
    return this.planner.hasRoom();
  }

  wantsClaim(): boolean {
    return this.planner.wantsClaim();
  }

  noteWork(queue?: string): void {
    this.planner.noteWork(queue);
  }

  msUntilClaim(pollIntervalMs: number): number {
    const now = this.clock.now();
    const poll = pollIntervalMs - (now - this.roundEndedAt);
    return Math.max(0, this.dueAt === undefined ? poll : Math.min(poll, this.dueAt - now));
  }

  busy(): boolean {
    return this.jobs.awaitedByStop > 0 || this.claimsInFlight > 0;
  }

  endedSinceClaim(): boolean {
    return this.attemptsRun !== this.attemptsAtClaim;
  }

  claim(): Promise<ClaimRound> {
    this.attemptsAtClaim = this.attemptsRun;
    const now = this.clock.now();
    if (this.dueAt !== undefined && this.dueAt <= now) {
      this.dueAt = undefined;
      this.askDue = true;
    }
    const round = this.claimRound();
    // The round's own promise when there is nothing to ask: no turn of the event loop added.
    if (!this.started || this.dueAsked || !(this.askDue || now - this.dueAskedAt >= this.settings.pollIntervalMs)) return round;
    return round.then(async (answer) => {
      await this.learnNextDue(now);
      this.roundEndedAt = this.clock.now();
      return answer;
    });
  }

  private async claimRound(): Promise<ClaimRound> {
    const requests = this.planner.plan();
    if (requests.length === 0) {
      this.roundEndedAt = this.clock.now();
      return { claimed: 0 };
    }
    // One store call per distinct lease length (almost always one call in all).
    const byLease = new Map<number, ClaimQueue[]>();
    for (const r of requests) {
      const { perKeyConcurrency, rateLimit, fairShare } = this.queues.get(r.queue)!.settings;
      const entry = {
        queue: r.queue,
        limit: r.limit,
        perKeyLimit: perKeyConcurrency,
        ...(rateLimit ? { rateLimit } : {}),
        ...(fairShare ? { fairShare: true } : {}),
      };
      byLease.set(r.leaseMs, [...(byLease.get(r.leaseMs) ?? []), entry]);
    }
    this.claimsInFlight += 1;
    try {
      let claimed = 0;
      const got = new Map<string, number>();
      const keyed = new Set<string>();
      for (const [leaseMs, queues] of byLease) {
        const sentAt = this.clock.now();
        const jobs = await this.watched(this.store.claimJobs({ workerId: this.workerId, leaseMs, queues }));
        for (const job of jobs) {
          got.set(job.queue, (got.get(job.queue) ?? 0) + 1);
          if (job.concurrencyKey !== null) keyed.add(job.queue);
          this.jobs.spawn(job, sentAt);
        }
        claimed += jobs.length;
      }
      this.planner.claimAnswered(requests, { got, keyed });
      this.jobs.pump();
      for (const [queue, count] of got) this.counters.trigger.claimed({ queue, count });
      return { claimed };
    } finally {
      this.claimsInFlight -= 1;
      this.roundEndedAt = this.clock.now();
      this.jobs.notifySlotsFreed();
    }
  }

  /**
   * Asks the store, after a claim round (at most once per poll interval, and after the wake-up
   * timer fired: `claim`), when the first job of these queues that is not due yet will be,
   * within two poll intervals. Not one timer per sleeping job: one, for the first of them;
   * the next is learnt when it fires or at the next poll.
   *
   * The round waits for the answer, so that the wait after it counts to the job, but for a
   * poll interval at most: a call that never answers must not hold up every claim after it.
   * Until it has answered no other is asked, and an answer that comes later still sets the
   * wake-up timer, for the wait after the next event.
   */
  private learnNextDue(roundStartedAt: number): Promise<void> {
    const pollMs = this.settings.pollIntervalMs;
    const now = this.clock.now();
    this.askDue = false;
    this.dueAskedAt = now;
    this.dueAsked = true;
    const answered = promiseOf(() =>
      // Jobs that came due since this round's claim began count too (as due now): that claim
      // could not have taken them.
      this.store.nextDueIn({
        queues: [...this.queues.keys()],
        withinMs: Math.min(2 * pollMs, MAX_TIMER_MS),
        sinceMs: now - roundStartedAt,
      }),
    ).then(
      // From when it was asked: the answer took time to come, and a timer early by it only
      // makes a claim that finds nothing and asks again.
      (dueIn) => {
        if (dueIn !== null) this.noteDue(dueIn, now);
      },
      // The poll still finds the job; a store that is down is the claim's to report.
      (error: unknown) => this.logger.debug({ err: error }, 'asking the store for the next due job failed; the poll will find it'),
    ).finally(() => {
      this.dueAsked = false;
    });
    return waitUntil(this.clock, now + pollMs, answered, () =>
      this.logger.warn({ waitedMs: pollMs }, 'the store has not answered when the next job is due; claims go on by polling'),
    );
  }

  /** A job becomes due in `ms`: the wake-up timer is set for it if that is sooner (the wait
   *  that follows the claim round, or a freed slot, counts to it). */
  private noteDue(ms: number, from = this.clock.now()): void {
    const at = from + Math.max(0, ms);
    if (this.dueAt === undefined || at < this.dueAt) this.dueAt = at;
  }

  abortAll(): void {
    // The grace period is over: from now the stop waits for the store storeWaitMs at most.
    this.storeWaitFrom ??= this.clock.now();
    this.jobs.abortAll();
  }

  giveUp(): void {
    const jobs = this.jobs.abandon();
    this.logger.warn(
      { jobs, claimInFlight: this.claimsInFlight > 0, storeWaitMs: this.storeWaitMs },
      'the store has not answered the stop in time (jobs\' writes, a claim); stopping without it: their rows stay running until their leases end, then the reaper gives them back',
    );
  }

  releaseHeld(): void {
    this.jobs.releaseHeld();
  }

  claimFailed(error: unknown, failures: number): void {
    this.noteStoreError(error);
    this.logger.error({ err: error, failures }, 'claim failed; backing off');
  }

  reapFailed(error: unknown): void {
    this.noteStoreError(error);
    this.logger.error({ err: error }, 'reaper failed; will try again');
  }

  drained(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** The machine is final: every job it waited for has ended. Handlers that called stop()
   *  themselves hear it now; the supervisor is stopped once they have returned and their
   *  outcomes are written (still listening, heartbeating and writing progress until then). */
  stopped(): void {
    this.resolveOthersEnded?.();
    this.jobs.afterStopCallers(() => this.closeDown());
  }

  private closeDown(): void {
    const unsubscribe = this.unsubscribe;
    this.unsubscribe = undefined;
    this.progress.close();
    const done = () => {
      this.logger.info({ workerId: this.workerId }, 'supervisor stopped');
      this.drained();
      this.resolveStopped?.();
    };
    const presence = this.presence;
    this.presence = undefined;
    // In the same bound as the stop's other store calls (one wait in all, from the grace
    // period's end, else from now): a store that never answers must not keep the stop.
    void waitUntil(this.clock, (this.storeWaitFrom ?? this.clock.now()) + this.storeWaitMs, Promise.all([this.endSubscription(unsubscribe), presence?.stop()]), () =>
      this.logger.warn({ storeWaitMs: this.storeWaitMs }, 'the store has not answered the unsubscribe or the worker row\'s removal in time; stopped without it'),
    ).then(done);
  }

  /** Ends a subscription to the store's notifications; a failure is logged, never thrown. */
  private endSubscription(unsubscribe: Unsubscribe | undefined): Promise<void> {
    if (!unsubscribe) return Promise.resolve();
    return promiseOf(unsubscribe).catch((error: unknown) => this.logger.warn({ err: error }, 'unsubscribing from store notifications failed'));
  }

  // ── wiring ──────────────────────────────────────────────────────────────────────────────

  /** An attempt's actor is final: tallies, the dead-job alert, a warning for a lost lease. */
  private attemptFinished({ job, state, error }: FinishedAttempt): void {
    this.attemptsRun += 1;
    this.tally(job.queue, state);
    if (state === 'dead') {
      this.alertDead({ ...job, state: 'dead', error, leaseToken: null, leaseExpiresAt: null }, error);
    } else if (state === 'lost') {
      const line = jobLogLine(job, 'lost', 'ended without writing its outcome (its lease was lost)', error);
      this.logger.warn(line.fields, line.message);
    }
  }

  private startScheduler(schedules: readonly Schedule[]): void {
    // Durations on the supervisor's clock: monotonic unless one is injected.
    const scheduler = new Scheduler(this.store, schedules, this.clock);
    this.scheduler = createActor(schedulerMachine, {
      ...this.actorOptions(),
      input: {
        check: () => scheduler.check(),
        failed: (error) => {
          this.noteStoreError(error);
          this.logger.error({ err: error }, 'enqueueing scheduled jobs failed; will try again');
        },
        errorBackoffMs: this.settings.errorBackoffMs,
      },
    });
    this.scheduler.start();
  }

  /** Counts a finished job; the counters store hears of a tick's jobs in one update each queue. */
  private tally(queue: string, state: JobActorFinalState): void {
    if (this.finishedTally.size === 0) {
      queueMicrotask(() => {
        for (const [name, states] of this.finishedTally) this.counters.trigger.finished({ queue: name, states });
        this.finishedTally.clear();
      });
    }
    const states = this.finishedTally.get(queue) ?? {};
    states[state] = (states[state] ?? 0) + 1;
    this.finishedTally.set(queue, states);
  }

  private renewerFor(leaseMs: number): (lease: Lease) => Promise<LeaseRenewal> {
    let renew = this.renewers.get(leaseMs);
    if (!renew) {
      renew = createBatcher((leases: Lease[]) => this.watched(this.store.renewLeases({ leases, leaseMs })));
      this.renewers.set(leaseMs, renew);
    }
    return renew;
  }

  /** A store call whose success after a failure tells the actor the store is back: a claim
   *  backing off after an outage then claims at once. */
  private watched<T>(call: Promise<T>): Promise<T> {
    return call.then(
      (value) => {
        if (this.storeDown) {
          this.storeDown = false;
          this.tell({ type: 'supervisor.wake' });
        }
        return value;
      },
      (error: unknown) => {
        if (!isPermanentStoreError(error)) this.storeDown = true;
        throw error;
      },
    );
  }

  /** Tells the actor, unless it is final: the jobs of handlers that called stop() end after it. */
  private tell(event: SupervisorEvent): void {
    if (this.actor.getSnapshot().status === 'active') this.actor.send(event);
  }

  private noteStoreError(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.counters.trigger.storeError({ message, at: this.clock.now() });
  }

  private actorOptions() {
    return {
      ...(this.options.clock?.setTimeout ? { clock: this.options.clock as any } : {}),
      ...(this.options.inspect ? { inspect: this.options.inspect } : {}),
    };
  }
}
