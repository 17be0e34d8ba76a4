import { MAX_TIMER_MS } from '../validation.js';

/** A clock that can also set timers: XState's SimulatedClock, or the system's. */
export interface TimerClock {
  now(): number;
  setTimeout?(fn: (...args: any[]) => void, timeout: number): any;
  clearTimeout?(id: any): void;
}

/** Calls `fn` once the clock reaches `at`, never synchronously, however far ahead: past the
 *  longest delay a timer can wait (about 24.8 days) it waits in steps. Returns a function
 *  that cancels. */
export function startTimer(clock: TimerClock, at: number, fn: () => void): () => void {
  const set = clock.setTimeout ? clock.setTimeout.bind(clock) : setTimeout;
  const clear = clock.clearTimeout ? clock.clearTimeout.bind(clock) : clearTimeout;
  let id: any;
  const wait = () => {
    const left = Math.max(0, at - clock.now());
    const step = Math.min(left, MAX_TIMER_MS);
    id = set(() => (step < left ? wait() : fn()), step);
  };
  wait();
  return () => clear(id);
}

/** Resolves once `answer` has settled, or once the clock reaches `at`, whichever comes first;
 *  `late` is called in the second case. For a store call that must not hold its caller up for
 *  good: the call goes on, unwaited for. */
export function waitUntil(clock: TimerClock, at: number, answer: Promise<unknown>, late: () => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const cancel = startTimer(clock, at, () => {
      late();
      resolve();
    });
    const settled = () => {
      cancel();
      resolve();
    };
    answer.then(settled, settled);
  });
}
