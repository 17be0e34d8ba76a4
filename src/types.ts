/**
 * Terminology
 *
 * - job: one row in the store: a queue, a kind, a JSON payload and a state.
 * - queue: a named stream of jobs with its own concurrency and retry policy; handlers are
 *   registered per queue and kind.
 * - kind: what a job does inside its queue; selects the handler.
 * - attempt: one claim of a job by a worker. `attempt` counts claims, starting at 1.
 * - lease: the right to write an attempt's outcome. A claim sets a fresh lease token and an
 *   expiry; heartbeats push the expiry forward. Every write names the token and applies only
 *   while the row is still `running` under it (fencing), so a zombie can never overwrite.
 * - job actor: the XState actor that runs one attempt (src/machines/job-machine.ts).
 * - supervisor: the one actor per process that claims jobs and spawns job actors.
 * - reaper: the supervisor's periodic rescue of jobs whose lease expired (worker gone).
 * - gate: a named concurrency limit shared by several queues (e.g. one GPU job at a time).
 */

/** The states a job row can be in. `lost` exists only in the machine: it writes nothing.
 *  `sleeping`: the handler slept or waits for a signal (docs/durable-jobs.md): no lease, no
 *  slot; claimable again at `runAt` (the sleep's end, the wait's timeout) or when the signal
 *  comes.
 *  `waiting`: the job waits for other jobs (its parents in a flow, or the children it added
 *  before asking to continue): not claimable until the last of them ends (src/flows). */
export const JOB_STATES = [
  'pending',
  'running',
  'retrying',
  'completed',
  'dead',
  'skipped',
  'cancelled',
  'waiting',
  'sleeping',
] as const;
export type JobState = (typeof JOB_STATES)[number];

/** Terminal row states: a job in one of these never runs again unless retried by hand. */
export const FINAL_JOB_STATES: readonly JobState[] = ['completed', 'dead', 'skipped', 'cancelled'];

/** What a failure leaves on the row and in the history. */
export interface JobErrorInfo {
  /** A stable machine-readable code: `handler_error`, `deadline_exceeded`, `unknown_kind` … */
  code: string;
  message: string;
  /** The error's class name, when it was an Error. */
  name?: string;
  stack?: string;
}

export type JsonValue =
  | string
  | number
  | boolean
  | null
  | JsonValue[]
  | { [key: string]: JsonValue | undefined };

/** A job as the store holds it. */
export interface JobRecord<P = unknown, R = unknown> {
  id: string;
  queue: string;
  kind: string;
  payload: P;
  state: JobState;
  priority: number;
  runAt: Date;
  /** Claims so far; the running attempt's number while `running`. */
  attempt: number;
  maxAttempts: number;
  uniqueKey: string | null;
  /** Jobs sharing it run at most their queue's `perKeyConcurrency` at once, across workers. */
  concurrencyKey: string | null;
  workerId: string | null;
  leaseToken: string | null;
  leaseExpiresAt: Date | null;
  result: R | null;
  error: JobErrorInfo | null;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
  /** The deadline across all attempts (schedule-to-close): at it the job is dead, whatever
   *  attempts remain. null = none. */
  expiresAt: Date | null;
  /** When a cancel was asked for while the job ran: its worker aborts the attempt and writes
   *  `cancelled`. */
  cancelRequestedAt: Date | null;
  /** The last progress a handler reported, in any attempt. */
  progress: JobProgress | null;
  /** The enqueue span's trace context (W3C `traceparent` …), when tracing was on. */
  traceContext: Record<string, string> | null;
  /** What the handler's steps, sleeps and signal waits stored, in order, across attempts
   *  (docs/durable-jobs.md). A later entry of a name supersedes an earlier one. */
  steps: JobStep[];
  /** While `sleeping` for a signal: its name. */
  waitingForSignal: string | null;
  /** On a queue with `fairShare`: the tenant it was enqueued for (null: the default tenant, or
   *  a job enqueued without `fairShare`). */
  tenant: string | null;
  /** A debounced job's key (`debounce.key`): until the job is first claimed, enqueues with it
   *  join its burst and move its `runAt`, which is when it runs. */
  debounceKey: string | null;
}

/** One stored entry of a durable job (docs/durable-jobs.md): a step's result, a sleep, or a
 *  wait for a signal (while it waits, and how it ended). `at`: when it was stored. */
export type JobStep =
  | { kind: 'step'; name: string; at: Date; result: unknown }
  | { kind: 'sleep'; name: string; at: Date; until: Date }
  | {
      kind: 'signal';
      name: string;
      at: Date;
      /** The signal's name (the step's name without its `#n`). */
      signal: string;
      status: 'waiting' | 'received' | 'timedOut';
      /** The wait's timeout; null: none (or a received signal). */
      until: Date | null;
      /** A received signal's payload. */
      payload?: unknown;
    };

/** How a wait for a signal ended: its payload, or its timeout. */
export type SignalResult<T = unknown> = { received: true; payload: T } | { received: false };

export interface SignalWaitOptions {
  /** Give up after this long (the store's clock): `{ received: false }`. Default: no timeout. */
  timeoutMs?: number;
}

/** What a handler reported with `job.progress(percent, message)`, and when it was stored. */
export interface JobProgress {
  /** 0 to 100. */
  percent: number;
  message: string | null;
  at: Date;
}

/** A job handed to a worker: the row as claimed, with its lease. */
export interface ClaimedJob<P = unknown> extends JobRecord<P> {
  state: 'running';
  workerId: string;
  leaseToken: string;
  leaseExpiresAt: Date;
}

/** One appended row of a job's transition history. */
export interface JobEvent {
  jobId: string;
  /** null for the enqueue that created the job. */
  fromState: JobState | null;
  toState: JobState;
  attempt: number;
  workerId: string | null;
  at: Date;
  error: JobErrorInfo | null;
}

/** Time as the library sees it; tests inject a simulated one. */
export interface Clock {
  now(): number;
}

/** The wall clock: for what is stored or shown as a date. Steps when the system time is set. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock no one sets: milliseconds that only move forward at the rate of real time, on the
 *  scale of the wall clock at the process's start (performance.timeOrigin + performance.now()).
 *  Differences of `now()` are true durations whatever happens to the system time; the
 *  supervisor measures every duration (leases, timers, throttles) on it. */
export const monotonicClock: Clock = { now: () => performance.timeOrigin + performance.now() };

/** The subset of a pino logger that jobvisor calls. Any pino logger fits. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
