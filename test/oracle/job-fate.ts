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
 * Durable jobs (docs/durable-jobs.md, again not the machine): the handler may run a program
 * of durable calls before it does what its script says: steps (each run of a step's fn
 * counted), sleeps and waits for a signal; signals are sent from outside at given times.
 * `fateOf` then also states the steps stored, how many times each step's fn ran, and what
 * each `sendSignal` answered.
 *
 * Time is a grid the driver keeps exact (fate-driver.ts): the job is enqueued at 0; a claim
 * comes exactly when the job is due; a handler answers at once, except one that hangs (its
 * attempt ends at the deadline); delays, deadlines, snoozes, sleeps, timeouts and signals are
 * whole seconds; `expiresAt` falls half-way between seconds, so it never ties with a claim or
 * a deadline. At one moment, the claims of that moment (and the runs they start) come first,
 * then the reaper's pass, then the signals sent then, in order, each answered (and the claim
 * a woken job's NOTIFY brings, with its run) before the next is sent.
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

/** One durable call of the handler's program (the same code on every run; names unique). */
export type DurableOp =
  /** `job.step(name, fn)`: fn counts a run and returns the number of the handler call that
   *  ran it. `fault`: the first time fn runs, its worker's process dies (`crash`) or freezes
   *  (`freeze`, a zombie whose checkpoint is sent once the next attempt starts) after fn's
   *  side effect, before its result is stored. */
  | { op: 'step'; name: string; fault?: 'crash' | 'freeze' }
  /** `job.sleep(name, ms)`. */
  | { op: 'sleep'; name: string; ms: number }
  /** `job.waitForSignal(name, { timeoutMs })`; null: no timeout. */
  | { op: 'wait'; name: string; timeoutMs: number | null };

/** `sendSignal(store, job, name, payload)` at `atMs` after the enqueue. */
export interface SignalSend {
  atMs: number;
  name: string;
  payload: number;
}

/** One entry of the row's `steps`, times in ms after the enqueue. */
export type StoredCall =
  | { kind: 'step'; name: string; atMs: number; result: number }
  | { kind: 'sleep'; name: string; atMs: number; untilMs: number }
  | { kind: 'signal'; name: string; atMs: number; status: 'waiting' | 'received' | 'timedOut'; payload: number | null; untilMs: number | null };

/** What `sendSignal` answered: woke the job, kept it in its mailbox, or JobEndedError. */
export type SignalAnswer = 'woke' | 'queued' | 'ended';

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
  /** The row's runAt, ms after the enqueue: when it was last due (Infinity: never, a wait with
   *  no timeout). */
  runAtMs: number;
  /** The completed job's result. */
  result: number | null;
  history: FateRow[];
  /** How many times the handler was called. */
  calls: number;
  /** The row's stored durable calls, in order. */
  steps: StoredCall[];
  /** How many times each step's fn ran, by name. */
  stepRuns: Record<string, number>;
  /** What each signal's send answered, in the order sent. */
  signals: SignalAnswer[];
}

/** A handler past the end of its script returns this. A handler's script is consumed by the
 *  runs that get past its program (a run that sleeps or waits does not reach it). */
export const DEFAULT_ACTION: HandlerAction = { do: 'resolve', value: 0 };

export function fateOf(
  options: JobOptions,
  script: readonly HandlerAction[],
  program: readonly DurableOp[] = [],
  sends: readonly SignalSend[] = [],
): Fate {
  const { deadlineMs, expiresAtMs } = options;
  let maxAttempts = options.maxAttempts;
  let attempt = 0;
  let state: JobState = 'pending';
  let runAtMs = 0;
  /** When the next claim comes: when the row is due, but for a rescued job (below). */
  let claimAtMs = 0;
  let calls = 0;
  /** Runs that got past the program: the script's next action. */
  let ends = 0;
  const history: FateRow[] = [{ from: null, to: 'pending', attempt: 0, code: null, atMs: 0 }];
  const steps: StoredCall[] = [];
  const stepRuns: Record<string, number> = {};
  /** Steps whose fault has happened (once each). */
  const faulted = new Set<string>();
  /** The signals in the order they are sent; `next`: the first not sent yet. */
  const outbox = [...sends].sort((a, b) => a.atMs - b.atMs);
  let next = 0;
  /** The job's mailbox: signals kept, oldest first. */
  const mailbox: SignalSend[] = [];
  const answers: SignalAnswer[] = [];
  /** While sleeping for a signal: its name. */
  let waitingFor: string | null = null;

  /** While the job runs, until `atMs`: every signal sent meanwhile is kept. */
  const keepWhileRunning = (atMs: number) => {
    if (state !== 'running') return;
    for (; next < outbox.length && outbox[next]!.atMs < atMs; next++) {
      mailbox.push(outbox[next]!);
      answers.push('queued');
    }
  };
  const fate = (code: string | null, result: number | null): Fate => ({
    state, code, attempt, maxAttempts, runAtMs, result, history, calls, steps, stepRuns, signals: answers,
  });
  const end = (to: JobState, code: string | null, atMs: number, result: number | null = null): Fate => {
    keepWhileRunning(atMs);
    history.push({ from: state, to, attempt, code, atMs });
    state = to;
    // Every signal after the end is refused: the job has ended.
    for (; next < outbox.length; next++) answers.push('ended');
    return fate(code, result);
  };
  /** The row waits again, due at `due`. */
  const wait = (to: 'pending' | 'retrying' | 'sleeping', code: string, atMs: number, due: number) => {
    keepWhileRunning(atMs);
    history.push({ from: state, to, attempt, code, atMs });
    state = to;
    runAtMs = due;
    claimAtMs = due;
  };
  /** While the job waits (not running), the signals sent before its claim: each is kept, and
   *  one it sleeps for wakes it, to be claimed at once (the NOTIFY). Stops at expiresAt. */
  const deliverWhileWaiting = () => {
    while (next < outbox.length && outbox[next]!.atMs < claimAtMs) {
      const sent = outbox[next]!;
      if (expiresAtMs !== null && expiresAtMs < sent.atMs) return;
      next += 1;
      mailbox.push(sent);
      if (state === 'sleeping' && waitingFor === sent.name) {
        answers.push('woke');
        waitingFor = null;
        wait('pending', 'signal', sent.atMs, sent.atMs);
        return;
      }
      answers.push('queued');
    }
  };
  /** The latest stored entry of a name (a later one supersedes: a wait that ended). */
  const storedOf = (name: string) => steps.findLast((entry) => entry.name === name);
  /** A sleep or wait that sleeps: no attempt spent (one more allowed), the row due at `until`. */
  const suspend = (code: 'sleep' | 'signal_wait', now: number, until: number, signal: string | null) => {
    maxAttempts += 1;
    waitingFor = signal;
    wait('sleeping', code, now, until);
  };
  /** The handler's durable calls, replayed from what is stored, at `now`. */
  const runProgram = (now: number): 'done' | 'suspended' | 'crashed' => {
    for (const op of program) {
      const stored = storedOf(op.name);
      if (op.op === 'step') {
        if (stored) continue;
        stepRuns[op.name] = (stepRuns[op.name] ?? 0) + 1;
        if (op.fault && !faulted.has(op.name)) {
          faulted.add(op.name);
          return 'crashed';
        }
        steps.push({ kind: 'step', name: op.name, atMs: now, result: calls });
      } else if (op.op === 'sleep') {
        const until = stored?.kind === 'sleep' ? stored.untilMs : now + op.ms;
        // A stored sleep whose end the claim has reached is over: nothing written.
        if (stored && until <= now) continue;
        steps.push({ kind: 'sleep', name: op.name, atMs: now, untilMs: until });
        if (until > now) {
          suspend('sleep', now, until, null);
          return 'suspended';
        }
      } else {
        if (stored?.kind === 'signal' && stored.status !== 'waiting') continue;
        // A wait that slept resumes with the timeout it had.
        const until = stored?.kind === 'signal' ? (stored.untilMs ?? Infinity) : op.timeoutMs === null ? Infinity : now + op.timeoutMs;
        const kept = mailbox.findIndex((sent) => sent.name === op.name);
        if (kept >= 0) {
          const [taken] = mailbox.splice(kept, 1);
          steps.push({ kind: 'signal', name: op.name, atMs: now, status: 'received', payload: taken!.payload, untilMs: null });
        } else if (until <= now) {
          steps.push({ kind: 'signal', name: op.name, atMs: now, status: 'timedOut', payload: null, untilMs: until });
        } else {
          steps.push({ kind: 'signal', name: op.name, atMs: now, status: 'waiting', payload: null, untilMs: until === Infinity ? null : until });
          suspend('signal_wait', now, until, op.name);
          return 'suspended';
        }
      }
    }
    return 'done';
  };

  for (;;) {
    deliverWhileWaiting();
    // Waiting past its expiresAt: the reaper ends it, attempts left or not.
    if (expiresAtMs !== null && expiresAtMs < claimAtMs) return end('dead', 'expired', expiresAtMs);
    // Waiting for a signal that none of the sends brings, with no timeout: it sleeps on.
    if (claimAtMs === Infinity) return fate(null, null);
    const now = claimAtMs;
    attempt += 1;
    history.push({ from: state, to: 'running', attempt, code: null, atMs: now });
    state = 'running';
    calls += 1;
    const ran = runProgram(now);
    if (ran === 'suspended') continue;
    const action: HandlerAction = ran === 'crashed' ? { do: 'crash' } : (script[ends++] ?? DEFAULT_ACTION);
    /** A failure: retried after the backoff while attempts are left, else dead. */
    const fail = (code: string, atMs: number): Fate | undefined => {
      if (attempt >= maxAttempts) return end('dead', code, atMs);
      wait('retrying', code, atMs, atMs + backoffMs(attempt));
      return undefined;
    };
    let ended: Fate | undefined;
    switch (action.do) {
      case 'resolve':
        return end('completed', null, now, action.value);
      case 'throw':
        ended = fail('handler_error', now);
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
        ended = fail('deadline_exceeded', now + deadlineMs);
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
        // its worker is gone); lease_expired either way. A step's fault is one of these: its
        // result is never stored (a zombie's checkpoint is refused).
        const rescuedAt = now + LEASE_MS + REAPER_MS;
        if (attempt >= maxAttempts || (expiresAtMs !== null && expiresAtMs <= rescuedAt)) return end('dead', 'lease_expired', rescuedAt);
        wait('retrying', 'lease_expired', rescuedAt, rescuedAt);
        // Due at once, but a rescue wakes no claimer, and the polls of that moment came before
        // the reaper's pass: the next poll takes it.
        claimAtMs = rescuedAt + POLL_MS;
        break;
      }
    }
    if (ended) return ended;
  }
}
