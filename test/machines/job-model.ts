/**
 * The job machine as a model for path enumeration: the machine itself, plus a small model of
 * the world around it (virtual time with the timers the machine asks the supervisor for and
 * its own write retry, the promises it has in
 * flight, and what the store holds), so that `xstate/graph` offers only events that a replay
 * can really produce:
 *
 * - a timer event only when it is the next timer due (time moves to it);
 * - the handler's answer only while the handler runs, a renewal's answer only after a
 *   heartbeat sent one, a write's answer only while a write is in flight;
 * - a store answer "not applied" only together with what makes it true: the worker was
 *   paused, the reaper rescued the row and another worker claimed it (a steal);
 * - a pause of the process while a job waits for a slot (`process.paused`): the wall clock
 *   moves to the end of the lease and no timer fires until something happens next;
 * - the job's `expiresAt` as a timer of the world (the supervisor's), sending `job.expire`;
 * - `lease.beat` and `attempt.deadline` at the times the machine asked for (`wakeAt`), as the
 *   supervisor's one timer sends them; a later ask replaces the earlier, a freed slot drops both;
 * - a handler that keeps the event loop busy (`process.busy`, in the configs that say `busy`):
 *   time moves past its deadline or its lease and no timer fires until something happens
 *   next; its answer then comes as `handler.late` (the handler's answer is judged when it
 *   comes, by the clock).
 *
 * The machine's actions are recorded, never run: the model reads from them which timers were
 * asked for, set or cancelled and which promises started.
 *
 * The machine says which paths exist; it does not say what they must write. The row and the
 * history rows a path must leave are the model's own decision (`decide`, from the README's
 * rules), and what each state must ignore is stated apart (`IGNORED`): a machine that
 * retried a PermanentJobError, or allowed one attempt more, fails the replays.
 */
import { type ActorLogic, type ActorScope, type AnyEventObject, type SnapshotFrom } from 'xstate';
import { getSimplePaths, type StatePath } from 'xstate/graph';
import { isPermanentStoreError } from '../../src/adapters/store-errors.js';
import type { ChildJob } from '../../src/adapters/store.js';
import { PermanentJobError, SkipJobError, SnoozeJobError } from '../../src/errors.js';
import { jobMachine, type JobMachineEvent, type JobMachineInput, type JobPolicy, type WakeEvent } from '../../src/machines/job-machine.js';
import type { ClaimedJob, JobState } from '../../src/types.js';
import { coveringPaths } from '../support/covering-paths.js';
import { type ModelTimer, recordTimerAction } from '../support/model-timers.js';

export type JobSnapshot = SnapshotFrom<typeof jobMachine>;

/** No two timers are ever due at once: in `running`, heartbeats 1 000 and 2 000 ms after its
 *  start and the deadline at 2 500; a lease not renewed by one heartbeat has lapsed at the next. */
export const TIMING = { leaseMs: 1_500, heartbeatMs: 1_000, deadlineMs: 2_500, writeRetryMs: 700, backoffMs: 700 };
export const POLICY: JobPolicy = {
  leaseMs: TIMING.leaseMs, heartbeatMs: TIMING.heartbeatMs, deadlineMs: TIMING.deadlineMs, writeRetryMs: TIMING.writeRetryMs,
};

/** One attempt's situation: everything a path's guards depend on besides time. */
export interface JobModelConfig {
  name: string;
  maxAttempts: number;
  hasHandler: boolean;
  /** Waits in `claimed` for `job.start` (a free slot or its gate), or starts at once. */
  waitForStart: boolean;
  /** The claim's answer arrived this long after it was sent: a lease later, it has lapsed. */
  answeredAfterMs?: number;
  /** The job's deadline across all attempts, ms after the claim. */
  expiresAtMs?: number;
  /** The handler waits for a signal once (docs/durable-jobs.md): `handler.suspend`. */
  durable?: boolean;
  /** The handler may keep the event loop busy once, at its start: `process.busy`. */
  busy?: boolean;
  /** This config's per-attempt deadline instead of TIMING's. */
  deadlineMs?: number;
}

/** The policy a config's actors run with. */
export function policyOf(config: JobModelConfig): JobPolicy {
  return { ...POLICY, deadlineMs: config.deadlineMs ?? POLICY.deadlineMs };
}

/** How far a busy event loop holds the handler: just past its deadline (the lease still
 *  holds), or just past its lease. */
export const BUSY_UNTIL = ['deadline', 'lease'] as const;

export const CONFIGS: readonly JobModelConfig[] = [
  { name: 'waits for a slot, attempts left', maxAttempts: 2, hasHandler: true, waitForStart: true },
  { name: 'starts at once, last attempt', maxAttempts: 1, hasHandler: true, waitForStart: false },
  { name: 'no handler, waits for a slot', maxAttempts: 2, hasHandler: false, waitForStart: true },
  { name: 'no handler, starts at once', maxAttempts: 2, hasHandler: false, waitForStart: false },
  { name: 'claim answered after its lease', maxAttempts: 2, hasHandler: true, waitForStart: false, answeredAfterMs: TIMING.leaseMs + 1 },
  // One attempt: a steal then ends the job (dead) whether or not it expired meanwhile. Its
  // expiry (1 850) falls on no other timer (sums of 1 000, 2 500 and 700).
  { name: 'expires while it waits or runs', maxAttempts: 1, hasHandler: true, waitForStart: true, expiresAtMs: 1_850 },
  { name: 'claimed past its expiresAt', maxAttempts: 1, hasHandler: true, waitForStart: false, expiresAtMs: 0 },
  { name: 'a durable handler', maxAttempts: 1, hasHandler: true, waitForStart: false, durable: true },
  // Its deadline (600) comes before the first heartbeat (1 000): after a busy loop past the
  // lease, the overdue deadline timer fires first. 600 + n·700 falls on no lease end.
  { name: 'a handler that keeps the loop busy', maxAttempts: 2, hasHandler: true, waitForStart: false, busy: true, deadlineMs: 600 },
  { name: 'a busy handler on its last attempt', maxAttempts: 1, hasHandler: true, waitForStart: false, busy: true, deadlineMs: 600 },
];

/** The durable handler's one call: a wait for signal "go" with a timeout. The store answers
 *  it as the replay arranges: nothing in the mailbox (sleeping), a signal sent before
 *  (received), a cancel requested (cancelled), the row stolen (lost). */
export const SIGNAL_WAIT = { kind: 'signal', name: 'go', signal: 'go', wake: { delayMs: 60_000 } } as const;
export const SUSPEND_ANSWERS = ['sleeping', 'received', 'cancelled', 'lost'] as const;

/** A history row as the model predicts it: from, to, attempt, worker, error code. */
export type HistoryRow = [JobState | null, JobState, number, string | null, string | null];

export const WORKER = 'w1';
export const THIEF = 'w2';

type Timer = ModelTimer;

export interface World {
  /** Model time, ms since the claim. */
  now: number;
  timers: Timer[];
  handlerRunning: boolean;
  /** When the handler started (model time). */
  handlerStartedAt: number;
  /** The handler kept the event loop busy once. */
  busy: boolean;
  /** It may (the config's `busy`). */
  mayBeBusy: boolean;
  /** When the renewal in flight was sent. */
  renewalSentAt: number | null;
  writeInFlight: boolean;
  /** Loops a simple path may go round once: without these marks the state after one round
   *  would be the state before it (a write that failed and was sent again; a renewal that
   *  was answered). */
  writeFailed: boolean;
  renewed: boolean;
  /** The row was rescued and re-claimed behind the worker's back. */
  stolen: boolean;
  /** The process was paused once, past its lease. */
  paused: boolean;
  /** The store refused the outcome for good (the statement failed, not the connection). */
  writeRefused: boolean;
  /** The handler's sleep or wait is on its way to the store. */
  suspendInFlight: boolean;
  /** The handler made its one durable call. */
  suspended: boolean;
  /** The handler may make one (the config's `durable`). */
  durable: boolean;
  /** The store put the row to sleep (or ended it cancelled) after the actor had stopped
   *  waiting for the answer: every write of this attempt is then refused. */
  landed: Decided | null;
  /** The row this attempt must end in, decided by the README's rules (`decide`), not read
   *  from the machine; null until the handler's answer, a timer or a request decides it. */
  decided: Decided | null;
  history: HistoryRow[];
}

/** An attempt's outcome as the README promises it: the row's state after the write (`pending`
 *  for a snooze), its error code, and the result of a completion. */
export interface Decided {
  to: JobState;
  code: string | null;
  result?: unknown;
}

export type ModelSnapshot = {
  status: JobSnapshot['status'];
  output: undefined;
  error: undefined;
  machine: JobSnapshot;
  world: World;
};
export type ModelEvent = JobMachineEvent | AnyEventObject;

/** The handler outcomes a test can choose. One instance each, so a replay throws the very
 *  error the model enumerated. */
export const HANDLER_ERRORS = {
  Error: new Error('upstream 503'),
  PermanentJobError: new PermanentJobError('place is gone'),
  SkipJobError: new SkipJobError('nothing to do'),
  SnoozeJobError: new SnoozeJobError(TIMING.backoffMs),
};

/** What a handler that fans out returns (`continueAfter`): one child, then wait for it. */
export const CHILDREN: readonly ChildJob[] = [{ queue: 'q', kind: 'child', payload: {}, maxAttempts: 1, key: 'c1', onFailure: 'cancel' }];

/** What a write that can never succeed fails with: the statement, not the connection. */
export const REFUSED_WRITE = Object.assign(new Error('index row size 2720 exceeds btree version 4 maximum 2704'), { code: '54000' });

/** The traversal's clock: read by the machine's guards and assigns through `ports.now`. */
let modelNow = 0;

function modelInput(config: JobModelConfig): JobMachineInput {
  const never = () => {
    throw new Error('the model records actions; it never runs them');
  };
  // The machine reads of its row only these (the handler, which would read the rest, never runs).
  const expiresAt = config.expiresAtMs === undefined ? null : new Date(config.expiresAtMs);
  const job = { id: '1', queue: 'q', kind: 'k', attempt: 1, maxAttempts: config.maxAttempts, leaseToken: 'model', expiresAt };
  return {
    job: job as ClaimedJob,
    ports: {
      runHandler: never, writeOutcome: never, renewLease: never, suspend: never, freeSlot: never, wakeAt: never,
      now: () => modelNow, backoffMs: () => TIMING.backoffMs,
    },
    policy: policyOf(config),
    hasHandler: config.hasHandler,
    waitForStart: config.waitForStart,
    leaseValidUntil: TIMING.leaseMs,
    expiresAtMs: expiresAt?.getTime() ?? null,
  };
}

/** A scope whose action executor runs nothing and applies what it sees to `world`. */
function recorder(world: World, scope: ActorScope<any, any>): ActorScope<any, any> {
  return {
    ...scope,
    actionExecutor: (action) => {
      if (recordTimerAction(world, action)) return;
      switch (action.type) {
        case 'wakeAt': {
          // The supervisor's timer: the later ask for an event replaces the earlier.
          const { event, at } = action.params as { event: WakeEvent; at: number };
          world.timers = world.timers.filter((t) => t.id !== event);
          if (at !== Infinity) world.timers.push({ id: event, event: { type: event }, dueAt: at });
          break;
        }
        case 'freeSlot':
          // Every ask of the job is dropped with its slot.
          world.timers = world.timers.filter((t) => t.id !== 'lease.beat' && t.id !== 'attempt.deadline');
          break;
        case 'startHandler':
          world.handlerRunning = true;
          world.handlerStartedAt = world.now;
          break;
        case 'renewLease':
          world.renewalSentAt = world.now;
          break;
        case 'writeOutcome':
          world.writeInFlight = true;
          break;
        case 'suspend':
          world.suspendInFlight = true;
          break;
      }
    },
  };
}

function snapshotOf(machine: JobSnapshot, world: World): ModelSnapshot {
  return { status: machine.status, output: undefined, error: undefined, machine, world };
}

/** The row leaves `running` (or is stolen): the history row the store must append. It is
 *  the model's own decision, never the machine's outcome: a machine that decided otherwise
 *  writes a row the replay then finds different. */
function recordWrite(snapshot: ModelSnapshot): void {
  const { machine, world } = snapshot;
  if (machine.status !== 'done' || machine.value === 'lost') return;
  if (!world.decided) throw new Error(`the machine ended ${JSON.stringify(machine.value)} with nothing decided`);
  if (world.decided === LAPSED) throw new Error(`the machine ended ${JSON.stringify(machine.value)}: it wrote after its lease lapsed`);
  world.history.push(['running', world.decided.to, 1, WORKER, world.decided.code]);
}

/** What a running attempt that finds its lease lapsed must do: write nothing (end `lost`). */
const LAPSED: Decided = { to: 'running', code: 'lease_lost' };

/**
 * What ends the attempt, by the README ("Queues and handlers", "The job machine", "Snooze",
 * "Cancel", "expiresAt", `stop`), for an event that reaches the job while it holds the
 * handler (`claimed` or `running`); undefined for one that decides nothing. A failure is
 * retried only while attempts are left and `expiresAt` has not come; the model runs
 * attempt 1.
 */
export function decide(config: JobModelConfig, now: number, event: ModelEvent): Decided | undefined {
  const final = config.maxAttempts <= 1 || (config.expiresAtMs !== undefined && now >= config.expiresAtMs);
  const failure = (code: string): Decided => ({ to: final ? 'dead' : 'retrying', code });
  switch (event.type) {
    case 'handler.resolved':
      return { to: 'completed', code: null, result: event.result };
    case 'handler.continue':
      // Children added (docs/workflows.md): the row waits for them, no attempt spent.
      return { to: 'waiting', code: null };
    case 'handler.late':
      // docs/job-machine.md: an answer after the deadline is the deadline's outcome.
      return failure('deadline_exceeded');
    case 'handler.rejected':
      if (event.error instanceof SkipJobError) return { to: 'skipped', code: 'skipped' };
      if (event.error instanceof SnoozeJobError) return { to: 'pending', code: 'snoozed' };
      if (event.error instanceof PermanentJobError) return { to: 'dead', code: 'permanent_error' };
      return failure('handler_error');
    case 'job.expire':
      return { to: 'dead', code: 'expired' };
    case 'job.cancel':
      return { to: 'cancelled', code: 'cancelled' };
    case 'job.abort':
      return { to: 'retrying', code: 'worker_shutdown' };
    case 'suspend.done':
      // docs/durable-jobs.md: the row sleeps until the signal or its timeout; a cancel
      // requested meanwhile ends it instead. A signal taken from the mailbox decides nothing.
      if (event.answer.answer === 'sleeping') return { to: 'sleeping', code: 'signal_wait' };
      if (event.answer.answer === 'cancelled') return { to: 'cancelled', code: 'cancelled' };
      return undefined;
    default:
      if (isDeadline(event)) return failure('deadline_exceeded');
      return undefined;
  }
}

/** The per-attempt deadline, sent by the supervisor's timer when the machine asked for it. */
function isDeadline(event: ModelEvent): boolean {
  return event.type === 'attempt.deadline';
}

/** An event a timer sends: the supervisor's (a beat or deadline the machine asked for, the
 *  job's expiry) or the machine's own (a write's retry). */
export function isTimerEvent(event: ModelEvent): boolean {
  return event.type === 'lease.beat' || event.type === 'attempt.deadline' || event.type === 'job.expire' || event.type.startsWith('xstate.after.');
}

/** What is decided before the handler could run: a job claimed past its `expiresAt` is not
 *  run; one whose kind has no handler is skipped when it would start. */
function decideAtStart(config: JobModelConfig, now: number, event: ModelEvent | null): Decided | undefined {
  if (config.expiresAtMs !== undefined && now >= config.expiresAtMs && event === null) return { to: 'dead', code: 'expired' };
  if (!config.hasHandler && (event === null ? !config.waitForStart : event.type === 'job.start')) return { to: 'skipped', code: 'unknown_kind' };
  return undefined;
}

function steal(world: World, maxAttempts: number): void {
  if (world.stolen) return;
  world.stolen = true;
  if (maxAttempts > 1) {
    world.history.push(['running', 'retrying', 1, WORKER, 'lease_expired'], ['retrying', 'running', 2, THIEF, null]);
  } else {
    world.history.push(['running', 'dead', 1, WORKER, 'lease_expired']);
  }
}

export function jobModel(config: JobModelConfig): ActorLogic<ModelSnapshot, ModelEvent, undefined> {
  return {
    getInitialSnapshot: (scope) => {
      const world: World = {
        now: config.answeredAfterMs ?? 0, timers: [], handlerRunning: false, handlerStartedAt: 0, busy: false, mayBeBusy: config.busy ?? false, renewalSentAt: null, writeInFlight: false,
        writeFailed: false, renewed: false, stolen: false, paused: false, writeRefused: false, decided: null,
        suspendInFlight: false, suspended: false, durable: config.durable ?? false, landed: null,
        history: [[null, 'pending', 0, null, null], ['pending', 'running', 1, WORKER, null]],
      };
      modelNow = world.now;
      world.decided = decideAtStart(config, world.now, null) ?? null;
      const machine = jobMachine.getInitialSnapshot(recorder(world, scope) as never, modelInput(config));
      // The supervisor sets the expiry timer only for a job not already past it.
      if (config.expiresAtMs !== undefined && config.expiresAtMs > world.now) {
        world.timers.push({ id: 'expiry', event: { type: 'job.expire' }, dueAt: config.expiresAtMs });
      }
      return snapshotOf(machine, world);
    },
    transition: (snapshot, event, scope) => {
      const world: World = { ...snapshot.world, timers: [...snapshot.world.timers], history: [...snapshot.world.history] };
      if (event.type === 'process.paused') {
        // Only the world changes: the machine hears nothing while paused. Just past the lease,
        // so that the store's reaper may take the row (it wants the expiry behind it).
        world.now = snapshot.machine.context.leaseValidUntil + 1;
        world.paused = true;
        return snapshotOf(snapshot.machine, world);
      }
      if (event.type === 'process.busy') {
        // As a pause, but while the handler runs: it holds the loop, no timer fires.
        const { context } = snapshot.machine;
        world.now = event.until === 'lease' ? context.leaseValidUntil + 1 : world.handlerStartedAt + context.policy.deadlineMs + 1;
        world.busy = true;
        return snapshotOf(snapshot.machine, world);
      }
      if (isTimerEvent(event)) {
        const timer = world.timers.find((t) => t.event.type === event.type)!;
        // A timer overdue after a pause fires at once on resume: time does not go back.
        world.now = Math.max(world.now, timer.dueAt);
        world.timers = world.timers.filter((t) => t !== timer);
      } else if (event.type === 'handler.resolved' || event.type === 'handler.rejected' || event.type === 'handler.continue' || event.type === 'handler.late') {
        world.handlerRunning = false;
      } else if (event.type === 'lease.renewed') {
        world.renewalSentAt = null;
        if (event.applied) world.renewed = true;
        else steal(world, config.maxAttempts);
      } else if (event.type === 'write.done' || event.type === 'write.failed') {
        world.writeInFlight = false;
        if (event.type === 'write.failed') world.writeFailed = true;
        if (event.type === 'write.failed' && isPermanentStoreError(event.error)) world.writeRefused = true;
        if (event.type === 'write.done' && !event.applied && world.landed === null) steal(world, config.maxAttempts);
      } else if (event.type === 'lease.renewFailed') {
        world.renewalSentAt = null;
      } else if (event.type === 'handler.suspend') {
        world.suspended = true;
      } else if (event.type === 'suspend.done' || event.type === 'suspend.failed') {
        world.suspendInFlight = false;
        if (event.type === 'suspend.done' && event.answer.answer === 'lost') steal(world, config.maxAttempts);
        // Answered after a cancel, shutdown or deadline took the actor on (the machine drops
        // the answer): the store has done what it answered all the same.
        const late = !snapshot.machine.matches({ running: 'suspending' });
        if (event.type === 'suspend.done' && late && (event.answer.answer === 'sleeping' || event.answer.answer === 'cancelled')) {
          world.landed = decide(config, world.now, event)!;
          world.history.push(['running', world.landed.to, 1, WORKER, world.landed.code]);
        }
      }
      // Decided while the job holds its handler, by the README's rules: what the machine
      // then writes is checked against it.
      const holding = snapshot.machine.matches('claimed') || snapshot.machine.matches('running');
      // docs/job-machine.md: whatever reaches a running attempt after its lease lapsed by its
      // own clock, nothing is written.
      if (snapshot.machine.matches('running') && world.decided === null && world.now >= snapshot.machine.context.leaseValidUntil) {
        world.decided = LAPSED;
      }
      if (holding && world.decided === null) {
        world.decided = (snapshot.machine.matches('claimed') ? decideAtStart(config, world.now, event) : undefined) ?? decide(config, world.now, event) ?? null;
      }
      modelNow = world.now;
      const next = snapshotOf(jobMachine.transition(snapshot.machine, event as JobMachineEvent, recorder(world, scope) as never), world);
      recordWrite(next);
      return next;
    },
    getPersistedSnapshot: (snapshot) => snapshot,
  };
}

/**
 * Every event the world can produce now, whether or not the machine takes a transition on
 * it: the supervisor's requests at any time, a handler's answer while it runs (also once the
 * actor stopped waiting for it: a late answer), a renewal's answer or its failure while one
 * is in flight and the job holds its lease, a write's answer while one is in flight. One the machine ignores changes nothing but
 * the world (a renewal that threw leaves none in flight); where the world does not change
 * either, the traversal drops it as a loop, and the replay sends those (IGNORED) itself.
 */
export function eventsFor(snapshot: ModelSnapshot): ModelEvent[] {
  const { machine, world } = snapshot;
  if (machine.status !== 'active') return [];
  const events: ModelEvent[] = [{ type: 'job.start' }, { type: 'job.cancel' }, { type: 'job.abort' }];
  if (world.handlerRunning && world.durable) {
    // The durable config's paths are about its wait: the handler answers only after it, and
    // only returns (the other answers are the other configs' paths).
    if (world.suspended && !world.suspendInFlight) events.push({ type: 'handler.resolved', result: { photos: 20 } });
  } else if (world.handlerRunning && machine.matches('running') && answersLate(snapshot)) {
    // Whatever it returns or throws, the answer comes as `handler.late`.
    events.push({ type: 'handler.late' });
  } else if (world.handlerRunning) {
    events.push({ type: 'handler.resolved', result: { photos: 20 } }, { type: 'handler.continue', children: CHILDREN });
    for (const error of Object.values(HANDLER_ERRORS)) events.push({ type: 'handler.rejected', error });
  }
  // A busy loop at the handler's start (CPU work before its first await), once: past the
  // deadline while the lease holds, or past the lease.
  if (world.mayBeBusy && !world.busy && world.handlerRunning && machine.matches({ running: 'working' }) && world.now === world.handlerStartedAt) {
    for (const until of BUSY_UNTIL) {
      const deadlineFirst = world.handlerStartedAt + machine.context.policy.deadlineMs < machine.context.leaseValidUntil;
      if (until === 'lease' || deadlineFirst) events.push({ type: 'process.busy', until });
    }
  }
  // A renewal's answer, or its failure, while the job holds its lease. One that comes during
  // a write is ignored (IGNORED, which the replay sends): enumerated, its applied form would
  // leave the row's lease longer than the actor's, which every later check would have to allow.
  if (world.renewalSentAt !== null && (machine.matches('claimed') || machine.matches('running'))) {
    events.push({ type: 'lease.renewed', applied: true, sentAt: world.renewalSentAt });
    events.push({ type: 'lease.renewed', applied: false, sentAt: world.renewalSentAt });
    events.push({ type: 'lease.renewFailed', error: new Error('ECONNRESET') });
  }
  // The wait is the handler's first call, made before any timer fires.
  if (world.durable && world.handlerRunning && !world.suspended && world.now === 0 && machine.matches({ running: 'working' })) {
    events.push({ type: 'handler.suspend', request: SIGNAL_WAIT });
  }
  if (world.suspendInFlight) {
    // A late `lost` (the actor already writing) is a row stolen behind a write: the write's
    // own refusal covers it.
    const late = !machine.matches({ running: 'suspending' });
    for (const answer of SUSPEND_ANSWERS) {
      if (late && answer === 'lost') continue;
      events.push({ type: 'suspend.done', answer: answer === 'received' ? { answer, payload: { ok: true } } : { answer } });
    }
    events.push({ type: 'suspend.failed', error: new Error('ECONNRESET') });
  }
  if (world.writeInFlight) {
    // A row that slept or ended under the actor refuses every write.
    if (world.landed === null) events.push({ type: 'write.done', applied: true });
    events.push({ type: 'write.done', applied: false });
    events.push({ type: 'write.failed', error: new Error('ECONNRESET') }, { type: 'write.failed', error: REFUSED_WRITE });
  }
  modelNow = world.now;
  // Time moves only to the next timer due; it fires whatever the guards say.
  const next = [...world.timers].sort((a, b) => a.dueAt - b.dueAt)[0];
  if (next) events.push(next.event);
  // A job waiting for a slot may be held across a pause (no renewal in flight: its answer
  // would then come a pause late, which the store's lease could not match). Not with an
  // expiry timer set: the replay catches up one overdue timer after a pause, not two.
  const expiring = world.timers.some((t) => t.event.type === 'job.expire');
  if (machine.matches('claimed') && !world.paused && !expiring && world.renewalSentAt === null && world.now < machine.context.leaseValidUntil) {
    events.push({ type: 'process.paused' });
  }
  return events;
}

/** By the model's own reckoning (docs/job-machine.md), the handler answers after its lease
 *  or its deadline. */
function answersLate({ machine, world }: ModelSnapshot): boolean {
  const { deadlineMs } = machine.context.policy;
  return world.now >= machine.context.leaseValidUntil || (deadlineMs > 0 && world.now - world.handlerStartedAt >= deadlineMs);
}

/**
 * What each state of the job must ignore, stated from the README apart from the machine (as
 * XState's TestModel states what holds in each state): the replay sends each of these in
 * every state a path passes through and checks that nothing changes.
 *
 * - Waiting for a slot (`claimed`): no handler runs and no write is in flight, so their
 *   answers mean nothing; a renewal that threw changes nothing (the lease holds until it
 *   lapses, by the actor's own clock).
 * - `running`: a second start, a write's answer (none is in flight), a renewal that threw.
 * - A write state: "left only when the store has answered": no request (start, cancel,
 *   shutdown, expiry), no late handler answer, no renewal answer changes it.
 */
const IGNORED_WHILE_WRITING: ModelEvent[] = [
  { type: 'job.start' }, { type: 'job.cancel' }, { type: 'job.abort' }, { type: 'job.expire' },
  // A wake asked for before the write, which the supervisor's timer sends all the same.
  { type: 'lease.beat' }, { type: 'attempt.deadline' },
  { type: 'handler.resolved', result: { late: true } }, { type: 'handler.rejected', error: HANDLER_ERRORS.PermanentJobError },
  { type: 'handler.late' },
  { type: 'lease.renewed', applied: true, sentAt: 0 }, { type: 'lease.renewed', applied: false, sentAt: 0 },
  { type: 'lease.renewFailed', error: new Error('ECONNRESET') },
];
const NO_WRITE_IN_FLIGHT: ModelEvent[] = [
  { type: 'write.done', applied: true }, { type: 'write.done', applied: false }, { type: 'write.failed', error: new Error('ECONNRESET') },
];

export const IGNORED = {
  claimed: [
    { type: 'handler.resolved', result: { photos: 20 } }, { type: 'handler.rejected', error: HANDLER_ERRORS.Error }, { type: 'handler.late' },
    ...NO_WRITE_IN_FLIGHT, { type: 'lease.renewFailed', error: new Error('ECONNRESET') },
    // No attempt runs yet, so it has no deadline.
    { type: 'attempt.deadline' },
  ],
  running: [{ type: 'job.start' }, ...NO_WRITE_IN_FLIGHT, { type: 'lease.renewFailed', error: new Error('ECONNRESET') }],
  completing: IGNORED_WHILE_WRITING,
  failing: IGNORED_WHILE_WRITING,
  snoozing: IGNORED_WHILE_WRITING,
  dying: IGNORED_WHILE_WRITING,
  skipping: IGNORED_WHILE_WRITING,
  cancelling: IGNORED_WHILE_WRITING,
  releasing: IGNORED_WHILE_WRITING,
} satisfies Record<string, ModelEvent[]> as Record<string, readonly JobMachineEvent[]>;

/**
 * The model's states, finite. `xstate/graph` keeps one snapshot per serialized state and
 * continues every path from it, so what a replay relies on must be in here. Time is kept
 * relative to now (timers, the lease, a renewal in flight): a job may wait in `claimed`,
 * renewing its lease, for as long as it likes.
 */
export function serializeModel(snapshot: ModelSnapshot): string {
  const { machine, world } = snapshot;
  const outcome = machine.context.outcome;
  const holdsLease = machine.matches('claimed') || machine.matches('running');
  // A write is retried only while the lease holds: the lease left matters in write states too.
  const active = machine.status === 'active';
  return JSON.stringify({
    value: machine.value,
    status: machine.status,
    outcome: outcome && [outcome.state, 'error' in outcome ? outcome.error.code : null],
    stolen: world.stolen,
    paused: world.paused,
    busy: world.busy,
    refused: world.writeRefused,
    write: world.writeInFlight,
    suspend: [world.suspendInFlight, world.suspended, world.landed?.to ?? null],
    loops: [world.writeFailed, world.renewed],
    timers: world.timers.map((t) => [t.event.type, t.dueAt - world.now]).sort(),
    ...(active && { lease: machine.context.leaseValidUntil - world.now }),
    ...(holdsLease && {
      handler: world.handlerRunning && world.handlerStartedAt - world.now,
      renewal: world.renewalSentAt === null ? null : world.renewalSentAt - world.now,
    }),
  });
}

/** Events by what tells them apart: the error's class, whether the store applied. */
export function serializeEvent(event: ModelEvent): string {
  switch (event.type) {
    case 'handler.rejected':
      return `handler.rejected(${(event.error as Error).name})`;
    case 'write.failed':
      return `write.failed(${isPermanentStoreError(event.error) ? 'refused' : 'unreachable'})`;
    case 'lease.renewed':
    case 'write.done':
      return `${event.type}(${event.applied ? 'applied' : 'refused'})`;
    case 'lease.renewFailed':
      return 'lease.renewFailed(unreachable)';
    case 'suspend.done':
      return `suspend.done(${event.answer.answer})`;
    case 'suspend.failed':
      return 'suspend.failed(unreachable)';
    case 'process.busy':
      return `process.busy(past the ${event.until})`;
    default:
      return event.type;
  }
}

export type JobPath = StatePath<ModelSnapshot, ModelEvent>;

/** Every simple path from the claim to a final state of the machine. */
export function jobPaths(config: JobModelConfig): JobPath[] {
  return getSimplePaths(jobModel(config), {
    events: eventsFor,
    serializeState: serializeModel,
    serializeEvent: serializeEvent as never,
    toState: (snapshot) => snapshot.machine.status === 'done',
    limit: 50_000,
  });
}

/** A path in words, for test names and failure messages. */
export function describePath(path: JobPath): string {
  return path.steps.slice(1).map((s) => serializeEvent(s.event)).join(' → ');
}

/** The fewest paths that still take every edge of the model: every event from every state.
 *  A path with no event (the actor final at once) takes no edge but its own transitions: kept. */
export function jobCoveringPaths(paths: readonly JobPath[]): JobPath[] {
  const atOnce = paths.filter((path) => path.steps.length === 1);
  return [...atOnce, ...coveringPaths(paths, (state: ModelSnapshot, event: ModelEvent) => `${serializeModel(state)} ${serializeEvent(event)}`)];
}
