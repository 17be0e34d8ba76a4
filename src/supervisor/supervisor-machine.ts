/**
 * The supervisor's own machine: when to claim, when to reap, how to stop.
 *
 *   idle ─start─▶ running { claimer: claiming ⇄ waiting, backingOff │ reaper: reaping ⇄ sleeping }
 *     │                └─stop─▶ stopping { draining ─grace─▶ aborting } ─▶ stopped
 *     └─drain─▶ draining { reaping → claiming ⇄ waitingForJobs } ─▶ idle
 *
 * The work itself (planning free slots, calling the store, spawning job actors) lives in the
 * runtime the machine is given; the machine decides only when. Store calls are invoked
 * promises: one per claim round or reaper pass, never per job.
 */
import { and, assign, fromPromise, not, or, setup } from 'xstate';

export interface ClaimRound {
  claimed: number;
  /** Some queue returned all it asked for: more may be waiting. */
  full: boolean;
}

export interface SupervisorRuntime {
  hasFreeSlots(): boolean;
  /** Claims what free slots allow and spawns a job actor for each. */
  claim(): Promise<ClaimRound>;
  reap(): Promise<number>;
  /** Job actors not yet final, plus a claim still in flight. */
  busy(): boolean;
  abortAll(): void;
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
  failures: number;
  /** A wake-up or a full claim says jobs may be waiting: claim again when a slot frees. */
  workLikely: boolean;
}

export type SupervisorEvent =
  | { type: 'supervisor.start' }
  | { type: 'supervisor.drain' }
  | { type: 'supervisor.stop'; graceMs: number }
  | { type: 'supervisor.wake' }
  | { type: 'supervisor.slotsFreed' };

export const supervisorMachine = setup({
  types: {
    context: {} as SupervisorContext,
    events: {} as SupervisorEvent,
    input: {} as SupervisorMachineInput,
  },
  actors: {
    claim: fromPromise<ClaimRound, SupervisorRuntime>(({ input }) => input.claim()),
    reap: fromPromise<number, SupervisorRuntime>(({ input }) => input.reap()),
  },
  delays: {
    poll: ({ context }) => context.pollIntervalMs,
    reaper: ({ context }) => context.reaperIntervalMs,
    grace: ({ context }) => context.graceMs,
    errorBackoff: ({ context }) =>
      Math.min(context.maxErrorBackoffMs, context.errorBackoffMs * 2 ** Math.max(0, context.failures - 1)),
  },
  guards: {
    hasFreeSlots: ({ context }) => context.runtime.hasFreeSlots(),
    workLikely: ({ context }) => context.workLikely,
    busy: ({ context }) => context.runtime.busy(),
    claimedSome: ({ event }) => 'output' in event && (event.output as ClaimRound).claimed > 0,
  },
  actions: {
    noteRound: assign({
      failures: 0,
      workLikely: ({ context, event }) => context.workLikely || ('output' in event && (event.output as ClaimRound).full),
    }),
    noteWake: assign({ workLikely: true }),
    clearWorkLikely: assign({ workLikely: false }),
    noteClaimFailure: assign({ failures: ({ context }) => context.failures + 1 }),
    reportClaimFailure: ({ context, event }) =>
      context.runtime.claimFailed('error' in event ? event.error : event, context.failures),
    reportReapFailure: ({ context, event }) => context.runtime.reapFailed('error' in event ? event.error : event),
    setGrace: assign({ graceMs: ({ event }) => (event.type === 'supervisor.stop' ? event.graceMs : 0) }),
    abortAll: ({ context }) => context.runtime.abortAll(),
    drained: ({ context }) => context.runtime.drained(),
    stopped: ({ context }) => context.runtime.stopped(),
  },
}).createMachine({
  id: 'supervisor',
  context: ({ input }) => ({ ...input, graceMs: 0, failures: 0, workLikely: false }),
  initial: 'idle',
  on: {
    'supervisor.stop': { target: '.stopping', actions: 'setGrace' },
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
              entry: 'clearWorkLikely',
              invoke: {
                id: 'claim',
                src: 'claim',
                input: ({ context }) => context.runtime,
                onDone: [
                  {
                    guard: and(['hasFreeSlots', or(['workLikely', ({ event }) => event.output.full])]),
                    target: 'claiming',
                    reenter: true,
                    actions: 'noteRound',
                  },
                  { target: 'waiting', actions: 'noteRound' },
                ],
                onError: { target: 'backingOff', actions: ['noteClaimFailure', 'reportClaimFailure'] },
              },
              on: { 'supervisor.wake': { actions: 'noteWake' } },
            },
            waiting: {
              after: { poll: 'claiming' },
              on: {
                'supervisor.wake': [{ guard: 'hasFreeSlots', target: 'claiming' }, { actions: 'noteWake' }],
                'supervisor.slotsFreed': { guard: and(['hasFreeSlots', 'workLikely']), target: 'claiming' },
              },
            },
            backingOff: {
              after: { errorBackoff: 'claiming' },
              on: { 'supervisor.wake': { actions: 'noteWake' } },
            },
          },
        },
        reaper: {
          initial: 'reaping',
          states: {
            reaping: {
              invoke: {
                id: 'reap',
                src: 'reap',
                input: ({ context }) => context.runtime,
                onDone: 'sleeping',
                onError: { target: 'sleeping', actions: 'reportReapFailure' },
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
          invoke: {
            id: 'reap',
            src: 'reap',
            input: ({ context }) => context.runtime,
            onDone: 'claiming',
            onError: { target: 'backingOff', actions: ['noteClaimFailure', 'reportReapFailure'] },
          },
        },
        claiming: {
          invoke: {
            id: 'claim',
            src: 'claim',
            input: ({ context }) => context.runtime,
            onDone: [
              { guard: and(['claimedSome', 'hasFreeSlots']), target: 'claiming', reenter: true, actions: 'noteRound' },
              { target: 'waitingForJobs', actions: 'noteRound' },
            ],
            onError: { target: 'backingOff', actions: ['noteClaimFailure', 'reportClaimFailure'] },
          },
        },
        waitingForJobs: {
          always: { guard: not('busy'), target: '#supervisor.idle', actions: 'drained' },
          on: { 'supervisor.slotsFreed': { guard: 'hasFreeSlots', target: 'claiming' } },
        },
        backingOff: { after: { errorBackoff: 'claiming' } },
      },
    },
    stopping: {
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
        },
      },
    },
    stopped: { type: 'final', entry: 'stopped' },
  },
});
