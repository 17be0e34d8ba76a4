/**
 * The supervisor's own machine: when to claim, when to reap, how to stop.
 *
 *   idle ─start─▶ running { claimer: claiming ⇄ waiting, backingOff │ reaper: reaping ⇄ sleeping }
 *     │                └─stop─▶ stopping { draining ─grace─▶ aborting ─storeWait─▶ } ─▶ stopped
 *     └─drain─▶ draining { reaping → claiming ⇄ waitingForJobs } ─▶ idle
 *
 * When: a claim is made whenever the planner wants one (some queue has room and may have
 * work: src/supervisor/claim-planner.ts decides which queues and how many) and none is in
 * flight, so a slot freed while its queue has due jobs is filled in the next claim round, not
 * at the next poll. Job actors and the store only tell (events: slots freed, a wake-up for a
 * queue, the store back); they never call into the decision. A poll or a failed claim's
 * backoff makes every queue worth asking again. Store calls are started by an entry action
 * and answer the machine with an event of their own (`claim.done` / `claim.error`, `reap.done`
 * / `reap.error`): one per claim round or reaper pass, never per job. Not invoked promise
 * actors: spawning an actor per call cost an idle worker about 0.13 ms between hearing an
 * enqueue and sending its claim (bench/optimisations.md). A state that starts a call is left
 * only by its answer or by `supervisor.stop`, so an answer is never taken for another call's;
 * one that comes after the stop finds no transition, or a stopped actor, and is dropped.
 *
 * The poll's timer is also the wake-up for jobs that become due later (a sleep's end, a
 * backoff): waiting lasts until the poll or until the first such job the runtime knows of is
 * due, whichever is sooner (`msUntilClaim`), so one timer serves them all. A slot freed
 * starts the wait again (to the same poll deadline): a job of this process that went to sleep
 * frees its slot, and the wait then counts to its wake-up.
 *
 * Stopping waits for every job and a claim on its way; past the grace period, for the store's
 * answers (the releases written, the claim) only as long as `storeWaitMs`: a store that never
 * answers must not hold the process past its shutdown (`giveUp` leaves those jobs' rows to the
 * reaper).
 */
import { and, assign, not, setup } from 'xstate';
import { sendIfActive } from '../machines/send-if-active.js';
import { promiseOf } from './promise-of.js';

export interface ClaimRound {
  claimed: number;
}

export interface SupervisorRuntime {
  /** Some queue could take a job now, work or not (drain). */
  hasFreeSlots(): boolean;
  /** Some queue has room and may have due jobs: the planner's call. */
  wantsClaim(): boolean;
  /** Due jobs may be waiting in this queue, or in every queue when none is named. */
  noteWork(queue?: string): void;
  /** Claims what the planner asks for and spawns a job actor for each. */
  claim(): Promise<ClaimRound>;
  reap(): Promise<number>;
  /** How long to wait after a claim round before the next: the poll interval's rest, or less
   *  when a job is known to become due sooner. */
  msUntilClaim(pollIntervalMs: number): number;
  /** An attempt ended (its outcome written) since the last claim was sent: what it wrote may
   *  have made a job due (a flow's dependent, a retry due at once) that the claim read too
   *  early to see. */
  endedSinceClaim(): boolean;
  /** Job actors not yet final, plus a claim still in flight; once stopping, not counting the
   *  jobs whose handler called stop() (they wait for the stop: the runtime ends them after). */
  busy(): boolean;
  abortAll(): void;
  /** The store has not answered in `storeWaitMs` after the grace period: stop without it. */
  giveUp(): void;
  /** Stopping: jobs claimed ahead and not started are given back, and none starts. */
  releaseHeld(): void;
  claimFailed(error: unknown, failures: number): void;
  reapFailed(error: unknown): void;
  drained(): void;
  stopped(): void;
}

export interface SupervisorMachineInput {
  runtime: SupervisorRuntime;
  pollIntervalMs: number;
  reaperIntervalMs: number;
  /** First wait after a failed claim; doubles per failure up to maxErrorBackoffMs. */
  errorBackoffMs: number;
  maxErrorBackoffMs: number;
}

interface SupervisorContext extends SupervisorMachineInput {
  graceMs: number;
  storeWaitMs: number;
  failures: number;
}

export type SupervisorEvent =
  | { type: 'supervisor.start' }
  | { type: 'supervisor.drain' }
  | { type: 'supervisor.stop'; graceMs: number; storeWaitMs: number }
  /** Due jobs may be waiting in `queue` (every queue when absent): an enqueue's notification,
   *  a keyed job finished, the store reachable again. */
  | { type: 'supervisor.wake'; queue?: string }
  | { type: 'supervisor.slotsFreed' }
  /** The answers of the machine's own store calls (startClaim, startReap). */
  | { type: 'claim.done'; output: ClaimRound }
  | { type: 'claim.error'; error: unknown }
  | { type: 'reap.done'; output: number }
  | { type: 'reap.error'; error: unknown };

type CallAnswer = Extract<SupervisorEvent, { type: `${'claim' | 'reap'}.${string}` }>;

/** Starts a store call; its answer comes back to the machine as `<name>.done` or `<name>.error`
 *  (a synchronous throw too), unless the actor has ended by then. */
function startCall<T>(
  self: { send(event: SupervisorEvent): void; getSnapshot(): { status: string } },
  name: 'claim' | 'reap',
  call: () => Promise<T>,
): void {
  promiseOf(call).then(
    (output) => sendIfActive(self, { type: `${name}.done`, output } as CallAnswer),
    (error: unknown) => sendIfActive(self, { type: `${name}.error`, error } as CallAnswer),
  );
}

export const supervisorMachine = setup({
  types: {
    context: {} as SupervisorContext,
    events: {} as SupervisorEvent,
    input: {} as SupervisorMachineInput,
  },
  delays: {
    poll: ({ context }) => context.runtime.msUntilClaim(context.pollIntervalMs),
    reaper: ({ context }) => context.reaperIntervalMs,
    grace: ({ context }) => context.graceMs,
    storeWait: ({ context }) => context.storeWaitMs,
    errorBackoff: ({ context }) =>
      Math.min(context.maxErrorBackoffMs, context.errorBackoffMs * 2 ** Math.max(0, context.failures - 1)),
  },
  guards: {
    hasFreeSlots: ({ context }) => context.runtime.hasFreeSlots(),
    wantsClaim: ({ context }) => context.runtime.wantsClaim(),
    busy: ({ context }) => context.runtime.busy(),
    endedSinceClaim: ({ context }) => context.runtime.endedSinceClaim(),
    claimedSome: ({ event }) => event.type === 'claim.done' && event.output.claimed > 0,
  },
  actions: {
    startClaim: ({ context, self }) => startCall(self, 'claim', () => context.runtime.claim()),
    startReap: ({ context, self }) => startCall(self, 'reap', () => context.runtime.reap()),
    noteRound: assign({ failures: 0 }),
    noteWake: ({ context, event }) => context.runtime.noteWork(event.type === 'supervisor.wake' ? event.queue : undefined),
    noteAllWork: ({ context }) => context.runtime.noteWork(),
    noteClaimFailure: assign({ failures: ({ context }) => context.failures + 1 }),
    reportClaimFailure: ({ context, event }) =>
      context.runtime.claimFailed('error' in event ? event.error : event, context.failures),
    reportReapFailure: ({ context, event }) => context.runtime.reapFailed('error' in event ? event.error : event),
    setStopTimes: assign(({ event }) => (event.type === 'supervisor.stop' ? { graceMs: event.graceMs, storeWaitMs: event.storeWaitMs } : {})),
    abortAll: ({ context }) => context.runtime.abortAll(),
    giveUp: ({ context }) => context.runtime.giveUp(),
    releaseHeld: ({ context }) => context.runtime.releaseHeld(),
    drained: ({ context }) => context.runtime.drained(),
    stopped: ({ context }) => context.runtime.stopped(),
  },
}).createMachine({
  id: 'supervisor',
  context: ({ input }) => ({ ...input, graceMs: 0, storeWaitMs: 0, failures: 0 }),
  initial: 'idle',
  on: {
    'supervisor.stop': { target: '.stopping', actions: 'setStopTimes' },
  },
  states: {
    idle: {
      on: {
        'supervisor.start': 'running',
        'supervisor.drain': 'draining',
        'supervisor.stop': 'stopped',
      },
    },
    running: {
      type: 'parallel',
      states: {
        claimer: {
          initial: 'claiming',
          states: {
            claiming: {
              entry: 'startClaim',
              on: {
                'claim.done': { target: 'waiting', actions: 'noteRound' },
                'claim.error': { target: 'backingOff', actions: ['noteClaimFailure', 'reportClaimFailure'] },
                'supervisor.wake': { actions: 'noteWake' },
              },
            },
            waiting: {
              // Checked on entry (right after a claim) and after every event: a slot freed, a
              // wake-up noted. The planner's answer changes only through those.
              always: { guard: 'wantsClaim', target: 'claiming' },
              after: { poll: { target: 'claiming', actions: 'noteAllWork' } },
              on: {
                'supervisor.wake': { actions: 'noteWake' },
                'supervisor.slotsFreed': { target: 'waiting', reenter: true },
              },
            },
            backingOff: {
              after: { errorBackoff: { target: 'claiming', actions: 'noteAllWork' } },
              // Heard from the store (a notification, a write or renewal that went through):
              // it is back, so claim now rather than at the end of a backoff grown long.
              on: { 'supervisor.wake': { target: 'claiming', actions: 'noteAllWork' } },
            },
          },
        },
        reaper: {
          initial: 'reaping',
          states: {
            reaping: {
              entry: 'startReap',
              on: {
                'reap.done': 'sleeping',
                'reap.error': { target: 'sleeping', actions: 'reportReapFailure' },
              },
            },
            sleeping: { after: { reaper: 'reaping' } },
          },
        },
      },
    },
    draining: {
      initial: 'reaping',
      states: {
        reaping: {
          entry: 'startReap',
          on: {
            'reap.done': 'claiming',
            'reap.error': { target: 'backingOff', actions: ['noteClaimFailure', 'reportReapFailure'] },
          },
        },
        claiming: {
          // A drain asks every queue with room each round: it runs whatever is due.
          entry: ['noteAllWork', 'startClaim'],
          on: {
            'claim.done': [
              { guard: and(['claimedSome', 'hasFreeSlots']), target: 'claiming', reenter: true, actions: 'noteRound' },
              { target: 'waitingForJobs', actions: 'noteRound' },
            ],
            'claim.error': { target: 'backingOff', actions: ['noteClaimFailure', 'reportClaimFailure'] },
          },
        },
        waitingForJobs: {
          // An attempt that ended while the last claim was on its way told the machine
          // (slotsFreed) while it was not listening: claim again before calling it drained.
          always: [
            { guard: and(['endedSinceClaim', 'hasFreeSlots']), target: 'claiming' },
            { guard: not('busy'), target: '#supervisor.idle', actions: 'drained' },
          ],
          on: { 'supervisor.slotsFreed': { guard: 'hasFreeSlots', target: 'claiming' } },
        },
        backingOff: { after: { errorBackoff: 'claiming' } },
      },
    },
    stopping: {
      entry: 'releaseHeld',
      initial: 'draining',
      states: {
        draining: {
          always: { guard: not('busy'), target: '#supervisor.stopped' },
          after: { grace: 'aborting' },
        },
        aborting: {
          entry: 'abortAll',
          always: { guard: not('busy'), target: '#supervisor.stopped' },
          // A claim still in flight when the grace period ran out brings its jobs later; the
          // runtime sends slotsFreed after every claim, so abort what came.
          on: { 'supervisor.slotsFreed': { actions: 'abortAll' } },
          after: { storeWait: { target: '#supervisor.stopped', actions: 'giveUp' } },
        },
      },
    },
    stopped: { type: 'final', entry: 'stopped' },
  },
});
