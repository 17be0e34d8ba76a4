/**
 * Several real supervisors (workers) on one store, driven step by step: jobs enqueued (some
 * with a concurrency key, some with an expiresAt), handlers finished by the test (a value, a
 * failure, a permanent one, a skip, a snooze), jobs cancelled, time moved, workers paused,
 * resumed or crashed. The queue has a limit per key and a rate limit. Each worker has its own
 * simulated clock, which stands still while it is paused or dead, as a frozen process's timers
 * do; the store's clock is the world's. Every store call goes through a LeaseObserver (each
 * checked, none held back: calls run concurrently), behind a gate per worker that holds its
 * calls while it is paused and forever once it crashed.
 */
import { type SimulatedClock } from 'xstate';
import type { JobStore } from '../../src/adapters/store.js';
import { defineQueue, PermanentJobError, type Job, SkipJobError, SnoozeJobError } from '../../src/index.js';
import { createSupervisor, type Supervisor } from '../../src/supervisor/supervisor.js';
import { type Clock, FINAL_JOB_STATES } from '../../src/types.js';
import { createTestClock, deferred, settle } from '../support/sim.js';
import { LeaseObserver } from './lease-observer.js';

export const QUEUE = 'props';
export const LEASE_MS = 3_000;
const MAX_ATTEMPTS = 3;
const STEP_MS = 100;
/** Jobs sharing a concurrency key run one at a time across the workers. */
export const PER_KEY = 1;
/** At most this many starts of the queue in any RATE_MS, across the workers. */
export const RATE = { max: 4, intervalMs: 1_000 };
export const SNOOZE_MS = 700;

export type Outcome = 'ok' | 'fail' | 'permanent' | 'skip' | 'snooze';

export type Action =
  /** `key`: a concurrency key (k0, k1 …) or none; `expiresInMs`: an expiresAt that far ahead. */
  | { kind: 'enqueue'; count: number; key?: number | null; expiresInMs?: number | null }
  | { kind: 'finish'; pick: number; outcome: Outcome }
  /** The worker running one handler call in flight is frozen just as that handler returns. */
  | { kind: 'freeze'; pick: number; outcome: Outcome }
  /** A job (by order of enqueue) is cancelled through a worker, wherever it is. */
  | { kind: 'cancel'; pick: number; worker: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'reap'; worker: number }
  | { kind: 'pause'; worker: number }
  | { kind: 'resume'; worker: number }
  | { kind: 'crash'; worker: number }
  /** Several actions set off at once, with no wait between them: their store calls overlap
   *  (on PostgreSQL, on connections of their own), e.g. a frozen worker's write sent as
   *  another worker's reaper rescues. No `advance` among them. */
  | { kind: 'together'; actions: Action[] };

/** One handler call waiting for the test to finish it. */
interface Attempt {
  worker: number;
  jobId: string;
  attempt: number;
  answer: ReturnType<typeof deferred<unknown>>;
}

interface Worker {
  supervisor: Supervisor;
  clock: SimulatedClock;
  status: 'up' | 'paused' | 'crashed';
  /** Calls made while paused, let through on resume. */
  held: Array<() => void>;
}

/** A store from the factory, reading the world's clock. */
export type StoreFactory = (clock: Clock) => Promise<JobStore>;

export class Cluster {
  readonly workers: Worker[] = [];
  readonly attempts: Attempt[] = [];
  readonly observer: LeaseObserver;
  readonly store: JobStore;
  readonly #world: SimulatedClock;
  readonly #ids: string[] = [];
  #enqueued = 0;

  private constructor(store: JobStore, world: SimulatedClock, size: number) {
    this.store = store;
    this.#world = world;
    this.observer = new LeaseObserver(store);
    for (let i = 0; i < size; i++) this.workers.push(this.#worker(i));
  }

  static async start(createStore: StoreFactory, size: number): Promise<Cluster> {
    const world = createTestClock();
    const cluster = new Cluster(await createStore(world), world, size);
    for (const w of cluster.workers) await w.supervisor.start();
    await cluster.settle();
    return cluster;
  }

  get now(): number {
    return this.#world.now();
  }

  async run(action: Action): Promise<void> {
    await this.#act(action);
    await this.settle();
  }

  /** What `action` sets off, not waiting for the store calls it makes to be answered. */
  async #act(action: Action): Promise<void> {
    switch (action.kind) {
      case 'enqueue': {
        const expiresAt = action.expiresInMs == null ? null : new Date(this.now + action.expiresInMs);
        const concurrencyKey = action.key == null ? null : `k${action.key}`;
        const jobs = await this.store.enqueueJobs({
          jobs: Array.from({ length: action.count }, () => ({
            queue: QUEUE, kind: 'work', payload: { n: ++this.#enqueued }, maxAttempts: MAX_ATTEMPTS, expiresAt, concurrencyKey,
          })),
        });
        this.#ids.push(...jobs.map((j) => j.job.id));
        break;
      }
      case 'cancel': {
        const id = this.#ids[action.pick % Math.max(this.#ids.length, 1)];
        if (id && this.workers[action.worker]!.status === 'up') await this.workers[action.worker]!.supervisor.cancel(id);
        break;
      }
      case 'finish': {
        const live = this.attempts.filter((a) => this.workers[a.worker]!.status !== 'crashed');
        const attempt = live[action.pick % Math.max(live.length, 1)];
        if (attempt) this.#finish(attempt, action.outcome);
        break;
      }
      case 'freeze': {
        const running = this.attempts.filter((a) => this.workers[a.worker]!.status === 'up');
        const attempt = running[action.pick % Math.max(running.length, 1)];
        if (attempt) {
          this.workers[attempt.worker]!.status = 'paused';
          this.#finish(attempt, action.outcome);
        }
        break;
      }
      case 'advance':
        await this.advance(action.ms);
        break;
      case 'reap':
        if (this.workers[action.worker]!.status === 'up') await this.workers[action.worker]!.supervisor.reap();
        break;
      case 'pause':
        if (this.workers[action.worker]!.status === 'up') this.workers[action.worker]!.status = 'paused';
        break;
      case 'resume':
        this.#resume(action.worker);
        break;
      case 'crash':
        this.workers[action.worker]!.status = 'crashed';
        break;
      case 'together':
        await Promise.all(action.actions.map((a) => this.#act(a)));
        break;
    }
  }

  /** World time moves; the clocks of the workers that are up move with it. */
  async advance(ms: number): Promise<void> {
    for (let left = ms; left > 0; left -= STEP_MS) {
      const step = Math.min(STEP_MS, left);
      this.#world.increment(step);
      for (const w of this.workers) if (w.status === 'up') w.clock.increment(step);
      await this.settle();
    }
  }

  /** Until every call that reached the store has its answer and what followed has run. */
  async settle(): Promise<void> {
    do await settle(4);
    while (!this.observer.idle);
  }

  /** The end of a run: every worker that is not dead resumes, every handler succeeds, and
   *  time goes on until no job is left to run (or it is clear that some never will be). */
  async recover(): Promise<void> {
    this.workers.forEach((_, i) => this.#resume(i));
    for (let round = 0; round < 60; round++) {
      for (const a of [...this.attempts]) if (this.workers[a.worker]!.status === 'up') this.#finish(a, 'ok');
      await this.advance(1_000);
      const counts = await this.store.countJobs();
      if (counts.every((c) => (FINAL_JOB_STATES as readonly string[]).includes(c.state))) break;
    }
  }

  async stop(): Promise<void> {
    const up = this.workers.filter((w) => w.status === 'up');
    let stopped = 0;
    for (const w of up) void w.supervisor.stop({ graceMs: 0 }).then(() => (stopped += 1));
    for (let i = 0; i < 50 && stopped < up.length; i++) await this.advance(STEP_MS);
  }

  #worker(index: number): Worker {
    const clock = createTestClock(this.#world.now());
    const worker: Worker = { clock, status: 'up', held: [], supervisor: undefined as never };
    const queue = defineQueue(QUEUE, {
      concurrency: 2,
      maxAttempts: MAX_ATTEMPTS,
      leaseMs: LEASE_MS,
      deadlineMs: 20_000,
      backoff: () => 500,
      perKeyConcurrency: PER_KEY,
      rateLimit: RATE,
      handlers: {
        work: (job: Job) => {
          const attempt: Attempt = { worker: index, jobId: job.id, attempt: job.attempt, answer: deferred() };
          this.attempts.push(attempt);
          job.signal.addEventListener('abort', () => this.#forget(attempt));
          return attempt.answer.promise;
        },
      },
    });
    worker.supervisor = createSupervisor({
      store: this.#gate(worker, this.observer.for(index)),
      queues: [queue],
      clock,
      workerId: `w${index}`,
      pollIntervalMs: 500,
      reaperIntervalMs: 2_000,
      errorBackoffMs: 500,
      writeRetryMs: 500,
    });
    return worker;
  }

  /** The worker's store: its calls wait while it is paused, and for ever once it crashed. */
  #gate(worker: Worker, store: JobStore): JobStore {
    return new Proxy(store, {
      get: (target, key) => {
        const value = Reflect.get(target, key);
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          while (worker.status !== 'up') {
            if (worker.status === 'crashed') return new Promise(() => {});
            await new Promise<void>((resolve) => worker.held.push(resolve));
          }
          return value.apply(target, args);
        };
      },
    });
  }

  #resume(index: number): void {
    const worker = this.workers[index]!;
    if (worker.status !== 'paused') return;
    worker.status = 'up';
    for (const release of worker.held.splice(0)) release();
    // A process that was frozen finds its clock moved on: its overdue timers fire now.
    worker.clock.increment(this.#world.now() - worker.clock.now());
  }

  #finish(attempt: Attempt, outcome: Outcome): void {
    this.#forget(attempt);
    const { worker, jobId } = attempt;
    if (outcome === 'ok') attempt.answer.resolve({ worker, attempt: attempt.attempt, jobId });
    else if (outcome === 'fail') attempt.answer.reject(new Error(`attempt ${attempt.attempt} of job ${jobId} failed`));
    else if (outcome === 'permanent') attempt.answer.reject(new PermanentJobError(`job ${jobId} cannot succeed`));
    else if (outcome === 'skip') attempt.answer.reject(new SkipJobError(`job ${jobId} has nothing to do`));
    else attempt.answer.reject(new SnoozeJobError(SNOOZE_MS));
  }

  #forget(attempt: Attempt): void {
    const i = this.attempts.indexOf(attempt);
    if (i >= 0) this.attempts.splice(i, 1);
  }
}
