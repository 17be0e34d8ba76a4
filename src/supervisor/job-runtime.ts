/**
 * The job actors of one supervisor, from claim until each is final: spawning them, starting
 * held ones as slots free (through their gates), giving slots back, and ending them. The
 * claim decision is not here: the planner decides, and this runtime keeps the planner's
 * room up to date and *tells* the supervisor's actor (slots freed, a key freed) through the
 * `tell` it was given. It never calls back into the supervisor.
 */
import { type Actor, type AnyActorRef, createActor, fromTransition } from 'xstate';
import type { JobOutcome, JobStore, Lease, HeldJob, LeaseRenewal, WakeAt } from '../adapters/store.js';
import type { StepWriter } from './durable-steps.js';
import type { AttemptHandle } from '../machines/attempt-handle.js';
import { exponentialBackoff } from '../machines/backoff.js';
import { type JobActorFinalState, type JobMachineContext, jobMachine, type JobPolicy, type JobPorts } from '../machines/job-machine.js';
import type { Queue } from '../queue.js';
import type { QueueMetrics, SupervisorMetrics } from '../telemetry/metrics.js';
import { AttemptSpan } from '../telemetry/tracing.js';
import type { ClaimedJob, Clock, JobErrorInfo, Logger } from '../types.js';
import type { ClaimPlanner } from './claim-planner.js';
import { HandlerJob, type ProgressSink } from './handler-job.js';
import { currentAttempt, runAsAttempt } from './handler-scope.js';
import type { ProgressWriter } from './progress-writer.js';
import type { SupervisorEvent } from './supervisor-machine.js';
import { startTimer, type TimerClock } from './timer.js';
import { WakeTimer } from './wake-timer.js';

type JobActor = Actor<typeof jobMachine>;
type Tracer = ConstructorParameters<typeof AttemptSpan>[0];

type Phase = 'held' | 'running' | 'done';

/** A job actor of this supervisor, from claim until its actor is final. It is also the
 *  actor's observer: `complete` and `error` are methods every entry shares, not two closures
 *  made per job and held while it is in flight. */
class JobEntry {
  /** Set once made: the actor is made with its entry as its observer. */
  actor: JobActor = undefined as unknown as JobActor;
  readonly queue: Queue;
  readonly job: ClaimedJob;
  /** held: claimed ahead, waiting for a slot; running: holds a slot; done: the handler is
   *  over (or never ran) and the slot is free, though the outcome may still be writing. */
  phase: Phase;
  /** Ends the job's task in its gate's limiter. */
  leaveGate: (() => void) | undefined = undefined;
  /** When its handler started, by the supervisor's clock. */
  startedAt: number | undefined = undefined;
  /** Stops the timer that ends the job at its `expiresAt`. */
  cancelExpiry: (() => void) | undefined = undefined;
  /** Its attempt's span, when tracing is on. */
  span: AttemptSpan | undefined = undefined;
  /** The runtime's, shared by all of its entries: the actor is final (crashed: an action threw). */
  readonly #ended: (entry: JobEntry, crashed: boolean, error: unknown) => void;

  constructor(queue: Queue, job: ClaimedJob, phase: Phase, ended: (entry: JobEntry, crashed: boolean, error: unknown) => void) {
    this.queue = queue;
    this.job = job;
    this.phase = phase;
    this.#ended = ended;
  }

  complete(): void {
    this.#ended(this, false, undefined);
  }

  error(error: unknown): void {
    this.#ended(this, true, error);
  }
}

/** How an attempt's actor ended, for the supervisor's tallies, alerts and logs. */
export interface FinishedAttempt {
  job: ClaimedJob;
  state: JobActorFinalState;
  error: JobErrorInfo | null;
}

/** What every job actor of a queue shares. */
interface QueueRuntime {
  queue: Queue;
  ports: JobPorts;
  policy: JobPolicy;
  metrics: QueueMetrics;
}

export interface JobRuntimeOptions {
  queues: ReadonlyMap<string, Queue>;
  planner: ClaimPlanner;
  clock: TimerClock & Clock;
  logger: Logger;
  metrics: SupervisorMetrics;
  progress: ProgressWriter;
  /** Where a handler's `job.parents()` and `job.children()` read, and its durable calls write. */
  store: Pick<JobStore, 'getJobDependencies' | 'suspendIfRunning'> & StepWriter;
  /** The installed OpenTelemetry SDK's tracer; undefined: no spans at all. */
  tracer: Tracer | undefined;
  writeRetryMs: number;
  /** For the jitter of the queues' default backoff; undefined: Math.random. */
  random?: (() => number) | undefined;
  /** Writes an attempt's outcome (batched); resolves whether the fence let it apply. */
  writeOutcome(outcome: JobOutcome): Promise<boolean>;
  /** The renewer (batched) for a lease length. */
  renewerFor(leaseMs: number): (lease: Lease) => Promise<LeaseRenewal>;
  /** Tells the supervisor's actor. */
  tell(event: SupervisorEvent): void;
  /** A job held here went to sleep (or to wait for a signal) until `wake`, asked at `askedAt`
   *  by the supervisor's clock (a delay counts from then, not from when the store answered). */
  slept(wake: WakeAt, askedAt: number): void;
  /** An attempt's actor is final. */
  finished(attempt: FinishedAttempt): void;
  /** XState options for the system every job actor runs in (clock, inspect). */
  actorOptions: object;
}

export class JobRuntime {
  private readonly jobs = new Map<string, JobEntry>();
  /** Per queue, jobs claimed ahead of a free slot, in claim order. */
  private readonly waiting = new Map<string, JobEntry[]>();
  /** The same lines, in the queues' order, for `pump` (which runs each time a slot frees). */
  private readonly lines: JobEntry[][];
  /** Stopping: held jobs are released, none starts. */
  private closing = false;
  /** Which queue's held jobs `pump` asks first: the one after the queue that started last. */
  private nextTurn = 0;
  private readonly runtimes = new Map<string, QueueRuntime>();
  /** Every job actor's lease beats and deadline: one timer. */
  private readonly wakes: WakeTimer;
  /**
   * The parent of every job actor, so that they share its XState system (its clock, its
   * inspection, its scheduler) instead of each building one: about 1.8 KB a job in flight
   * (bench/optimisations.md, row 24). It takes what a child tells its parent (done, an error)
   * and does nothing with it: the supervisor hears of them through each actor's observer. (A
   * stopped parent would save that step, but XState's development build warns of every event
   * sent to a stopped actor.) Sharing was quadratic while job actors set XState timers (the
   * scheduler scans every timer of the system whenever an actor stops); now only a write
   * waiting to be tried again sets one.
   */
  private readonly jobsParent: AnyActorRef;
  private slotsFreedPending = false;
  /** The stop gave up on the store (abandon). */
  private abandoned = false;
  /** Queues whose keyed job's outcome is written: its key is free, so their next job may be claimable. */
  private readonly keysFreed = new Set<string>();
  /** Jobs whose handler called the supervisor's stop(): that stop neither aborts nor waits
   *  for them (they wait for it), until their actors are final. */
  private readonly stopCallers = new Set<JobEntry>();
  /** What `afterStopCallers` waits to call once the last of them is final. */
  private stopCallersGone: (() => void) | undefined;

  constructor(private readonly options: JobRuntimeOptions) {
    for (const name of options.queues.keys()) this.waiting.set(name, []);
    this.lines = [...this.waiting.values()];
    this.wakes = new WakeTimer(options.clock);
    this.jobsParent = createActor(fromTransition((state: null) => state, null), { ...options.actorOptions, id: 'jobvisor.jobs' }).start();
  }

  /** Job actors not yet final. */
  get size(): number {
    return this.jobs.size;
  }

  /** The jobs held here, claimed ahead of a free slot, for the heartbeat. */
  held(): HeldJob[] {
    return [...this.waiting.values()].flatMap((line) => line.map((entry) => ({ id: entry.job.id, queue: entry.queue.name })));
  }

  /** Job actors not yet final that a stop waits for: all but those whose handler called it. */
  get awaitedByStop(): number {
    return this.jobs.size - this.stopCallers.size;
  }

  /** Called by stop(): whether the calling code runs in the handler of one of these jobs,
   *  still running here. If so, that job is marked as the stop's caller. */
  markStopCaller(): boolean {
    const entry = currentAttempt() as JobEntry | undefined;
    if (entry === undefined || this.jobs.get(entry.job.id) !== entry || entry.phase !== 'running') return false;
    this.stopCallers.add(entry);
    return true;
  }

  /** Calls `then` once every job whose handler called stop() has a final actor: at once if none. */
  afterStopCallers(then: () => void): void {
    // A stop that gave up on the store waits for none: their writes may be what it gave up on.
    if (this.stopCallers.size === 0 || this.abandoned) then();
    else this.stopCallersGone = then;
  }

  /** One actor per claimed job: started at once if its queue, the global limit and its gate
   *  allow, else held (leased) until a slot frees. `sentAt`: when its claim was sent, by the
   *  supervisor's clock. */
  spawn(job: ClaimedJob, sentAt: number): void {
    // A claim that answered after the stop gave up on the store: its jobs wait for the reaper.
    if (this.abandoned) return;
    const run = this.queueRuntime(job.queue);
    const queue = run.queue;
    const { planner, clock } = this.options;
    // The claim set updatedAt: the store's clock on both sides.
    run.metrics.lagSeconds.observe(Math.max(0, job.updatedAt.getTime() - job.runAt.getTime()) / 1000);
    const startNow = !this.closing && queue.settings.gate === undefined && planner.canStart(queue);
    const { leaseValidUntil, expiresAtMs } = claimTimes(job, sentAt);
    const entry = new JobEntry(queue, job, startNow ? 'running' : 'held', this.actorEnded);
    // An attempt of ours may still be alive (its write on the way, or its handler running)
    // when the reaper gave its job back and we claim it again: it can write nothing now, so
    // it ends here, and what it does later must not touch the new attempt's entry.
    const superseded = this.jobs.get(job.id);
    if (superseded) {
      this.finish(superseded);
      // Its lease is gone (the store gave the row to this claim), and no wake comes to it any
      // more: it is told now, as a refused renewal would tell it, which aborts its handler
      // (lease_lost) and ends it `lost`. A write of its own in flight is fenced out all the same.
      superseded.actor.send({ type: 'lease.renewed', applied: false, sentAt: clock.now() });
    }
    this.jobs.set(job.id, entry);
    if (startNow) {
      planner.start(queue);
    } else {
      planner.hold(queue);
      this.waiting.get(queue.name)!.push(entry);
    }
    // In the one system of `jobsParent`: its clock and inspection are the system's.
    entry.actor = createActor(jobMachine, {
      parent: this.jobsParent,
      input: {
        job,
        ports: run.ports,
        policy: run.policy,
        hasHandler: Object.hasOwn(queue.handlers, job.kind),
        waitForStart: !startNow,
        leaseValidUntil,
        expiresAtMs,
      },
    });
    entry.actor.subscribe(entry);
    entry.actor.start();
    // Brought by a claim that was in flight when the supervisor began to stop.
    if (this.closing && entry.phase === 'held') entry.actor.send({ type: 'job.abort' });
    if (expiresAtMs !== null && entry.phase !== 'done') {
      entry.cancelExpiry = startTimer(clock, expiresAtMs, () => entry.actor.send({ type: 'job.expire' }));
    }
  }

  /** Starts held jobs while their queue, the global limit and their gate allow, taking
   *  queues in turn so that one queue's backlog does not starve another. */
  pump(): void {
    if (this.closing) return;
    const { planner } = this.options;
    const lines = this.lines;
    let started = true;
    while (started) {
      started = false;
      for (let i = 0; i < lines.length; i++) {
        // The turn goes round: the queue after the one that started last is asked first.
        const k = (this.nextTurn + i) % lines.length;
        const held = lines[k]!;
        const entry = held[0];
        if (!entry || !planner.canStart(entry.queue)) continue;
        held.shift();
        planner.unhold(entry.queue);
        planner.start(entry.queue);
        entry.phase = 'running';
        this.startHeld(entry);
        this.nextTurn = (k + 1) % lines.length;
        started = true;
        break;
      }
    }
  }

  /** The supervisor is stopping: no held job starts from now on. Each is given back at once
   *  (released: pending again, no attempt spent), and so is any job that a claim still in
   *  flight brings; running handlers keep their grace period. */
  releaseHeld(): void {
    this.closing = true;
    for (const held of this.waiting.values()) for (const entry of [...held]) entry.actor.send({ type: 'job.abort' });
  }

  /** A cancel for a job held here, before its handler is over: its actor aborts it. */
  cancelHeld(jobId: string): boolean {
    const entry = this.jobs.get(jobId);
    if (!entry || entry.phase === 'done') return false;
    entry.actor.send({ type: 'job.cancel' });
    return true;
  }

  /** The stop gave up on the store (storeWaitMs): a claim that answers later starts nothing
   *  (its jobs' rows wait for the reaper), and the job actors still writing, and those of
   *  handlers that called stop(), are no longer waited for. A write in flight may still land;
   *  none is tried again. A row left `running` goes back when its lease ends. Answers: how
   *  many are still writing. */
  abandon(): number {
    this.abandoned = true;
    return this.awaitedByStop;
  }

  /** The grace period is over: every job is aborted but those whose handler called stop(). */
  abortAll(): void {
    for (const entry of this.jobs.values()) if (!this.stopCallers.has(entry)) entry.actor.send({ type: 'job.abort' });
  }

  /** Whether this attempt of a job still runs here, under this lease. */
  holds(lease: Lease): boolean {
    const entry = this.jobs.get(lease.id);
    return entry?.phase === 'running' && entry.job.leaseToken === lease.leaseToken;
  }

  private startHeld(entry: JobEntry): void {
    const gateName = entry.queue.settings.gate;
    const gate = gateName === undefined ? undefined : this.options.planner.gates.get(gateName);
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
    const queue = this.options.queues.get(name);
    if (!queue) throw new Error(`store returned a job of queue "${name}", which was not asked for`);
    const { clock, logger, metrics } = this.options;
    const s = queue.settings;
    const renew = this.options.renewerFor(s.leaseMs);
    run = {
      queue,
      metrics: metrics.queue(name)!,
      policy: {
        leaseMs: s.leaseMs,
        heartbeatMs: s.heartbeatMs,
        deadlineMs: s.deadlineMs ?? 0,
        writeRetryMs: this.options.writeRetryMs,
      },
      ports: {
        runHandler: (claimed, abort) => this.runHandler(queue, claimed, abort),
        wakeAt: (actor, event, at) => this.wakes.wakeAt(actor, event, at),
        // After the stop gave up on the store nothing more is sent for the jobs it left: a
        // write tried again (the store threw) stays unanswered, so no timer of theirs keeps
        // the process alive and no call reaches a store its owner may have closed.
        writeOutcome: (outcome) => (this.abandoned ? new Promise<boolean>(() => {}) : this.options.writeOutcome(outcome)),
        // A renewal may report a cancel requested from elsewhere (a lost notification).
        renewLease: (lease) =>
          renew(lease).then((answer) => {
            if (answer === 'cancel') this.cancelHeld(lease.id);
            return answer !== 'lost';
          }),
        suspend: (request) => {
          const askedAt = clock.now();
          return this.options.store.suspendIfRunning(request).then((answer) => {
            if (answer.answer === 'sleeping') this.options.slept(request.wake, askedAt);
            return answer;
          });
        },
        freeSlot: (claimed) => {
          const entry = this.jobs.get(claimed.id);
          if (entry?.job === claimed) this.freeSlot(entry);
        },
        now: () => clock.now(),
        backoffMs: safeBackoff(queue, logger, this.options.random),
      },
    };
    this.runtimes.set(name, run);
    return run;
  }

  private runHandler(queue: Queue, claimed: ClaimedJob, abort: AttemptHandle): unknown {
    const handler = queue.handlers[claimed.kind]!;
    const job = new HandlerJob(claimed, abort, this.reportProgress, this.options.store);
    const entry = this.jobs.get(claimed.id);
    if (entry) entry.startedAt = this.options.clock.now();
    if (!entry) return handler(job);
    const tracer = this.options.tracer;
    if (!tracer) return runAsAttempt(entry, () => handler(job));
    try {
      entry.span = new AttemptSpan(tracer, claimed);
    } catch (error) {
      // A tracing SDK that throws must not cost the attempt.
      this.options.logger.error({ err: error, jobId: claimed.id }, 'starting the attempt span failed; the job runs without it');
      return runAsAttempt(entry, () => handler(job));
    }
    const span = entry.span;
    return runAsAttempt(entry, () => span.run(() => handler(job)));
  }

  /** A handler's `job.progress(…)`: written while its attempt runs here, dropped after. */
  private readonly reportProgress: ProgressSink = (lease, percent, message) => {
    if (this.holds(lease)) this.options.progress.report(lease, percent, message);
  };

  /** The handler is over (or never ran): its slot can take the next job while the actor
   *  waits for its write. */
  private freeSlot(entry: JobEntry): void {
    this.wakes.drop(entry.actor);
    if (entry.phase === 'done') return;
    const { planner, clock } = this.options;
    if (entry.phase === 'running') {
      if (entry.startedAt !== undefined) {
        this.runtimes.get(entry.queue.name)!.metrics.attemptSeconds.observe((clock.now() - entry.startedAt) / 1000);
      }
      planner.release(entry.queue);
      entry.leaveGate?.();
    } else {
      const held = this.waiting.get(entry.queue.name)!;
      held.splice(held.indexOf(entry), 1);
      planner.unhold(entry.queue);
    }
    entry.phase = 'done';
    this.pump();
    this.notifySlotsFreed();
  }

  /** An entry's actor is final: `complete`, or `error` (crashed). */
  private readonly actorEnded = (entry: JobEntry, crashed: boolean, error: unknown): void => {
    if (crashed) {
      // An action threw: a bug, not a job failure. Free the slot; the lease expires and the
      // reaper gives the job back to the queue.
      this.options.logger.error({ err: error, jobId: entry.job.id }, 'job actor crashed');
    }
    this.finish(entry);
  };

  private finish(entry: JobEntry): void {
    if (this.jobs.get(entry.job.id) !== entry) return;
    this.jobs.delete(entry.job.id);
    this.freeSlot(entry);
    const snapshot = entry.actor.getSnapshot();
    const state = (snapshot.status === 'done' ? snapshot.value : 'lost') as JobActorFinalState;
    const context = snapshot.context as JobMachineContext;
    entry.cancelExpiry?.();
    if (entry.span) {
      try {
        entry.span.end(state, context.error);
      } catch (error) {
        this.options.logger.error({ err: error, jobId: entry.job.id }, 'ending the attempt span failed');
      }
    }
    this.options.progress.forget(entry.job.id);
    if (this.stopCallers.delete(entry) && this.stopCallers.size === 0) this.stopCallersGone?.();
    if (entry.job.concurrencyKey !== null) this.keysFreed.add(entry.queue.name);
    this.options.finished({ job: entry.job, state, error: context.error });
    this.notifySlotsFreed();
  }

  /** Many jobs finish in one tick (a batched write answers them together): tell the
   *  supervisor's actor once. */
  notifySlotsFreed(): void {
    if (this.slotsFreedPending) return;
    this.slotsFreedPending = true;
    queueMicrotask(() => {
      this.slotsFreedPending = false;
      this.options.tell({ type: 'supervisor.slotsFreed' });
      for (const queue of this.keysFreed) this.options.tell({ type: 'supervisor.wake', queue });
      this.keysFreed.clear();
    });
  }
}

/**
 * The claim's times on the supervisor's clock, which measures durations and never reads the
 * store's time. The claim's statement stamped the row (`updatedAt`) with the store's now, read
 * while the claim was under way, so at or after `sentAt`: the lease (the store's now + the
 * queue's lease) surely holds until `sentAt` + lease, and `expiresAt` comes `expiresAt` −
 * `updatedAt` after that stamp, at the latest `sentAt` plus that. A worker whose wall clock is
 * minutes off, or stepped, measures the same.
 */
function claimTimes(job: ClaimedJob, sentAt: number): { leaseValidUntil: number; expiresAtMs: number | null } {
  const leaseMs = job.leaseExpiresAt.getTime() - job.updatedAt.getTime();
  const expiresAtMs = job.expiresAt === null ? null : sentAt + (job.expiresAt.getTime() - job.updatedAt.getTime());
  return { leaseValidUntil: sentAt + leaseMs, expiresAtMs };
}

/** The queue's backoff, contained: one that throws or answers nonsense is logged and the
 *  default backoff answers instead, so the attempt's retry is still written. */
function safeBackoff(queue: Queue, logger: Logger, random: (() => number) | undefined): (attempt: number) => number {
  const fallback = exponentialBackoff({ random });
  // The queue's default backoff, with the supervisor's randomness.
  const backoff = queue.settings.defaultBackoff && random !== undefined ? fallback : queue.settings.backoff;
  return (attempt) => {
    try {
      return backoff(attempt);
    } catch (error) {
      logger.error({ err: error, queue: queue.name, attempt }, 'the queue\'s backoff threw; the default backoff is used for this retry');
      return fallback(attempt);
    }
  };
}
