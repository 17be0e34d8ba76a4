import type { SimulatedClock } from 'xstate';
import { type JobStore, NEVER } from '../adapters/store.js';
import type { Queue } from '../queue.js';
import type { Schedule } from '../schedule.js';
import { Scheduler } from '../supervisor/scheduler.js';
import { createSupervisor } from '../supervisor/supervisor.js';
import { type JobRecord, type Logger, monotonicClock } from '../types.js';

export interface DrainOptions {
  /** The simulated clock the store reads; the supervisor's timers follow it. Default: the
   *  system clock. */
  clock?: SimulatedClock;
  /** Also move `clock` forward to whatever becomes due later (retries after their backoff,
   *  delayed jobs) and run it, until nothing is left. Default false. */
  advance?: boolean;
  /** How many times at most the clock is moved before drain gives up. Default 100. */
  maxRounds?: number;
  /** Schedules whose due ticks are enqueued first, as a supervisor that starts now would:
   *  one never seen is registered now (no tick due yet); after that, the ticks that fell
   *  since the last one enqueued (the latest only, unless `catchUp`). `advance` does not move
   *  the clock to later ticks: move it, then drain again. */
  schedules?: readonly Schedule[];
}

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };
/** The default backoff's jitter drawn at its middle, so that two runs of a test retry at the
 *  same times. */
const NO_JITTER = () => 0.5;

/** Runs every due job of `queues` on a supervisor of its own, and with `advance` also every job
 *  and retry that becomes due later. Resolves with how many attempts ran. */
export function drain(store: JobStore, queues: readonly Queue<any>[], options: DrainOptions = {}): Promise<number> {
  if (options.advance && !options.clock) throw new TypeError('drain: `advance` needs the simulated `clock` the store reads');
  if (options.schedules?.length) return enqueueDueTicks(store, options).then(() => drainAll(store, queues, options));
  return drainAll(store, queues, options);
}

function drainAll(store: JobStore, queues: readonly Queue<any>[], options: DrainOptions): Promise<number> {
  return drainUntil(store, queues, options, async () => (options.advance ? nextDueAt(store, queues) : null));
}

/** Enqueues the schedules' due ticks: checks until no check is left to run at once. */
async function enqueueDueTicks(store: JobStore, { schedules = [], clock }: DrainOptions): Promise<void> {
  const scheduler = new Scheduler(store, schedules, clock ?? monotonicClock);
  for (let i = 0; i < 1_000 && (await scheduler.check()) === 0; i++);
}

/**
 * Drains, then moves the clock to the time `next` names, and again, until `next` says nothing
 * is left. Between drains no handler runs, so the clock can jump at once.
 */
export async function drainUntil(
  store: JobStore,
  queues: readonly Queue<any>[],
  { clock, maxRounds = 100 }: Pick<DrainOptions, 'clock' | 'maxRounds'>,
  next: () => Promise<number | null>,
): Promise<number> {
  const supervisor = createSupervisor({ store, queues, workerId: 'jobvisor-testing', logger: silent, random: NO_JITTER, ...(clock && { clock }) });
  let attempts = 0;
  try {
    for (let round = 0; ; round++) {
      attempts += await supervisor.drain();
      if (!clock) return attempts;
      const at = await next();
      if (at === null) return attempts;
      if (round >= maxRounds) {
        throw new Error(
          `drain: still not done after moving the clock ${maxRounds} times (next due at ${new Date(at).toISOString()}, ` +
            `clock at ${new Date(clock.now()).toISOString()}); does the store read this clock?`,
        );
      }
      if (at > clock.now()) clock.set(at);
    }
  } finally {
    await supervisor.stop({ graceMs: 0 });
  }
}

/** When a job of `queues` can next run: a waiting or sleeping one at its runAt (not a wait for a
 *  signal with no timeout), one running elsewhere once its lease runs out (the reaper then
 *  gives it back). null when none is left. */
async function nextDueAt(store: JobStore, queues: readonly Queue<any>[]): Promise<number | null> {
  let next: number | null = null;
  for (const { name } of queues) {
    for (const state of ['pending', 'retrying', 'sleeping', 'running'] as const) {
      for (const job of await store.listJobs({ queue: name, state, limit: 10_000 })) {
        const at = dueAt(job);
        if (at !== null) next = next === null ? at : Math.min(next, at);
      }
    }
  }
  return next;
}

export function dueAt(job: JobRecord): number | null {
  if (job.state === 'pending' || job.state === 'retrying') return job.runAt.getTime();
  if (job.state === 'sleeping') return job.runAt.getTime() < NEVER.getTime() ? job.runAt.getTime() : null;
  if (job.state === 'running' && job.leaseExpiresAt) return job.leaseExpiresAt.getTime() + 1;
  return null;
}
