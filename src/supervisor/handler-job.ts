import type { JobStore, Lease } from '../adapters/store.js';
import { continueAfter, dependencyOutcomes } from '../flows/continue-after.js';
import type { ContinueAfter } from '../machines/continue-after.js';
import type { ChildSpec, DependencyOutcome, Job } from '../queue.js';
import type { AttemptHandle } from '../machines/attempt-handle.js';
import type { ClaimedJob, SignalResult, SignalWaitOptions } from '../types.js';
import { DurableSteps, type StepWriter } from './durable-steps.js';

/** Where a handler's `job.progress(…)` goes: the supervisor's throttled writer. */
export type ProgressSink = (lease: Lease, percent: number, message: string | undefined) => void;

/** The `Job` a handler receives: a class, so that one attempt costs one allocation and its
 *  methods are shared. The signal is made only when the handler reads it. */
export class HandlerJob<P = unknown> implements Job<P> {
  readonly id: string;
  readonly queue: string;
  readonly kind: string;
  readonly payload: P;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly record: ClaimedJob<P>;
  readonly #abort: AttemptHandle;
  readonly #progress: ProgressSink;
  readonly #store: Pick<JobStore, 'getJobDependencies'> & StepWriter;
  /** Made on the first durable call: most handlers make none. */
  #durable: DurableSteps | undefined;

  constructor(
    record: ClaimedJob<P>,
    abort: AttemptHandle,
    progress: ProgressSink,
    store: Pick<JobStore, 'getJobDependencies'> & StepWriter,
  ) {
    this.id = record.id;
    this.queue = record.queue;
    this.kind = record.kind;
    this.payload = record.payload;
    this.attempt = record.attempt;
    this.maxAttempts = record.maxAttempts;
    this.record = record;
    this.#abort = abort;
    this.#progress = progress;
    this.#store = store;
  }

  parents<T extends Record<string, unknown>>(): Promise<{ [K in keyof T]: DependencyOutcome<T[K]> }> {
    return dependencyOutcomes(this.#store, this.id, 'parent') as Promise<{ [K in keyof T]: DependencyOutcome<T[K]> }>;
  }

  children<T extends Record<string, unknown>>(): Promise<{ [K in keyof T]: DependencyOutcome<T[K]> }> {
    return dependencyOutcomes(this.#store, this.id, 'child') as Promise<{ [K in keyof T]: DependencyOutcome<T[K]> }>;
  }

  continueAfter(children: Readonly<Record<string, ChildSpec>>): ContinueAfter {
    return continueAfter(children);
  }

  step<T>(name: string, fn: () => T | Promise<T>): Promise<T> {
    return this.#steps().step(name, fn);
  }

  sleep(name: string, ms: number): Promise<void> {
    return this.#steps().sleep(name, ms);
  }

  sleepUntil(name: string, until: Date): Promise<void> {
    return this.#steps().sleepUntil(name, until);
  }

  waitForSignal<T = unknown>(name: string, options?: SignalWaitOptions): Promise<SignalResult<T>> {
    return this.#steps().waitForSignal<T>(name, options);
  }

  #steps(): DurableSteps {
    return (this.#durable ??= new DurableSteps(this.record, this.#abort, this.#store));
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** A getter, so that `({ progress }) => …` works; the function is made only when asked for. */
  get progress(): (percent: number, message?: string) => void {
    return (percent, message) => this.#progress(this.record, percent, message);
  }
}
