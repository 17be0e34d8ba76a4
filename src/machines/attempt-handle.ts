/**
 * What a running attempt's handler holds of its job actor: the abort signal (made lazily)
 * and the way to ask the actor to sleep or wait for a signal (docs/durable-jobs.md). A sleep
 * or wait is a transition of the job machine (running.suspending), not a store call of the
 * handler's own: the actor writes it, fenced by the lease, and answers here.
 */
import type { SuspendAnswer, SuspendRequest } from '../adapters/store.js';
import { InvalidOptionError } from '../errors.js';
import type { JobMachineContext } from './job-machine.js';
import { LazyAbortController } from './lazy-abort.js';

/** Why a handler's call comes too late (lateBecause). */
export type LateReason = 'lease_lost' | 'deadline_exceeded';

type LateContext = Pick<JobMachineContext, 'ports' | 'policy' | 'leaseValidUntil'>;

/** Why an answer of the handler now would be late: its lease lapsed, or its deadline passed,
 *  by our clock (whose timers may not have fired yet); undefined while in time. */
export function lateBecause(context: LateContext, startedAt: number): LateReason | undefined {
  const now = context.ports.now();
  if (now >= context.leaseValidUntil) return 'lease_lost';
  if (context.policy.deadlineMs > 0 && now - startedAt >= context.policy.deadlineMs) return 'deadline_exceeded';
  return undefined;
}

/** A sleep or wait as the handler asks for it; the actor adds the lease. */
export type Suspension = SuspendRequest extends infer R ? (R extends unknown ? Omit<R, 'id' | 'leaseToken'> : never) : never;

interface Asker {
  send(event: { type: 'handler.suspend'; request: Suspension } | { type: 'handler.late' }): void;
  getSnapshot(): { status: string; context: LateContext };
}

/** Held for as long as its attempt's handler runs, so kept small: the start time, not a
 *  closure made per attempt, is what `lateBecause` needs beside the actor. */
export class AttemptHandle extends LazyAbortController {
  #actor: Asker | undefined;
  #startedAt = 0;
  #pending: { resolve(answer: SuspendAnswer): void; reject(error: unknown): void } | undefined;

  /** The actor whose attempt this is, and when its handler started by the actor's clock (to
   *  tell whether the handler asks too late: after its deadline or lease, having kept the
   *  event loop busy); set as its handler starts. */
  bind(actor: Asker, startedAt: number): void {
    this.#actor = actor;
    this.#startedAt = startedAt;
  }

  /** Asks the actor to sleep or wait; resolves with what the store did. An answer that ends
   *  the attempt (sleeping, cancelled, lost) never resolves: the handler is over. */
  suspend(request: Suspension): Promise<SuspendAnswer> {
    if (this.#pending) {
      return Promise.reject(new InvalidOptionError(request.kind === 'sleep' ? 'sleep' : 'waitForSignal', 'another sleep or wait of this job is still on its way: await each before the next'));
    }
    const actor = this.#actor;
    if (!actor || actor.getSnapshot().status !== 'active' || this.aborted) {
      return Promise.reject(new InvalidOptionError(request.kind === 'sleep' ? 'sleep' : 'waitForSignal', 'the attempt has ended'));
    }
    return new Promise<SuspendAnswer>((resolve, reject) => {
      this.#pending = { resolve, reject };
      // Too late to write a sleep: the attempt ends as the deadline or the lapsed lease decide,
      // and this call never settles (drop).
      actor.send(this.lateBecause() !== undefined ? { type: 'handler.late' } : { type: 'handler.suspend', request });
    });
  }

  /** Why a call of the handler now would be late (its lease or deadline passed by the actor's
   *  clock, even before its timers fire: a process frozen past them); undefined while in time. */
  lateBecause(): LateReason | undefined {
    return this.#actor === undefined ? undefined : lateBecause(this.#actor.getSnapshot().context, this.#startedAt);
  }

  /** The store's answer, for the handler to go on with. */
  answer(answer: SuspendAnswer): void {
    const pending = this.#pending;
    this.#pending = undefined;
    pending?.resolve(answer);
  }

  /** The store threw: the handler's sleep or wait throws it. */
  fail(error: unknown): void {
    const pending = this.#pending;
    this.#pending = undefined;
    pending?.reject(error);
  }

  /** The attempt ended while the sleep or wait was on its way: it never settles. */
  drop(): void {
    this.#pending = undefined;
  }
}
