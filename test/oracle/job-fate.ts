/**
 * A reference model of one job's fate, written from the README's promises ("The job machine",
 * "Queues and handlers", "Snooze", "Cancel", "A deadline across all attempts", the
 * supervisor's `stop` and reaper), never from the machine: nothing here imports src/machines,
 * so a change to the machine cannot change what the tests expect of it.
 *
 * Two workers run it (a crashed one is replaced, as a restarted process would be): which one
 * claims it does not change its fate.
 *
 * Given the job's options and what its handler does on each call, `fateOf` states the row's
 * final state, error code, attempt count, `maxAttempts`, its last `runAt`, and every history
 * row in order with the time it was written.
 *
 * Time is a grid the driver keeps exact (fate-driver.ts): the job is enqueued at 0; a claim
 * comes exactly when the job is due; a handler answers at once, except one that hangs (its
 * attempt ends at the deadline); delays, deadlines and snoozes are whole seconds; `expiresAt`
 * falls half-way between seconds, so it never ties with a claim or a deadline.
 */
import type { JobState } from '../../src/types.js';

/** What the handler does on one call. */
export type HandlerAction =
  /** Returns `value`: completed with it as the result. */
  | { do: 'resolve'; value: number }
  /** Throws an Error: retried after the backoff if attempts are left, dead otherwise. */
  | { do: 'throw' }
  /** Throws PermanentJobError: dead at once. */
  | { do: 'permanent' }
  /** Throws SkipJobError: skipped. */
  | { do: 'skip' }
  /** Throws SnoozeJobError(ms): pending again after ms, no attempt spent. */
  | { do: 'snooze'; ms: number }
  /** Never answers and ignores its signal: the attempt fails at its deadline. */
  | { do: 'hang' }
  /** Is cancelled (supervisor.cancel) while it runs, and honours its signal. */
  | { do: 'cancel' }
  /** Its worker stops with no grace while it runs; another worker takes over. */
  | { do: 'shutdown' }
  /** Its worker's process dies as the handler starts: nothing more of it is written. The
   *  lease lapses, another worker's reaper rescues the job, and a worker claims it again. */
  | { do: 'crash' }
  /** Its worker's process is frozen as the handler returns `value` (the write waits in the
   *  frozen process): as after a crash, the job is rescued and claimed again, and then the
   *  frozen worker wakes and sends its write, which must change nothing. */
  | { do: 'freeze'; value: number };

export interface JobOptions {
  maxAttempts: number;
  /** Per-attempt deadline, whole seconds in ms. */
  deadlineMs: number;
  /** The job's deadline across all attempts, ms after the enqueue (half-way between seconds). */
  expiresAtMs: number | null;
}

/** The queue's lease in these tests: whole seconds. */
export const LEASE_MS = 3_000;
/** A reaper pass comes every half second, after the polls of that moment; each worker polls
 *  every half second (the driver's step). */
export const REAPER_MS = 500;
export const POLL_MS = 500;

/** The queue's backoff in these tests: whole seconds, growing with the attempt. */
export const backoffMs = (attempt: number): number => 1_000 * attempt;

export interface FateRow {
  from: JobState | null;
  to: JobState;
  attempt: number;
  code: string | null;
  /** When it was written, ms after the enqueue. */
  atMs: number;
}

export interface Fate {
  state: JobState;
  /** The row's last error code; null when completed. */
  code: string | null;
  attempt: number;
  maxAttempts: number;
  /** The row's runAt, ms after the enqueue: when it was last due. */
  runAtMs: number;
  /** The completed job's result. */
  result: number | null;
  history: FateRow[];
  /** How many times the handler was called. */
  calls: number;
}

/** A handler past the end of its script returns this. */
export const DEFAULT_ACTION: HandlerAction = { do: 'resolve', value: 0 };

export function fateOf(options: JobOptions, script: readonly HandlerAction[]): Fate {
  const { deadlineMs, expiresAtMs } = options;
  let maxAttempts = options.maxAttempts;
  let attempt = 0;
  let state: JobState = 'pending';
  let runAtMs = 0;
  /** When the next claim comes: when the row is due, but for a rescued job (below). */
  let claimAtMs = 0;
  let calls = 0;
  const history: FateRow[] = [{ from: null, to: 'pending', attempt: 0, code: null, atMs: 0 }];
  const end = (to: JobState, code: string | null, atMs: number, result: number | null = null): Fate => {
    history.push({ from: state, to, attempt, code, atMs });
    return { state: to, code, attempt, maxAttempts, runAtMs, result, history, calls };
  };
  /** The row waits again, due at `due`. */
  const wait = (to: 'pending' | 'retrying', code: string, atMs: number, due: number) => {
    history.push({ from: state, to, attempt, code, atMs });
    state = to;
    runAtMs = due;
    claimAtMs = due;
  };

  for (;;) {
    // Waiting past its expiresAt: the reaper ends it, attempts left or not.
    if (expiresAtMs !== null && expiresAtMs < claimAtMs) return end('dead', 'expired', expiresAtMs);
    const now = claimAtMs;
    attempt += 1;
    history.push({ from: state, to: 'running', attempt, code: null, atMs: now });
    state = 'running';
    const action = script[calls] ?? DEFAULT_ACTION;
    calls += 1;
    /** A failure: retried after the backoff while attempts are left, else dead. */
    const fail = (code: string, atMs: number): Fate | undefined => {
      if (attempt >= maxAttempts) return end('dead', code, atMs);
      wait('retrying', code, atMs, atMs + backoffMs(attempt));
      return undefined;
    };
    let fate: Fate | undefined;
    switch (action.do) {
      case 'resolve':
        return end('completed', null, now, action.value);
      case 'throw':
        fate = fail('handler_error', now);
        break;
      case 'permanent':
        return end('dead', 'permanent_error', now);
      case 'skip':
        return end('skipped', 'skipped', now);
      case 'snooze':
        // Spends no attempt: one more is allowed.
        maxAttempts += 1;
        wait('pending', 'snoozed', now, now + action.ms);
        break;
      case 'hang':
        // The expiresAt timer aborts a running attempt before its deadline can.
        if (expiresAtMs !== null && expiresAtMs < now + deadlineMs) return end('dead', 'expired', expiresAtMs);
        fate = fail('deadline_exceeded', now + deadlineMs);
        break;
      case 'cancel':
        return end('cancelled', 'cancelled', now);
      case 'shutdown':
        // A release spends no attempt and is due at once.
        maxAttempts += 1;
        wait('retrying', 'worker_shutdown', now, now);
        break;
      case 'crash':
      case 'freeze': {
        // No renewal after the claim: the lease lapses LEASE_MS after it, and the first
        // reaper pass strictly after that rescues the job. It spends the attempt: retried at
        // once, or dead with none left or once past expiresAt (nothing aborted the attempt:
        // its worker is gone); lease_expired either way.
        const rescuedAt = now + LEASE_MS + REAPER_MS;
        if (attempt >= maxAttempts || (expiresAtMs !== null && expiresAtMs <= rescuedAt)) return end('dead', 'lease_expired', rescuedAt);
        wait('retrying', 'lease_expired', rescuedAt, rescuedAt);
        // Due at once, but a rescue wakes no claimer, and the polls of that moment came before
        // the reaper's pass: the next poll takes it.
        claimAtMs = rescuedAt + POLL_MS;
        break;
      }
    }
    if (fate) return fate;
  }
}
