/**
 * When the supervisor's schedules are checked: a small actor of its own beside the supervisor
 * machine, started with the supervisor and stopped when it stops, so its timer follows the
 * supervisor's clock (a SimulatedClock in tests).
 *
 *   enqueueing ─done(ms until the next tick)─▶ sleeping ─after─▶ enqueueing
 *       └─error─▶ sleeping (errorBackoffMs) ──┘
 */
import { assign, fromPromise, setup } from 'xstate';

export interface SchedulerMachineInput {
  /** Enqueues every due tick; resolves with the ms until the next check. */
  check: () => Promise<number>;
  failed: (error: unknown) => void;
  errorBackoffMs: number;
}

export const schedulerMachine = setup({
  types: {
    context: {} as SchedulerMachineInput & { delayMs: number },
    input: {} as SchedulerMachineInput,
  },
  actors: {
    check: fromPromise<number, SchedulerMachineInput['check']>(({ input }) => input()),
  },
  delays: {
    next: ({ context }) => context.delayMs,
  },
}).createMachine({
  id: 'scheduler',
  context: ({ input }) => ({ ...input, delayMs: 0 }),
  initial: 'enqueueing',
  states: {
    enqueueing: {
      invoke: {
        id: 'check',
        src: 'check',
        input: ({ context }) => context.check,
        onDone: { target: 'sleeping', actions: assign({ delayMs: ({ event }) => event.output }) },
        onError: {
          target: 'sleeping',
          actions: [assign({ delayMs: ({ context }) => context.errorBackoffMs }), ({ context, event }) => context.failed(event.error)],
        },
      },
    },
    sleeping: { after: { next: 'enqueueing' } },
  },
});
