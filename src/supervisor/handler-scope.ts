/**
 * Which attempt's handler the running code belongs to, across its awaits: entered around
 * every handler call, read by `supervisor.stop()` to tell a stop asked from inside one of the
 * supervisor's own handlers (which must not wait for, nor abort, the job asking) from one
 * asked from outside. One storage for every supervisor of the process; each checks that the
 * attempt it reads is one of its own.
 *
 * Its cost: on Node 20 and 22 an enabled AsyncLocalStorage runs a hook for every promise
 * made (about 70 ns each here); a job makes about 9, so about 1 µs of the hot path's 150 µs
 * per job (bench/src/hot-path.ts before and after: no difference above the machine's noise).
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const scope = new AsyncLocalStorage<object>();

/** Runs `fn` (a handler call) as the attempt `attempt`: code it awaits or schedules sees it. */
export function runAsAttempt<T>(attempt: object, fn: () => T): T {
  return scope.run(attempt, fn);
}

/** The attempt whose handler the calling code runs in, if any. */
export function currentAttempt(): object | undefined {
  return scope.getStore();
}
