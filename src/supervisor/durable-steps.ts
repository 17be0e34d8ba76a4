/**
 * A handler's durable calls (docs/durable-jobs.md): `job.step`, `job.sleep`, `job.sleepUntil`
 * and `job.waitForSignal`, replayed from what the job's row stored in earlier runs.
 *
 * Each call has a key: its name for its first call in a run, `name#2`, `name#3` … for the
 * next ones (a loop over one name stays deterministic). A key stored by an earlier run
 * returns what was stored without running anything again; one stored as another kind (the
 * handler changed between runs) is refused with an InvalidOptionError naming the key.
 */
import type { StepCheckpoint } from '../adapters/store.js';
import { NEVER } from '../adapters/store.js';
import { InvalidOptionError, InvalidResultError, JobAbortedError } from '../errors.js';
import type { AttemptHandle } from '../machines/attempt-handle.js';
import type { ClaimedJob, JobStep, SignalResult, SignalWaitOptions } from '../types.js';
import { assertName, assertStorableDate, MAX_RELATIVE_MS, toJsonData } from '../validation.js';


/** Stores one step's result, fenced by its lease (the supervisor batches them into
 *  JobStore.checkpointSteps); false when the lease is gone. */
export interface StepWriter {
  checkpointStep(step: StepCheckpoint): Promise<boolean>;
}

export class DurableSteps {
  /** The latest stored entry of each key. */
  readonly #stored = new Map<string, JobStep>();
  /** Calls so far in this run, per name. */
  readonly #calls = new Map<string, number>();

  constructor(
    private readonly job: ClaimedJob,
    private readonly attempt: AttemptHandle,
    private readonly checkpoint: StepWriter,
  ) {
    for (const step of job.steps) this.#stored.set(step.name, step);
  }

  async step<T>(name: string, fn: () => T | Promise<T>): Promise<T> {
    const key = this.#key('step', name);
    const stored = this.#replayed(key, 'step');
    if (stored) return structuredClone(stored.result) as T;
    if (typeof fn !== 'function') throw new InvalidOptionError(`step "${key}"`, 'needs a function to run');
    // An attempt already over (a worker woken past its lease, a handler past its deadline or
    // cancelled) runs no side effect it could not store: the job's next holder runs the step.
    if (this.attempt.aborted) throw this.attempt.reason;
    const late = this.attempt.lateBecause();
    if (late) {
      throw new JobAbortedError(late, `step "${key}" of job ${this.job.id}: the attempt's ${late === 'lease_lost' ? 'lease lapsed' : 'deadline passed'} before the step began; its fn was not run`);
    }
    const value = await fn();
    const data = toJsonData(value, `step "${key}"`);
    if ('issue' in data) throw new InvalidResultError(data.issue);
    const applied = await this.checkpoint.checkpointStep({ id: this.job.id, leaseToken: this.job.leaseToken, name: key, result: data.value });
    // A worker that lost its lease stores nothing: the job's new holder runs the step again.
    if (!applied) throw new JobAbortedError('lease_lost', `step "${key}" of job ${this.job.id}: the lease was lost before its result was stored`);
    this.#stored.set(key, { kind: 'step', name: key, at: new Date(), result: data.value });
    return data.value as T;
  }

  async sleep(name: string, ms: number): Promise<void> {
    if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0 || ms > MAX_RELATIVE_MS) {
      throw new InvalidOptionError('sleep', `ms must be a whole number of milliseconds from 0 to ${MAX_RELATIVE_MS}, got ${String(ms)}`);
    }
    await this.#sleep(this.#key('sleep', name), { delayMs: ms });
  }

  async sleepUntil(name: string, until: Date): Promise<void> {
    assertStorableDate('sleepUntil', until);
    await this.#sleep(this.#key('sleepUntil', name), { at: until });
  }

  async waitForSignal<T>(name: string, options: SignalWaitOptions = {}): Promise<SignalResult<T>> {
    const key = this.#key('waitForSignal', name);
    const timeoutMs = options?.timeoutMs;
    if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs < 0 || timeoutMs > MAX_RELATIVE_MS)) {
      throw new InvalidOptionError('timeoutMs', `must be a whole number of milliseconds from 0 to ${MAX_RELATIVE_MS}, got ${String(timeoutMs)}`);
    }
    const stored = this.#replayed(key, 'signal');
    if (stored?.status === 'received') return { received: true, payload: structuredClone(stored.payload) as T };
    if (stored?.status === 'timedOut') return { received: false };
    // Waiting: the wait resumes with the timeout it had (a signal woke the job, or its time came).
    const wake = stored ? { at: stored.until ?? NEVER } : timeoutMs === undefined ? { at: NEVER } : { delayMs: timeoutMs };
    const answer = await this.attempt.suspend({ kind: 'signal', name: key, signal: name, wake });
    return answer.answer === 'received' ? { received: true, payload: answer.payload as T } : { received: false };
  }

  async #sleep(key: string, wake: { delayMs: number } | { at: Date }): Promise<void> {
    const stored = this.#replayed(key, 'sleep');
    // A stored sleep is over once the claim's time (the store's clock) has reached its end.
    if (stored && stored.until.getTime() <= this.job.updatedAt.getTime()) return;
    await this.attempt.suspend({ kind: 'sleep', name: key, wake: stored ? { at: stored.until } : wake });
  }

  #key(call: string, name: string): string {
    assertName(`${call} name`, name);
    const n = (this.#calls.get(name) ?? 0) + 1;
    this.#calls.set(name, n);
    return n === 1 ? name : `${name}#${n}`;
  }

  #replayed<K extends JobStep['kind']>(key: string, kind: K): Extract<JobStep, { kind: K }> | undefined {
    const stored = this.#stored.get(key);
    if (!stored) return undefined;
    if (stored.kind !== kind) {
      throw new InvalidOptionError(`durable call "${key}"`, `was stored as a ${stored.kind} by an earlier run and is now called as a ${kind}: a handler's durable calls must keep their names and order across runs`);
    }
    return stored as Extract<JobStep, { kind: K }>;
  }
}

