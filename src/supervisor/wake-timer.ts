/**
 * One timer for every job actor of a supervisor. An actor asks to be woken (`wakeAt`) with
 * an event at a time: its lease's next beat, its deadline. This keeps the latest ask per actor
 * and event, and one clock timer armed at the earliest of them all; when it fires, every ask
 * that is due is sent, earliest first. Job actors set no timers of their own: XState keys each
 * delayed event by a string unique to the actor, and V8 makes a new hidden class of every such
 * key, about half of a job actor's CPU (bench/optimisations.md, row 23).
 */
import type { WakeEvent, WakeTarget } from '../machines/job-machine.js';
import { startTimer, type TimerClock } from './timer.js';

export class WakeTimer {
  readonly #clock: TimerClock;
  /** Per event, each actor's ask: when. */
  readonly #asks: ReadonlyMap<WakeEvent, Map<WakeTarget, number>> = new Map([
    ['lease.beat', new Map()],
    ['attempt.deadline', new Map()],
  ]);
  /** When the one timer fires; Infinity: not armed. */
  #armedAt = Infinity;
  #cancel: (() => void) | undefined = undefined;

  constructor(clock: TimerClock) {
    this.#clock = clock;
  }

  /** Sends `{ type: event }` to `target` once the clock reaches `at`; a later ask for the same
   *  target and event replaces this one; `at` Infinity drops it. */
  wakeAt(target: WakeTarget, event: WakeEvent, at: number): void {
    const asks = this.#asks.get(event)!;
    if (at === Infinity) {
      asks.delete(target);
      return;
    }
    asks.set(target, at);
    // A later ask leaves the timer as it is: it fires early, finds nothing due and re-arms.
    if (at < this.#armedAt) this.#arm(at);
  }

  /** Drops every ask of `target`; with none left, the timer too (it would hold the process
   *  open). */
  drop(target: WakeTarget): void {
    for (const asks of this.#asks.values()) asks.delete(target);
    if (this.#cancel !== undefined && this.size === 0) this.stop();
  }

  /** Asks still pending, for tests and the stop. */
  get size(): number {
    let size = 0;
    for (const asks of this.#asks.values()) size += asks.size;
    return size;
  }

  /** Cancels the timer and drops every ask. */
  stop(): void {
    this.#cancel?.();
    this.#cancel = undefined;
    this.#armedAt = Infinity;
    for (const asks of this.#asks.values()) asks.clear();
  }

  #arm(at: number): void {
    this.#cancel?.();
    this.#armedAt = at;
    this.#cancel = startTimer(this.#clock, at, this.#fire);
  }

  readonly #fire = (): void => {
    this.#cancel = undefined;
    this.#armedAt = Infinity;
    const now = this.#clock.now();
    const due: { at: number; target: WakeTarget; event: WakeEvent }[] = [];
    let next = Infinity;
    for (const [event, asks] of this.#asks) {
      for (const [target, at] of asks) {
        if (at <= now) {
          asks.delete(target);
          due.push({ at, target, event });
        } else if (at < next) {
          next = at;
        }
      }
    }
    // Armed before the sends: an actor woken now may ask again, earlier than `next`.
    if (next < Infinity) this.#arm(next);
    // As their own timers would have: the earliest first (an overdue deadline before a lease's
    // later end, after the event loop was held).
    due.sort((a, b) => a.at - b.at);
    for (const { target, event } of due) target.send({ type: event });
  };
}
