import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { type Actor, type AnyActorRef, createActor, type InspectionEvent, type Observer } from 'xstate';
import type { ClaimQueue, JobOutcome, JobStore, Lease, LeaseRenewal, Unsubscribe } from '../adapters/store.js';
import { InvalidOptionError } from '../errors.js';
import type { Inspector, InspectorOptions } from '../inspector/inspector.js';
import {
  type JobActorFinalState,
  type JobMachineContext,
  jobMachine,
  type JobPolicy,
  type JobPorts,
} from '../machines/job-machine.js';
import type { Queue } from '../queue.js';
import type { Schedule } from '../schedule.js';
import { type QueueMetrics, SupervisorMetrics } from '../telemetry/metrics.js';
import { activeTracer, AttemptSpan } from '../telemetry/tracing.js';
import type { ClaimedJob, Clock, JobRecord, Logger } from '../types.js';
import { systemClock } from '../types.js';
import { assertName, assertPositiveInt, assertStorableString, assertTimerMs, MAX_TIMER_MS } from '../validation.js';
import { createDeadJobAlerter, type DeadJobSink } from './alerts.js';
import { createBatcher } from './batcher.js';
import { type CountersStore, createCountersStore } from './counters.js';
import { HandlerJob, type ProgressSink } from './handler-job.js';
import { ProgressWriter } from './progress-writer.js';
import { Reaper } from './reaper.js';
import { monotonicClock, Scheduler } from './scheduler.js';
import { schedulerMachine } from './scheduler-machine.js';
import { Slots } from './slots.js';
import { type ClaimRound, type SupervisorRuntime, supervisorMachine } from './supervisor-machine.js';
import { startTimer } from './timer.js';

/** A clock for the supervisor: `now()` for the store and the machines' timers. XState's
 *  `SimulatedClock` fits, and then every timer (heartbeat, deadline, poll, reaper, grace)
 *  follows it in tests. */
export interface SupervisorClock extends Clock {
  setTimeout?(fn: (...args: any[]) => void, timeout: number): any;
  clearTimeout?(id: any): void;
}

export interface SupervisorOptions {
  store: JobStore;
  queues: readonly Queue<any>[];
  /** Recurring jobs (defineSchedule): each due tick is enqueued once across every supervisor
   *  running the schedule. Default none. */
  schedules?: readonly Schedule[];
  /** Named gates shared by queues: name → how many of their jobs run at once. Default none. */
  gates?: Record<string, number>;
  /** Jobs running at once across all queues. Default: the sum of the queues' concurrency. */
  concurrency?: number;
  /** Written on every claim and history row. Default `<hostname>:<pid>:<random>`. */
  workerId?: string;
  /** A pino logger, or anything with debug/info/warn/error. Default pino at `info`
   *  (`silent` under a test runner, i.e. when VITEST or NODE_ENV=test is set). */
  logger?: Logger;
  /** Default the system clock. Pass XState's SimulatedClock in tests. */
  clock?: SupervisorClock;
  /** Wait between claims when idle and no notification came. Default 1,000 ms. */
  pollIntervalMs?: number;
  /** Period of the reaper that rescues expired leases. Default 30,000 ms. */
  reaperIntervalMs?: number;
  /** First wait after the store failed a claim; doubles per failure. Default 1,000 ms. */
  errorBackoffMs?: number;
  /** Longest wait after repeated store failures. Default 30,000 ms. */
  maxErrorBackoffMs?: number;
  /** Wait before a failed outcome write (store down) is tried again. Default 1,000 ms. */
  writeRetryMs?: number;
  /** Claim ahead, per queue, about as many jobs as this process starts in this many ms
   *  (measured), so that a slot need not wait for a claim's round trip. Slow queues get no
   *  prefetch. 0 = claim only for free slots. Default 50 ms. */
  prefetchWindowMs?: number;
  /** Most jobs of one queue held claimed ahead of a free slot. 0 = none. Default 500. */
  maxPrefetch?: number;
  /** Called once per job that goes dead. Default: none (the logger still warns). */
  onDead?: DeadJobSink;
  /** The same dedupe key alerts at most once per window. Default 3,600,000 ms (one hour). */
  alertThrottleMs?: number;
  /** A job's progress reports are written at most once per this many ms, the last winning.
   *  Default 1,000 ms. */
  progressIntervalMs?: number;
  /** XState's `inspect` observer, given to the supervisor and every job actor
   *  (e.g. `@statelyai/inspect`). Default none. */
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /** Serve the inspector's page from this process while started (see `startInspector`):
   *  e.g. `{ port: 4780, token }`. Default none. */
  inspector?: Omit<InspectorOptions, 'store' | 'supervisor' | 'logger'>;
}

export interface StopOptions {
  /** How long running jobs may go on after stop() before their handlers are aborted and
   *  their rows released for retry. Default 30,000 ms. */
  graceMs?: number;
}

export interface Supervisor {
  readonly workerId: string;
  /** Live counters by queue; `supervisor.counters.getSnapshot().context`, or subscribe. */
  readonly counters: CountersStore;
  /** Attempt durations and queue lag per queue, as histograms (see `prometheusMetrics`). */
  readonly metrics: SupervisorMetrics;
  /** The supervisor's own actor, for inspection. */
  readonly actor: AnyActorRef;
  /** The inspector the `inspector` option started (its `url`), once start() resolved. */
  readonly inspector: Inspector | undefined;
  /** Starts claiming and reaping. */
  start(): Promise<void>;
  /** Runs every due job, and what becomes due while they run, then resolves with how many
   *  attempts ran. For tests and one-off batches; not while started. */
  drain(): Promise<number>;
  /** Stops claiming, lets running jobs finish within the grace period, then aborts them and
   *  releases their rows for retry. Idempotent: every call returns the same promise. */
  stop(options?: StopOptions): Promise<void>;
  /** Cancels a job: one held here is aborted and ends `cancelled`; a pending or retrying one
   *  is cancelled by the store; one running in another process gets a cancel request, which
   *  its supervisor hears (notification, else its next lease renewal) and acts on. Resolves
   *  whether the job was cancelled or a cancel is under way. */
  cancel(jobId: string): Promise<boolean>;
  /** Runs the reaper once; resolves with how many jobs it rescued. */
  reap(): Promise<number>;
}

const DEFAULTS = {
  pollIntervalMs: 1_000,
  reaperIntervalMs: 30_000,
  errorBackoffMs: 1_000,
  maxErrorBackoffMs: 30_000,
  writeRetryMs: 1_000,
  prefetchWindowMs: 50,
  maxPrefetch: 500,
  alertThrottleMs: 3_600_000,
  progressIntervalMs: 1_000,
  graceMs: 30_000,
};

type JobActor = Actor<typeof jobMachine>;

/** What every job actor of a queue shares. */
interface QueueRuntime {
  queue: Queue;
  ports: JobPorts;
  policy: JobPolicy;
  metrics: QueueMetrics;
}

/** A job actor of this supervisor, from claim until its actor is final. */
interface JobEntry {
  actor: JobActor;
  queue: Queue;
  job: ClaimedJob;
  /** held: claimed ahead, waiting for a slot; running: holds a slot; done: the handler is
   *  over (or never ran) and the slot is free, though the outcome may still be writing. */
  phase: 'held' | 'running' | 'done';
  /** Ends the job's task in its gate's limiter. */
  leaveGate?: () => void;
  /** When its handler started, by the supervisor's clock. */
  startedAt?: number;
  /** Stops the timer that ends the job at its `expiresAt`. */
  cancelExpiry?: () => void;
  /** Its attempt's span, when tracing is on. */
  span?: AttemptSpan;
}

export function createSupervisor(options: SupervisorOptions): Supervisor {
  const settings = resolveOptions(options);
  return new SupervisorImpl(options, settings);
}

type ResolvedOptions = ReturnType<typeof resolveOptions>;

function resolveOptions(options: SupervisorOptions) {
  if (!options.store) throw new InvalidOptionError('store', 'is required');
  if (!Array.isArray(options.queues) || options.queues.length === 0) {
    throw new InvalidOptionError('queues', 'must name at least one queue (defineQueue)');
  }
  const names = new Set<string>();
  for (const q of options.queues) {
    if (names.has(q.name)) throw new InvalidOptionError('queues', `queue "${q.name}" is given twice`);
    names.add(q.name);
  }
  const scheduleNames = new Set<string>();
  for (const schedule of options.schedules ?? []) {
    if (scheduleNames.has(schedule.name)) throw new InvalidOptionError('schedules', `schedule "${schedule.name}" is given twice`);
    scheduleNames.add(schedule.name);
  }
  const gates = options.gates ?? {};
  for (const [name, size] of Object.entries(gates)) {
    assertName('gate name', name);
    assertPositiveInt(`gates.${name}`, size);
  }
  for (const q of options.queues) {
    const gate = q.settings.gate;
    if (gate !== undefined && !(gate in gates)) {
      throw new InvalidOptionError(`queue "${q.name}" gate`, `gate "${gate}" is not declared in the supervisor's gates`);
    }
  }
  const concurrency = options.concurrency ?? options.queues.reduce((sum, q) => sum + q.settings.concurrency, 0);
  assertPositiveInt('concurrency', concurrency);
  const timer = (key: Exclude<keyof typeof DEFAULTS, 'graceMs' | 'prefetchWindowMs' | 'maxPrefetch' | 'alertThrottleMs'>) => {
    const value = options[key] ?? DEFAULTS[key];
    assertTimerMs(key, value);
    return value;
  };
  const nonNegative = (key: 'prefetchWindowMs' | 'maxPrefetch') => {
    const value = options[key] ?? DEFAULTS[key];
    if (!Number.isInteger(value) || value < 0) throw new InvalidOptionError(key, `must be an integer >= 0, got ${String(value)}`);
    return value;
  };
  if (options.workerId !== undefined) assertStorableString('workerId', options.workerId);
  // Not a timer: compared with the clock, so it may be longer than one can wait.
  const alertThrottleMs = options.alertThrottleMs ?? DEFAULTS.alertThrottleMs;
  assertPositiveInt('alertThrottleMs', alertThrottleMs);
  return {
    gates,
    concurrency,
    workerId: options.workerId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
    logger: options.logger ?? defaultLogger(),
    clock: options.clock ?? systemClock,
    pollIntervalMs: timer('pollIntervalMs'),
    reaperIntervalMs: timer('reaperIntervalMs'),
    errorBackoffMs: timer('errorBackoffMs'),
    maxErrorBackoffMs: timer('maxErrorBackoffMs'),
    writeRetryMs: timer('writeRetryMs'),
    progressIntervalMs: timer('progressIntervalMs'),
    prefetch: { windowMs: nonNegative('prefetchWindowMs'), max: nonNegative('maxPrefetch') },
    alertThrottleMs,
  };
}

function defaultLogger(): Logger {
  const underTest = process.env.VITEST !== undefined || process.env.NODE_ENV === 'test';
  return pino({ name: 'jobvisor', level: underTest ? 'silent' : 'info' });
}

class SupervisorImpl implements Supervisor, SupervisorRuntime {
  readonly workerId: string;
  readonly counters: CountersStore;
  readonly metrics: SupervisorMetrics;
  readonly actor;
  inspector: Inspector | undefined;
  private readonly store: JobStore;
  private readonly queues: Map<string, Queue>;
  private readonly logger: Logger;
  private readonly clock: SupervisorClock;
  private readonly slots: Slots;
  /** Enqueues the schedules' ticks while started; none without schedules. */
  private scheduler: Actor<typeof schedulerMachine> | undefined;
  private readonly reaper: Reaper;
  private readonly jobs = new Map<string, JobEntry>();
  /** Per queue, jobs claimed ahead of a free slot, in claim order. */
  private readonly waiting = new Map<string, JobEntry[]>();
  private readonly writeOutcome: (outcome: JobOutcome) => Promise<boolean>;
  private readonly renewers = new Map<number, (lease: Lease) => Promise<LeaseRenewal>>();
  private readonly runtimes = new Map<string, QueueRuntime>();
  private readonly progress: ProgressWriter;
  /** The installed OpenTelemetry SDK's tracer, looked up once; undefined: no spans at all. */
  private readonly tracer = activeTracer();
  private readonly alertDead: (job: JobRecord, error: JobRecord['error']) => void;
  private readonly finishedTally = new Map<string, Partial<Record<JobActorFinalState, number>>>();
  private claimsInFlight = 0;
  private slotsFreedPending = false;
  /** A keyed job's outcome is written: its key is free, so its next job may be claimable. */
  private keyFreed = false;
  private started = false;
  private stopPromise: Promise<void> | undefined;
  private resolveStopped!: () => void;
  private drainWaiters: Array<() => void> = [];
  private attemptsRun = 0;
  private unsubscribe: Unsubscribe | undefined;

  constructor(
    private readonly options: SupervisorOptions,
    private readonly settings: ResolvedOptions,
  ) {
    this.store = options.store;
    this.reaper = new Reaper(options.store);
    this.workerId = settings.workerId;
    this.logger = settings.logger;
    this.clock = settings.clock;
    this.queues = new Map(options.queues.map((q) => [q.name, q as Queue]));
    this.slots = new Slots(options.queues as Queue[], settings.concurrency, settings.gates, settings.prefetch, this.clock);
    for (const q of options.queues) this.waiting.set(q.name, []);
    this.counters = createCountersStore(options.queues.map((q) => q.name));
    this.metrics = new SupervisorMetrics(options.queues.map((q) => q.name));
    const writeOutcome = createBatcher((outcomes: JobOutcome[]) => this.store.setStatesIfRunning({ outcomes }));
    this.progress = new ProgressWriter(this.store, this.clock, settings.progressIntervalMs, this.logger);
    // The attempt's last progress report, if the throttle still holds it, goes with its outcome.
    this.writeOutcome = (outcome) => {
      const progress = this.progress.pending(outcome.id);
      return writeOutcome(progress ? { ...outcome, lastProgress: progress } : outcome);
    };
    this.alertDead = createDeadJobAlerter({
      sink: options.onDead,
      throttleMs: settings.alertThrottleMs,
      clock: this.clock,
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
    this.actor.start();
  }

  // ── public API ──────────────────────────────────────────────────────────────────────────

  async start(): Promise<void> {
    if (this.started || this.stopPromise) return;
    this.started = true;
    if (this.store.capabilities.notifications) {
      try {
        this.unsubscribe = await this.store.subscribe(
          () => this.actor.send({ type: 'supervisor.wake' }),
          (jobId) => this.cancelHeld(jobId),
        );
      } catch (error) {
        this.logger.warn({ err: error }, 'cannot subscribe to store notifications; polling only');
      }
    }
    this.logger.info({ workerId: this.workerId, queues: [...this.queues.keys()] }, 'supervisor started');
    this.actor.send({ type: 'supervisor.start' });
    if (this.options.schedules?.length) this.startScheduler(this.options.schedules);
    if (this.options.inspector) await this.startInspector(this.options.inspector);
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
    if (this.stopPromise) return this.stopPromise;
    const graceMs = options.graceMs ?? DEFAULTS.graceMs;
    if (!(Number.isFinite(graceMs) && graceMs >= 0 && graceMs <= MAX_TIMER_MS)) {
      return Promise.reject(new InvalidOptionError('graceMs', `must be a number of ms from 0 to ${MAX_TIMER_MS}, got ${graceMs}`));
    }
    this.stopPromise = new Promise<void>((resolve) => {
      this.resolveStopped = resolve;
    }).then(() => this.inspector?.close());
    this.scheduler?.stop();
    this.actor.send({ type: 'supervisor.stop', graceMs });
    return this.stopPromise;
  }

  async cancel(jobId: string): Promise<boolean> {
    if (this.cancelHeld(jobId)) return true;
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
    return this.slots.hasFree();
  }

  busy(): boolean {
    return this.jobs.size > 0 || this.claimsInFlight > 0;
  }

  async claim(): Promise<ClaimRound> {
    const requests = this.slots.plan();
    if (requests.length === 0) return { claimed: 0, full: false };
    // One store call per distinct lease length (almost always one call in all).
    const byLease = new Map<number, ClaimQueue[]>();
    for (const r of requests) {
      const { perKeyConcurrency, rateLimit } = this.queues.get(r.queue)!.settings;
      const entry = { queue: r.queue, limit: r.limit, perKeyLimit: perKeyConcurrency, ...(rateLimit ? { rateLimit } : {}) };
      byLease.set(r.leaseMs, [...(byLease.get(r.leaseMs) ?? []), entry]);
    }
    this.claimsInFlight += 1;
    try {
      let claimed = 0;
      let keyed = false;
      const got = new Map<string, number>();
      for (const [leaseMs, queues] of byLease) {
        const sentAt = this.clock.now();
        const jobs = await this.store.claimJobs({ workerId: this.workerId, leaseMs, queues });
        for (const job of jobs) {
          got.set(job.queue, (got.get(job.queue) ?? 0) + 1);
          keyed ||= job.concurrencyKey !== null;
          this.spawn(job, sentAt + leaseMs);
        }
        claimed += jobs.length;
      }
      this.pump();
      for (const [queue, count] of got) this.counters.trigger.claimed({ queue, count });
      // A claim takes no more of a key than its limit from the jobs it looks at, so a round
      // that took keyed jobs may have left other keys' jobs behind them: claim again.
      return { claimed, full: keyed || requests.some((r) => (got.get(r.queue) ?? 0) >= r.limit) };
    } finally {
      this.claimsInFlight -= 1;
      this.notifySlotsFreed();
    }
  }

  abortAll(): void {
    for (const { actor } of this.jobs.values()) actor.send({ type: 'job.abort' });
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

  stopped(): void {
    const unsubscribe = this.unsubscribe;
    this.unsubscribe = undefined;
    this.progress.close();
    const done = () => {
      this.logger.info({ workerId: this.workerId }, 'supervisor stopped');
      this.drained();
      this.resolveStopped?.();
    };
    if (unsubscribe) {
      unsubscribe().then(done, (error: unknown) => {
        this.logger.warn({ err: error }, 'unsubscribing from store notifications failed');
        done();
      });
    } else {
      done();
    }
  }

  /** A page for developers: if it cannot start (port taken), the jobs run all the same. Loaded
   *  only when asked for, so that the core does not load the HTTP server. */
  private async startInspector(options: NonNullable<SupervisorOptions['inspector']>): Promise<void> {
    try {
      const { startInspector } = await import('../inspector/inspector.js');
      this.inspector = await startInspector({ ...options, store: this.store, supervisor: this, logger: this.logger });
      // stop() came while it was starting.
      if (this.stopPromise) await this.inspector.close();
    } catch (error) {
      this.logger.warn({ err: error }, 'inspector did not start; the supervisor runs without it');
    }
  }

  private startScheduler(schedules: readonly Schedule[]): void {
    // Durations on the clock that drives the timers: monotonic unless one is injected.
    const scheduler = new Scheduler(this.store, schedules, this.options.clock?.setTimeout ? this.clock : monotonicClock);
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

  // ── job actors ──────────────────────────────────────────────────────────────────────────

  /** A cancel for a job held here, before its handler is over: its actor aborts it. */
  private cancelHeld(jobId: string): boolean {
    const entry = this.jobs.get(jobId);
    if (!entry || entry.phase === 'done') return false;
    entry.actor.send({ type: 'job.cancel' });
    return true;
  }

  private spawn(job: ClaimedJob, leaseValidUntil: number): void {
    const run = this.queueRuntime(job.queue);
    const queue = run.queue;
    // The claim set updatedAt: the store's clock on both sides.
    run.metrics.lagSeconds.observe(Math.max(0, job.updatedAt.getTime() - job.runAt.getTime()) / 1000);
    const startNow = queue.settings.gate === undefined && this.slots.canStart(queue);
    const entry = { queue, job, phase: startNow ? 'running' : 'held' } as JobEntry;
    // An attempt of ours may still be alive (its write on the way, or its handler running)
    // when the reaper gave its job back and we claim it again: it can write nothing now, so
    // it ends here, and what it does later must not touch the new attempt's entry.
    const superseded = this.jobs.get(job.id);
    if (superseded) this.finish(superseded);
    this.jobs.set(job.id, entry);
    if (startNow) {
      this.slots.start(queue);
    } else {
      this.slots.hold(queue);
      this.waiting.get(queue.name)!.push(entry);
    }
    // Each job actor is a root actor with its own system. Sharing one system would save its
    // construction, but XState's scheduler then scans every timer of every actor in that
    // system whenever one actor stops: quadratic with thousands of jobs in flight.
    entry.actor = createActor(jobMachine, {
      ...this.actorOptions(),
      input: {
        job,
        ports: run.ports,
        policy: run.policy,
        hasHandler: Object.hasOwn(queue.handlers, job.kind),
        waitForStart: !startNow,
        leaseValidUntil,
      },
    });
    entry.actor.subscribe({
      complete: () => this.finish(entry),
      error: (error) => {
        // An action threw: a bug, not a job failure. Free the slot; the lease expires and the
        // reaper gives the job back to the queue.
        this.logger.error({ err: error, jobId: job.id }, 'job actor crashed');
        this.finish(entry);
      },
    });
    entry.actor.start();
    if (job.expiresAt !== null && entry.phase !== 'done') {
      entry.cancelExpiry = startTimer(this.clock, job.expiresAt.getTime(), () => entry.actor.send({ type: 'job.expire' }));
    }
  }

  /** Starts held jobs while their queue, the global limit and their gate allow, taking
   *  queues in turn so that one queue's backlog does not starve another. */
  private pump(): void {
    let started = true;
    while (started) {
      started = false;
      for (const held of this.waiting.values()) {
        const entry = held[0];
        if (!entry || !this.slots.canStart(entry.queue)) continue;
        held.shift();
        this.slots.unhold(entry.queue);
        this.slots.start(entry.queue);
        entry.phase = 'running';
        this.startHeld(entry);
        started = true;
      }
    }
  }

  private startHeld(entry: JobEntry): void {
    const gateName = entry.queue.settings.gate;
    const gate = gateName === undefined ? undefined : this.slots.gates.get(gateName);
    if (!gate) {
      entry.actor.send({ type: 'job.start' });
      return;
    }
    void gate.limit(
      () =>
        new Promise<void>((resolve) => {
          entry.leaveGate = resolve;
          if (entry.phase === 'running') entry.actor.send({ type: 'job.start' });
          else resolve();
        }),
    );
  }

  /** The ports and policy every job actor of a queue shares, made once. */
  private queueRuntime(name: string): QueueRuntime {
    let run = this.runtimes.get(name);
    if (run) return run;
    const queue = this.queues.get(name);
    if (!queue) throw new Error(`store returned a job of queue "${name}", which was not asked for`);
    const s = queue.settings;
    const renew = this.renewerFor(s.leaseMs);
    const handlers = queue.handlers;
    run = {
      queue,
      metrics: this.metrics.queue(name)!,
      policy: {
        leaseMs: s.leaseMs,
        heartbeatMs: s.heartbeatMs,
        deadlineMs: s.deadlineMs ?? 0,
        writeRetryMs: this.settings.writeRetryMs,
      },
      ports: {
        runHandler: (claimed, abort) => {
          const handler = handlers[claimed.kind]!;
          const job = new HandlerJob(claimed, abort, this.reportProgress);
          const entry = this.jobs.get(claimed.id);
          if (entry) entry.startedAt = this.clock.now();
          if (!this.tracer || !entry) return handler(job);
          entry.span = new AttemptSpan(this.tracer, claimed);
          return entry.span.run(() => handler(job));
        },
        writeOutcome: this.writeOutcome,
        // A renewal may report a cancel requested from elsewhere (a lost notification).
        renewLease: (lease) =>
          renew(lease).then((answer) => {
            if (answer === 'cancel') this.cancelHeld(lease.id);
            return answer !== 'lost';
          }),
        freeSlot: (claimed) => {
          const entry = this.jobs.get(claimed.id);
          if (entry?.job === claimed) this.freeSlot(entry);
        },
        now: () => this.clock.now(),
        backoffMs: s.backoff,
      },
    };
    this.runtimes.set(name, run);
    return run;
  }

  /** The handler is over (or never ran): its slot can take the next job while the actor
   *  waits for its write. */
  private freeSlot(entry: JobEntry): void {
    if (entry.phase === 'done') return;
    if (entry.phase === 'running') {
      if (entry.startedAt !== undefined) {
        this.runtimes.get(entry.queue.name)!.metrics.attemptSeconds.observe((this.clock.now() - entry.startedAt) / 1000);
      }
      this.slots.release(entry.queue);
      entry.leaveGate?.();
    } else {
      const held = this.waiting.get(entry.queue.name)!;
      held.splice(held.indexOf(entry), 1);
      this.slots.unhold(entry.queue);
    }
    entry.phase = 'done';
    this.pump();
    this.notifySlotsFreed();
  }

  private finish(entry: JobEntry): void {
    if (this.jobs.get(entry.job.id) !== entry) return;
    this.jobs.delete(entry.job.id);
    this.freeSlot(entry);
    this.attemptsRun += 1;
    const snapshot = entry.actor.getSnapshot();
    const state = (snapshot.status === 'done' ? snapshot.value : 'lost') as JobActorFinalState;
    const context = snapshot.context as JobMachineContext;
    entry.cancelExpiry?.();
    entry.span?.end(state, context.error);
    this.progress.forget(entry.job.id);
    this.tally(entry.queue.name, state);
    if (state === 'dead') {
      this.alertDead({ ...entry.job, state: 'dead', error: context.error, leaseToken: null, leaseExpiresAt: null }, context.error);
    } else if (state === 'lost') {
      this.logger.warn({ jobId: entry.job.id, attempt: entry.job.attempt }, 'lease lost; the attempt wrote nothing');
    }
    this.keyFreed ||= entry.job.concurrencyKey !== null;
    this.notifySlotsFreed();
  }

  /** Many jobs finish in one tick (a batched write answers them together): tell the
   *  supervisor machine once. */
  private notifySlotsFreed(): void {
    if (this.slotsFreedPending) return;
    this.slotsFreedPending = true;
    queueMicrotask(() => {
      this.slotsFreedPending = false;
      this.actor.send({ type: 'supervisor.slotsFreed' });
      if (this.keyFreed) {
        this.keyFreed = false;
        this.actor.send({ type: 'supervisor.wake' });
      }
    });
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

  /** A handler's `job.progress(…)`: written while its attempt runs here, dropped after. */
  private readonly reportProgress: ProgressSink = (lease, percent, message) => {
    const entry = this.jobs.get(lease.id);
    if (entry?.phase === 'running' && entry.job.leaseToken === lease.leaseToken) this.progress.report(lease, percent, message);
  };

  private renewerFor(leaseMs: number): (lease: Lease) => Promise<LeaseRenewal> {
    let renew = this.renewers.get(leaseMs);
    if (!renew) {
      renew = createBatcher((leases: Lease[]) => this.store.renewLeases({ leases, leaseMs }));
      this.renewers.set(leaseMs, renew);
    }
    return renew;
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
