import { type AnyActorRef, SimulatedClock } from 'xstate';
import type { JobPorts, WakeTarget } from '../../src/machines/job-machine.js';
import { WakeTimer } from '../../src/supervisor/wake-timer.js';

/** Lets promise chains and store calls that were set off by a timer run to their end. Not a
 *  sleep: it yields to the event loop a few times, whatever the clock says. */
export async function settle(rounds = 8): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * Yields to the event loop until `check` holds (a row's state, an actor's snapshot, a list the
 * test fills), then returns; the clock does not move. Unlike `settle(n)`, which guesses how
 * many turns a chain takes (one more `await` in the code breaks the guess), this waits for
 * the state itself, and fails naming `what` if it never comes within `maxTurns` turns.
 */
export async function until(what: string, check: () => boolean | Promise<boolean>, maxTurns = 1_000): Promise<void> {
  for (let turn = 0; turn < maxTurns; turn++) {
    if (await check()) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  throw new Error(`until: ${what} did not happen within ${maxTurns} turns of the event loop`);
}

/** A simulated clock that starts at a fixed, realistic time. */
export function createTestClock(start = Date.UTC(2026, 10, 29, 12, 0, 0)): SimulatedClock {
  const clock = new SimulatedClock();
  clock.set(start);
  return clock;
}

/** Moves the simulated clock forward in steps, settling after each so that what a timer set
 *  off (a store call, the next timer) happens before the next step, as in real time. */
export async function advance(clock: SimulatedClock, ms: number, stepMs = Math.min(ms, 1_000)): Promise<void> {
  let left = ms;
  while (left > 0) {
    const step = Math.min(stepMs, left);
    clock.increment(step);
    left -= step;
    await settle();
  }
}

/** A promise with its resolve and reject, for handlers the test finishes by hand. */
export function deferred<T = unknown>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** The supervisor's one wake timer (`ports.wakeAt`) for a job actor a test runs without a
 *  supervisor: its timer on the test's clock, its asks read by the ports' `now`. */
export function testWakes(clock: SimulatedClock, now: () => number = () => clock.now()): Pick<JobPorts, 'wakeAt'> {
  const wakes = new WakeTimer({ now, setTimeout: (fn, ms) => clock.setTimeout(fn, ms), clearTimeout: (id) => clock.clearTimeout(id) });
  // The supervisor drops a job's asks when its slot frees; here an ask left over reaches
  // only an actor still active (a write state ignores it; a final actor is not sent it).
  const whileActive = new WeakMap<WakeTarget, WakeTarget>();
  const target = (actor: WakeTarget) => {
    let wrapped = whileActive.get(actor);
    if (!wrapped) {
      wrapped = { send: (event) => ((actor as unknown as AnyActorRef).getSnapshot().status === 'active' ? actor.send(event) : undefined) };
      whileActive.set(actor, wrapped);
    }
    return wrapped;
  };
  return { wakeAt: (actor, event, at) => wakes.wakeAt(target(actor), event, at) };
}
