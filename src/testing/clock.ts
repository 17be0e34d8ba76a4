import { SimulatedClock } from 'xstate';

/** Where a test clock starts by default: a fixed, realistic time, the same in every run. */
export const TEST_EPOCH = Date.UTC(2030, 0, 1);

/** XState's simulated clock, set to `start`. Give it to `memoryStore({ clock })` and
 *  `createSupervisor({ clock })`: every timer (heartbeat, deadline, backoff, poll) follows it. */
export function createTestClock(start: number | Date = TEST_EPOCH): SimulatedClock {
  const clock = new SimulatedClock();
  clock.set(typeof start === 'number' ? start : start.getTime());
  return clock;
}

/** Lets promise chains and store calls set off by a timer run to their end: yields to the event
 *  loop a few times. Not a sleep; the clock does not move. */
export async function settle(rounds = 8): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Moves the clock forward by `ms` in steps of `stepMs`, settling after each, so that what a
 *  timer set off (a store call, the next timer) happens before the next step, as in real time. */
export async function advance(clock: SimulatedClock, ms: number, stepMs = Math.min(ms, 1_000)): Promise<void> {
  if (!(ms >= 0) || !(stepMs > 0)) throw new RangeError(`advance(${ms}, ${stepMs}): ms must be >= 0 and stepMs > 0`);
  for (let left = ms; left > 0; left -= stepMs) {
    clock.increment(Math.min(stepMs, left));
    await settle();
  }
}
