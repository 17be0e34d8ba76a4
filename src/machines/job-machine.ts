/**
 * The job machine: one actor per claimed attempt.
 *
 *   claimed ─start─▶ running ─resolved─▶ completing ─▶ completed
 *                      ├─ threw, attempts left ──────▶ failing ──▶ retrying
 *                      ├─ SnoozeJobError ─▶ snoozing ─▶ snoozed (the row waits again, no attempt spent)
 *                      ├─ job.sleep / job.waitForSignal ─▶ running.suspending ─▶ sleeping (the row sleeps:
 *                      │    no lease, no slot, no attempt spent) or back to running.working (a signal
 *                      │    was waiting in the mailbox, the time had passed)
 *                      ├─ returned continueAfter(children) ─▶ suspending ─▶ waiting (children added; the row
 *                      │    waits for them, no lease, no slot; runs again, no attempt spent, when the last ends)
 *                      ├─ spent / permanent / deadline on last attempt ─▶ dying ─▶ dead
 *                      ├─ past expiresAt (the deadline across attempts) ─▶ dying ─▶ dead
 *                      ├─ unknown kind / SkipJobError ─▶ skipping ─▶ skipped
 *                      ├─ cancel ─▶ cancelling ─▶ cancelled
 *                      ├─ shutdown after grace ─▶ releasing ─▶ retrying (no attempt spent)
 *                      ├─ answered late (handler.late) ─▶ the deadline's outcome, or lost past the lease
 *                      └─ lease lost ─▶ lost (writes nothing)
 *
 * Cost matters (see NOTES.md): no invoked children. The handler, lease renewals and writes
 * are plain promises started by actions that send their answer back as events, and the
 * writes go through the supervisor's batched writer. No delayed events of XState's either for
 * the lease and the deadline: the actor asks the supervisor's one timer to wake it
 * (`ports.wakeAt`), which sends `lease.beat` and `attempt.deadline` (XState's scheduler keys
 * every timer by a string unique to the actor, and V8 makes a hidden class of each: about
 * half of a job actor's CPU, bench/optimisations.md row 23). A write is its own state, left only
 * when the store has answered, so a deadline cannot interrupt it and the actor is final
 * only once the row says so. A write the store rejected for its lease ends in `lost`.
 *
 * Node cannot interrupt a handler that keeps the event loop busy (CPU work before its first
 * `await`, or between two), and the deadline and lease timers fire only after it yields: its
 * answer, a microtask, would come first. So the answer is judged by the ports' clock when it
 * comes (`answeredLate`): one after the deadline or the lease comes as `handler.late`, and a
 * request or timer that finds the lease lapsed ends the attempt `lost` without writing.
 */
import { and, assign, setup } from 'xstate';
import type { ChildJob, JobOutcome, Lease, SuspendAnswer, SuspendRequest } from '../adapters/store.js';
import { isPermanentStoreError } from '../adapters/store-errors.js';
import { InvalidResultError, JobAbortedError, JobDeadlineExceeded, JobExpired, type SnoozeJobError } from '../errors.js';
import type { ClaimedJob, JobErrorInfo } from '../types.js';
import { toJsonData } from '../validation.js';
import { ContinueAfter } from './continue-after.js';
import { snoozeDelayMs, toErrorInfo, verdictOf } from './error-info.js';
import { AttemptHandle, lateBecause, type Suspension } from './attempt-handle.js';
import { sendIfActive } from './send-if-active.js';

/** What the machine asks of the world; the supervisor provides one per queue, tests fake it. */
export interface JobPorts {
  /** Starts the handler; `abort.signal` is its AbortSignal, made on first use. A plain value
   *  or a throw (a synchronous handler) counts as its promise would. */
  runHandler(job: ClaimedJob, attempt: AttemptHandle): unknown;
  /** Sends `{ type: event }` to `actor` once `now()` reaches `at`; asked again for the same
   *  event, the later ask replaces the earlier; `at` Infinity drops it. Every ask of a job is
   *  dropped once its slot is free (`freeSlot`). */
  wakeAt(actor: WakeTarget, event: WakeEvent, at: number): void;
  writeOutcome(outcome: JobOutcome): Promise<boolean>;
  renewLease(lease: Lease): Promise<boolean>;
  /** A sleep or signal wait, fenced by the lease (docs/durable-jobs.md). */
  suspend(request: SuspendRequest): Promise<SuspendAnswer>;
  /** The job's handler slot is free: called when the actor leaves `claimed` or `running` for
   *  a write or `lost`. The write that follows holds no concurrency slot, and no wake the
   *  actor asked for comes any more. */
  freeSlot(job: ClaimedJob): void;
  now(): number;
  /** Delay before the next attempt after `attempt` failed. */
  backoffMs(attempt: number): number;
}

/** The events the supervisor's timer sends when an actor asked for them (`wakeAt`). */
export type WakeEvent = 'lease.beat' | 'attempt.deadline';

/** What `wakeAt` sends to: the job actor itself. */
export interface WakeTarget {
  send(event: { type: WakeEvent }): void;
}

/** A queue's timing, shared by all of its job actors. */
export interface JobPolicy {
  leaseMs: number;
  /** Renewal period; lease/3 by default (the supervisor decides). */
  heartbeatMs: number;
  /** Per-attempt deadline; 0 = none. */
  deadlineMs: number;
  /** Wait before a write that threw (store unreachable) is tried again. */
  writeRetryMs: number;
}

export interface JobMachineInput {
  job: ClaimedJob;
  ports: JobPorts;
  policy: JobPolicy;
  /** false when no handler is registered for the job's kind: it is skipped. */
  hasHandler: boolean;
  /** true when the job waits in `claimed` for `job.start` (a free slot, or its gate);
   *  false to start at once. */
  waitForStart: boolean;
  /** On the ports' clock, the time until which the claim's lease surely holds (sent-at +
   *  lease). */
  leaseValidUntil: number;
  /** On the ports' clock, when the job's `expiresAt` (the store's time) comes; null: none. The
   *  supervisor converts it through the claim, so a worker's clock set wrong cannot move it. */
  expiresAtMs: number | null;
}

/** The machine's final states. All but `lost` and `snoozed` (the row is `pending` again) are
 *  also row states (`waiting` may be `pending` at once, when no child is left to wait for). */
export type JobActorFinalState = 'completed' | 'retrying' | 'snoozed' | 'waiting' | 'sleeping' | 'dead' | 'skipped' | 'cancelled' | 'lost';

/** Kept small on purpose: every assign copies it. What never changes sits in `job`,
 *  `ports` and `policy`, shared or allocated once. */
export interface JobMachineContext extends JobMachineInput {
  abort: AttemptHandle;
  /** When the next lease renewal is due, on the ports' clock: a heartbeat after the claim was
   *  sent (when its lease began), then after each renewal (a held job that starts keeps its
   *  cadence). */
  nextBeatAt: number;
  outcome: JobOutcome | null;
  error: JobErrorInfo | null;
}

export type JobMachineEvent =
  | { type: 'job.start' }
  /** The next lease renewal is due, or the lease's end came first (asked with `wakeAt`). */
  | { type: 'lease.beat' }
  /** The attempt's deadline came (asked with `wakeAt` when the attempt started). */
  | { type: 'attempt.deadline' }
  | { type: 'handler.resolved'; result: unknown }
  /** The handler returned `continueAfter(children)` (src/flows). */
  | { type: 'handler.continue'; children: readonly ChildJob[] }
  | { type: 'handler.rejected'; error: unknown }
  /** The handler answered (or asked to sleep) after its deadline or its lease, by the ports'
   *  clock: it kept the event loop busy past them. Its answer is dropped. */
  | { type: 'handler.late' }
  | { type: 'lease.renewed'; applied: boolean; sentAt: number }
  | { type: 'lease.renewFailed'; error: unknown }
  | { type: 'write.done'; applied: boolean }
  | { type: 'write.failed'; error: unknown }
  | { type: 'job.cancel' }
  | { type: 'job.abort' }
  /** The job's `expiresAt` came: sent by the supervisor's timer, set only for jobs that have one. */
  | { type: 'job.expire' }
  /** The handler sleeps or waits for a signal (through its AttemptHandle). */
  | { type: 'handler.suspend'; request: Suspension }
  | { type: 'suspend.done'; answer: SuspendAnswer }
  | { type: 'suspend.failed'; error: unknown };

/** Outcomes name the lease's two fields rather than spread `lease(job)` into a literal: on
 *  Node 20 a spread followed by more properties takes V8's slow path, about 1-4 µs an object
 *  against 0.04 on Node 22 (bench/optimisations.md row 27), and a job makes one or two. */
function lease(job: ClaimedJob): Lease {
  return { id: job.id, leaseToken: job.leaseToken };
}

/** Another attempt may follow this one: attempts are left and the deadline across attempts
 *  has not come. */
function mayRunAgain(context: JobMachineContext): boolean {
  return context.job.attempt < context.job.maxAttempts && !expired(context);
}

function expired(context: JobMachineContext): boolean {
  return context.expiresAtMs !== null && context.ports.now() >= context.expiresAtMs;
}

function retryOutcome(context: JobMachineContext, error: JobErrorInfo): JobOutcome {
  // A delay, not a time: the store adds it to its own now.
  return { id: context.job.id, leaseToken: context.job.leaseToken, state: 'retrying', error, delayMs: context.ports.backoffMs(context.job.attempt) };
}

/** The stack of an error made by the machine's own timer says nothing: keep it out. */
function deadlineError(deadlineMs: number): JobErrorInfo {
  const { code, message, name } = new JobDeadlineExceeded(deadlineMs);
  return { code, message, name };
}

function expiredError(expiresAt: Date): JobErrorInfo {
  const { code, message, name } = new JobExpired(expiresAt);
  return { code, message, name };
}

/** The handler, started at `startedAt` on the ports' clock, answers now: after its lease (the
 *  timer that would have given it up had no turn to fire) or after its deadline. */
export function answeredLate(context: Pick<JobMachineContext, 'ports' | 'policy' | 'leaseValidUntil'>, startedAt: number): boolean {
  return lateBecause(context, startedAt) !== undefined;
}

/** A write state: send the outcome, wait for the store's answer, retry the write if it threw.
 *  A write is retried only while it could still apply: once the lease has lapsed by our clock
 *  the fence refuses it anyway, and a write the store refuses for good (the statement itself
 *  fails, not the connection) is never retried. Either ends the actor `lost`; the row stays
 *  `running` until the reaper gives it back. */
function writeState(target: Exclude<JobActorFinalState, 'lost'>) {
  return {
    entry: 'writeOutcome' as const,
    on: {
      'write.done': [{ guard: 'writeApplied' as const, target }, { target: 'lost' }],
      'write.failed': [{ guard: 'writeRefused' as const, target: 'lost', actions: 'setWriteRefused' as const }, { target: `.retryWait` }],
    },
    initial: 'waiting' as const,
    states: {
      waiting: {},
      retryWait: {
        // The only delayed event of XState's left: a write that threw is rare.
        after: {
          writeRetry: [
            { guard: 'leaseLapsed' as const, target: '#job.lost', actions: 'setWriteLost' as const },
            { target: 'waiting', reenter: true, actions: 'writeOutcome' as const },
          ],
        },
      },
    },
  };
}

export const jobMachine = setup({
  types: {
    context: {} as JobMachineContext,
    events: {} as JobMachineEvent,
    input: {} as JobMachineInput,
  },
  delays: {
    writeRetry: ({ context }) => context.policy.writeRetryMs,
  },
  guards: {
    hasHandler: ({ context }) => context.hasHandler,
    startsAtOnce: ({ context }) => !context.waitForStart,
    hasDeadline: ({ context }) => context.policy.deadlineMs > 0,
    writeApplied: ({ event }) => event.type === 'write.done' && event.applied,
    renewRejected: ({ event }) => event.type === 'lease.renewed' && !event.applied,
    leaseLapsed: ({ context }) => context.ports.now() >= context.leaseValidUntil,
    beatDue: ({ context }) => context.ports.now() >= context.nextBeatAt,
    isPermanent: ({ event }) => event.type === 'handler.rejected' && verdictOf(event.error) === 'permanent',
    isSkip: ({ event }) => event.type === 'handler.rejected' && verdictOf(event.error) === 'skip',
    mayRunAgain: ({ context }) => mayRunAgain(context),
    expired: ({ context }) => expired(context),
    isSnooze: ({ event }) => event.type === 'handler.rejected' && verdictOf(event.error) === 'snooze',
    writeRefused: ({ event }) => event.type === 'write.failed' && isPermanentStoreError(event.error),
    suspendAnswered: ({ event }, answer: SuspendAnswer['answer']) => event.type === 'suspend.done' && event.answer.answer === answer,
  },
  actions: {
    startHandler: ({ context, self }) => {
      const attempt = context.abort;
      attempt.bind(self, context.ports.now());
      let settled: Promise<unknown>;
      try {
        // A synchronous handler's value or throw settles as its async form would; so does a
        // thenable, and one whose `then` cannot even be read.
        settled = Promise.resolve(context.ports.runHandler(context.job, context.abort));
      } catch (error) {
        settled = Promise.reject(error);
      }
      settled.then(
        (result) => {
          if (attempt.lateBecause()) return sendIfActive(self, { type: 'handler.late' });
          if (result instanceof ContinueAfter) return sendIfActive(self, { type: 'handler.continue', children: result.children });
          // Read once, now: a result the store cannot hold, or one changed after it was
          // returned, must not reach the write (and every write batched with it).
          const data = toJsonData(result, 'result');
          sendIfActive(
            self,
            'issue' in data
              ? { type: 'handler.rejected', error: new InvalidResultError(data.issue) }
              : { type: 'handler.resolved', result: data.value },
          );
        },
        (error: unknown) => sendIfActive(self, attempt.lateBecause() ? { type: 'handler.late' } : { type: 'handler.rejected', error }),
      );
    },
    // After the set… action that says why: the signal's reason carries the same code.
    abortHandler: ({ context }) => context.abort.abort(new JobAbortedError(context.error!.code, context.error!.message)),
    scheduleBeat: assign({ nextBeatAt: ({ context }) => context.ports.now() + context.policy.heartbeatMs }),
    // The supervisor's timer wakes the actor (params, so that a model reads what was asked).
    wakeAt: ({ context, self }, params: { event: WakeEvent; at: number }) => context.ports.wakeAt(self, params.event, params.at),
    freeSlot: ({ context }) => context.ports.freeSlot(context.job),
    renewLease: ({ context, self }) => {
      const sentAt = context.ports.now();
      context.ports.renewLease(lease(context.job)).then(
        (applied) => sendIfActive(self, { type: 'lease.renewed', applied, sentAt }),
        (error: unknown) => sendIfActive(self, { type: 'lease.renewFailed', error }),
      );
    },
    extendLease: assign({
      leaseValidUntil: ({ context, event }) =>
        event.type === 'lease.renewed' ? event.sentAt + context.policy.leaseMs : context.leaseValidUntil,
    }),
    suspend: ({ context, event, self }) => {
      if (event.type !== 'handler.suspend') return;
      context.ports.suspend({ id: context.job.id, leaseToken: context.job.leaseToken, ...event.request } as SuspendRequest).then(
        (answer) => sendIfActive(self, { type: 'suspend.done', answer }),
        (error: unknown) => sendIfActive(self, { type: 'suspend.failed', error }),
      );
    },
    answerHandler: ({ context, event }) => {
      if (event.type === 'suspend.done') context.abort.answer(event.answer);
      else if (event.type === 'suspend.failed') context.abort.fail(event.error);
    },
    dropSuspend: ({ context }) => context.abort.drop(),
    setSlept: assign({ error: () => ({ code: 'sleeping', message: 'the job sleeps until it is due again or its signal comes' }) }),
    writeOutcome: ({ context, self }) => {
      if (!context.outcome) throw new Error('writeOutcome without an outcome');
      context.ports.writeOutcome(context.outcome).then(
        (applied) => sendIfActive(self, { type: 'write.done', applied }),
        (error: unknown) => sendIfActive(self, { type: 'write.failed', error }),
      );
    },
    setCompleted: assign({
      outcome: ({ context, event }) => ({
        id: context.job.id,
        leaseToken: context.job.leaseToken,
        state: 'completed' as const,
        result: event.type === 'handler.resolved' ? (event.result ?? null) : null,
      }),
    }),
    setWaiting: assign({
      outcome: ({ context, event }) => ({
        id: context.job.id,
        leaseToken: context.job.leaseToken,
        state: 'waiting' as const,
        children: event.type === 'handler.continue' ? event.children : [],
      }),
    }),
    setRetry: assign(({ context, event }) => {
      const error = toErrorInfo(event.type === 'handler.rejected' ? event.error : event, 'handler_error');
      return { error, outcome: retryOutcome(context, error) };
    }),
    setDead: assign(({ context, event }) => {
      const error = toErrorInfo(event.type === 'handler.rejected' ? event.error : event, 'handler_error');
      return { error, outcome: { id: context.job.id, leaseToken: context.job.leaseToken, state: 'dead' as const, error } };
    }),
    setSkipped: assign(({ context, event }) => {
      const error: JobErrorInfo =
        event.type === 'handler.rejected'
          ? toErrorInfo(event.error, 'skipped')
          : { code: 'unknown_kind', message: `no handler for kind "${context.job.kind}" in queue "${context.job.queue}"` };
      return { error, outcome: { id: context.job.id, leaseToken: context.job.leaseToken, state: 'skipped' as const, error } };
    }),
    setDeadlineRetry: assign(({ context }) => {
      const error = deadlineError(context.policy.deadlineMs);
      return { error, outcome: retryOutcome(context, error) };
    }),
    setDeadlineDead: assign(({ context }) => {
      const error = deadlineError(context.policy.deadlineMs);
      return { error, outcome: { id: context.job.id, leaseToken: context.job.leaseToken, state: 'dead' as const, error } };
    }),
    setSnoozed: assign(({ context, event }) => {
      // The isSnooze guard read the delay already.
      const delayMs = snoozeDelayMs((event as { error: SnoozeJobError }).error)!;
      // No stack: a snooze is not a failure.
      const error: JobErrorInfo = { code: 'snoozed', message: `snoozed for ${delayMs} ms`, name: 'SnoozeJobError' };
      return { error, outcome: { id: context.job.id, leaseToken: context.job.leaseToken, state: 'snoozed' as const, error, delayMs } };
    }),
    setExpired: assign(({ context }) => {
      const error = expiredError(context.job.expiresAt!);
      return { error, outcome: { id: context.job.id, leaseToken: context.job.leaseToken, state: 'dead' as const, error } };
    }),
    setCancelled: assign(({ context }) => {
      const error: JobErrorInfo = { code: 'cancelled', message: 'cancelled while running' };
      return { error, outcome: { id: context.job.id, leaseToken: context.job.leaseToken, state: 'cancelled' as const, error } };
    }),
    setReleased: assign(({ context }) => {
      const error: JobErrorInfo = { code: 'worker_shutdown', message: 'the worker stopped before the attempt finished' };
      // Written as `released`: the row is retrying, with one more attempt allowed.
      return { error, outcome: { id: context.job.id, leaseToken: context.job.leaseToken, state: 'released' as const, error, delayMs: 0 } };
    }),
    setLost: assign({
      error: ({ context }) => ({
        code: 'lease_lost',
        message: `job ${context.job.id} attempt ${context.job.attempt}: another worker or the reaper holds the row now`,
      }),
    }),
    setLapsed: assign({
      error: ({ context }) => ({
        code: 'lease_lost',
        message: `job ${context.job.id} attempt ${context.job.attempt}: its lease lapsed while the handler kept the event loop busy; nothing is written, the reaper gives the row back`,
      }),
    }),
    setWriteLost: assign({
      error: ({ context }) => ({
        code: 'lease_lost',
        message: `job ${context.job.id} attempt ${context.job.attempt}: its outcome could not be written before its lease ended; the reaper gives the row back`,
      }),
    }),
    setWriteRefused: assign({
      error: ({ context, event }) => ({
        ...toErrorInfo(event.type === 'write.failed' ? event.error : event, 'write_refused'),
        code: 'write_refused',
        message: `job ${context.job.id} attempt ${context.job.attempt}: the store refused its outcome for good; the reaper gives the row back when its lease ends`,
      }),
    }),
  },
}).createMachine({
  id: 'job',
  // Each field named, not `...input`: see `lease` above (this one spread cost 3.9 µs a job).
  context: ({ input }) => ({
    job: input.job,
    ports: input.ports,
    policy: input.policy,
    hasHandler: input.hasHandler,
    waitForStart: input.waitForStart,
    leaseValidUntil: input.leaseValidUntil,
    expiresAtMs: input.expiresAtMs,
    abort: new AttemptHandle(),
    // Counted from the lease's start, not the claim's answer: a claim answered late (slower
    // than lease − heartbeat) renews at once rather than after its lease has lapsed.
    nextBeatAt: input.leaseValidUntil - input.policy.leaseMs + input.policy.heartbeatMs,
    outcome: null,
    error: null,
  }),
  initial: 'claimed',
  states: {
    claimed: {
      // Ungated jobs start in the same step as the actor: one event less per job.
      always: [
        // A job claimed past its expiresAt is not run (the reaper had not reached it yet).
        { guard: 'expired', target: 'dying', actions: ['freeSlot', 'setExpired'] },
        // Our clock says the lease lapsed (paused past it, or the claim answered late):
        // another worker may run the job now. Never start it.
        { guard: and(['startsAtOnce', 'leaseLapsed']), target: 'lost', actions: ['freeSlot', 'setLost'] },
        { guard: and(['startsAtOnce', 'hasHandler']), target: 'running' },
        { guard: 'startsAtOnce', target: 'skipping', actions: ['freeSlot', 'setSkipped'] },
      ],
      // A job claimed ahead of a free slot keeps its lease while it waits: renewed every
      // heartbeat.
      entry: { type: 'wakeAt', params: ({ context }) => ({ event: 'lease.beat', at: context.nextBeatAt }) },
      on: {
        'lease.beat': [
          { guard: 'leaseLapsed', target: 'lost', actions: ['freeSlot', 'setLost'] },
          { target: 'claimed', reenter: true, actions: ['renewLease', 'scheduleBeat'] },
        ],
        'job.start': [
          { guard: 'leaseLapsed', target: 'lost', actions: ['freeSlot', 'setLost'] },
          { guard: 'hasHandler', target: 'running' },
          { target: 'skipping', actions: ['freeSlot', 'setSkipped'] },
        ],
        'job.cancel': { target: 'cancelling', actions: ['freeSlot', 'setCancelled'] },
        'job.abort': { target: 'releasing', actions: ['freeSlot', 'setReleased'] },
        'job.expire': { target: 'dying', actions: ['freeSlot', 'setExpired'] },
        'lease.renewed': [
          { guard: 'renewRejected', target: 'lost', actions: ['freeSlot', 'setLost'] },
          { actions: 'extendLease' },
        ],
      },
    },
    running: {
      entry: [
        'startHandler',
        { type: 'wakeAt', params: ({ context }) => ({ event: 'attempt.deadline', at: context.policy.deadlineMs > 0 ? context.ports.now() + context.policy.deadlineMs : Infinity }) },
      ],
      exit: ['freeSlot', 'dropSuspend'],
      initial: 'working',
      states: {
        // Re-entering `working` restarts only its own timer, not the deadline on `running`.
        working: {
          // The next renewal, or the lease's end if that comes first: a lease that lapses
          // between two heartbeats (renewals failing, a heartbeat that does not divide the
          // lease) is given up when it lapses, not at the next heartbeat.
          entry: { type: 'wakeAt', params: ({ context }) => ({ event: 'lease.beat', at: Math.min(context.nextBeatAt, context.leaseValidUntil) }) },
          on: {
            'lease.beat': [
              { guard: 'leaseLapsed', target: '#job.lost', actions: ['setLost', 'abortHandler'] },
              { guard: 'beatDue', target: 'working', reenter: true, actions: ['renewLease', 'scheduleBeat'] },
              // Woken at the lease's old end, which a renewal has pushed on since.
              { target: 'working', reenter: true },
            ],
            'handler.suspend': { target: 'suspending', actions: 'suspend' },
          },
        },
        // The handler sleeps or waits for a signal: the store's answer decides. The lease is
        // not renewed meanwhile (one statement); the deadline still holds, and a write that
        // it forces is fenced like any other (a sleep that landed first makes it `lost`).
        suspending: {
          entry: { type: 'wakeAt', params: { event: 'lease.beat', at: Infinity } },
          on: {
            'suspend.done': [
              { guard: { type: 'suspendAnswered', params: 'sleeping' }, target: '#job.sleeping', actions: ['setSlept', 'abortHandler'] },
              { guard: { type: 'suspendAnswered', params: 'cancelled' }, target: '#job.cancelled', actions: ['setCancelled', 'abortHandler'] },
              { guard: { type: 'suspendAnswered', params: 'lost' }, target: '#job.lost', actions: ['setLost', 'abortHandler'] },
              { target: 'working', actions: 'answerHandler' },
            ],
            'suspend.failed': { target: 'working', actions: 'answerHandler' },
          },
        },
      },
      on: {
        'attempt.deadline': [
          // Overdue after a busy event loop, it may come before the lease's own beat.
          { guard: and(['hasDeadline', 'leaseLapsed']), target: 'lost', actions: ['setLapsed', 'abortHandler'] },
          { guard: and(['hasDeadline', 'mayRunAgain']), target: 'failing', actions: ['setDeadlineRetry', 'abortHandler'] },
          { guard: 'hasDeadline', target: 'dying', actions: ['setDeadlineDead', 'abortHandler'] },
        ],
        'handler.resolved': { target: 'completing', actions: 'setCompleted' },
        'handler.continue': { target: 'suspending', actions: 'setWaiting' },
        // The sender judged it late (answeredLate): past the lease, nothing may be written;
        // else the deadline came first, and decides as its timer would have.
        'handler.late': [
          { guard: 'leaseLapsed', target: 'lost', actions: ['setLapsed', 'abortHandler'] },
          { guard: 'mayRunAgain', target: 'failing', actions: ['setDeadlineRetry', 'abortHandler'] },
          { target: 'dying', actions: ['setDeadlineDead', 'abortHandler'] },
        ],
        'handler.rejected': [
          { guard: 'isSkip', target: 'skipping', actions: 'setSkipped' },
          // A snooze past expiresAt waits all the same: the reaper or the next claim ends it.
          { guard: 'isSnooze', target: 'snoozing', actions: 'setSnoozed' },
          { guard: 'isPermanent', target: 'dying', actions: 'setDead' },
          // Past expiresAt a failure is final, with its own error, whatever attempts remain.
          { guard: 'mayRunAgain', target: 'failing', actions: 'setRetry' },
          { target: 'dying', actions: 'setDead' },
        ],
        'lease.renewed': [
          { guard: 'renewRejected', target: 'lost', actions: ['setLost', 'abortHandler'] },
          { actions: 'extendLease' },
        ],
        // A request handled before the lease's overdue timer (the loop was busy) writes nothing.
        'job.cancel': [
          { guard: 'leaseLapsed', target: 'lost', actions: ['setLapsed', 'abortHandler'] },
          { target: 'cancelling', actions: ['setCancelled', 'abortHandler'] },
        ],
        'job.abort': [
          { guard: 'leaseLapsed', target: 'lost', actions: ['setLapsed', 'abortHandler'] },
          { target: 'releasing', actions: ['setReleased', 'abortHandler'] },
        ],
        'job.expire': { target: 'dying', actions: ['setExpired', 'abortHandler'] },
      },
    },
    completing: writeState('completed'),
    failing: writeState('retrying'),
    snoozing: writeState('snoozed'),
    suspending: writeState('waiting'),
    dying: writeState('dead'),
    skipping: writeState('skipped'),
    cancelling: writeState('cancelled'),
    releasing: writeState('retrying'),
    completed: { type: 'final' },
    retrying: { type: 'final' },
    snoozed: { type: 'final' },
    waiting: { type: 'final' },
    sleeping: { type: 'final' },
    dead: { type: 'final' },
    skipped: { type: 'final' },
    cancelled: { type: 'final' },
    lost: { type: 'final' },
  },
});
