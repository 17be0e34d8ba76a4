import { createStore } from '@xstate/store';
import type { JobActorFinalState } from '../machines/job-machine.js';

/** Live numbers for one queue in this process. `running` is now; the rest count since start. */
export interface QueueCounters {
  running: number;
  claimed: number;
  completed: number;
  retrying: number;
  /** Attempts that snoozed: their jobs wait again, no attempt spent. */
  snoozed: number;
  dead: number;
  skipped: number;
  cancelled: number;
  /** Attempts that added children and wait for them (flows): their jobs run again after. */
  waiting: number;
  /** Attempts that slept or wait for a signal (docs/durable-jobs.md): no attempt spent. */
  sleeping: number;
  lost: number;
  rescued: number;
}

export interface SupervisorCounters {
  queues: Record<string, QueueCounters>;
  lastError: { message: string; at: number } | null;
}

const zero = (): QueueCounters => ({
  running: 0, claimed: 0, completed: 0, retrying: 0, snoozed: 0, dead: 0, skipped: 0, cancelled: 0, waiting: 0, sleeping: 0, lost: 0, rescued: 0,
});

/** An `@xstate/store` store of the supervisor's live counters, read by the CLI and inspector. */
export function createCountersStore(queueNames: readonly string[]) {
  const queues: Record<string, QueueCounters> = {};
  for (const name of queueNames) queues[name] = zero();
  return createStore({
    context: { queues, lastError: null } as SupervisorCounters,
    on: {
      claimed: (ctx, event: { queue: string; count: number }) =>
        update(ctx, event.queue, (q) => ({ ...q, claimed: q.claimed + event.count, running: q.running + event.count })),
      /** Many jobs at once: the supervisor tallies a tick's finished jobs and sends them together. */
      finished: (ctx, event: { queue: string; states: Partial<Record<JobActorFinalState, number>> }) =>
        update(ctx, event.queue, (q) => {
          const next = { ...q };
          for (const [state, n] of Object.entries(event.states) as [JobActorFinalState, number][]) {
            next[state] += n;
            next.running -= n;
          }
          return next;
        }),
      rescued: (ctx, event: { queue: string; count: number }) =>
        update(ctx, event.queue, (q) => ({ ...q, rescued: q.rescued + event.count })),
      storeError: (ctx, event: { message: string; at: number }) => ({ ...ctx, lastError: { message: event.message, at: event.at } }),
    },
  });
}

export type CountersStore = ReturnType<typeof createCountersStore>;

function update(ctx: SupervisorCounters, queue: string, fn: (q: QueueCounters) => QueueCounters): SupervisorCounters {
  return { ...ctx, queues: { ...ctx.queues, [queue]: fn(ctx.queues[queue] ?? zero()) } };
}
