/**
 * A lease is a duration, but the stores keep it as a time (`leaseExpiresAt`) compared with
 * their "now". On PostgreSQL "now" is the server's clock, which a worker's step does not move.
 * The embedded stores (memory, PGlite) read the clock of the process they run in: a forward
 * step of that clock (a laptop resuming, NTP stepping) would make every held lease look
 * expired at once, and the reaper would hand running jobs out again. So these stores watch
 * their wall clock against a monotonic one and, on a step, move every held lease by the step:
 * each keeps the time it had left, as measured by the monotonic clock.
 */
import type { Clock } from '../types.js';
import { monotonicClock, systemClock } from '../types.js';

/** Drift below this is the clocks' own (NTP slewing), not a step. */
export const STEP_TOLERANCE_MS = 1_000;

export class ClockSteps {
  /** The wall clock less the monotonic one when last taken. */
  #offset: number;

  constructor(
    private readonly wall: Clock,
    private readonly monotonic: Clock,
    private readonly toleranceMs = STEP_TOLERANCE_MS,
  ) {
    this.#offset = wall.now() - monotonic.now();
  }

  /** How far the wall clock stepped since the last step taken (ms, negative for a step back);
   *  0 within the tolerance. A step is reported once. */
  take(): number {
    const offset = this.wall.now() - this.monotonic.now();
    const step = offset - this.#offset;
    if (Math.abs(step) < this.toleranceMs) return 0;
    this.#offset = offset;
    return step;
  }

  /** Gives back a step taken but not applied (the write that moves the leases failed). */
  untake(step: number): void {
    this.#offset -= step;
  }
}

/**
 * The steps an embedded store watches for. `clock` is the store's "now" (undefined: the
 * system's wall clock, which PGlite's `now()` follows); `elapsed` the monotonic clock. A clock
 * injected without `elapsed` is its own measure of time: nothing is a step.
 */
export function clockSteps(clock: Clock | undefined, elapsed: Clock | undefined): ClockSteps | undefined {
  if (elapsed !== undefined) return new ClockSteps(clock ?? systemClock, elapsed);
  return clock === undefined ? new ClockSteps(systemClock, monotonicClock) : undefined;
}
