/**
 * The supervisor's options: what each means, its default, and the checks that refuse bad ones
 * before anything starts.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import type { InspectionEvent, Observer } from 'xstate';
import type { JobStore } from '../adapters/store.js';
import { InvalidOptionError } from '../errors.js';
import type { Queue } from '../queue.js';
import type { Schedule } from '../schedule.js';
import type { Clock, Logger } from '../types.js';
import { monotonicClock } from '../types.js';
import { assertName, assertPositiveInt, assertStorableString, assertTimerMs, MAX_TIMER_MS } from '../validation.js';
import type { DeadJobSink } from './alerts.js';
import { containedLogger } from './contained-logger.js';

/** The supervisor's clock: it measures durations (leases, deadlines, throttles) and drives
 *  the machines' timers. It never decides a time the store writes: those are the database's
 *  (RELIABILITY.md, the clock model). XState's `SimulatedClock` fits, and then every timer
 *  (heartbeat, deadline, poll, reaper, grace) follows it in tests. */
export interface SupervisorClock extends Clock {
  setTimeout?(fn: (...args: any[]) => void, timeout: number): any;
  clearTimeout?(id: any): void;
}

export interface SupervisorOptions {
  store: JobStore;
  queues: readonly Queue<any>[];
  /** `start()` migrates the store's schema first (`store.migrate()`: safe from many processes
   *  at once, one applies and the others wait). Default false: the schema is checked, and one
   *  that lacks a migration is refused (SchemaVersionError). */
  migrate?: boolean;
  /** Recurring jobs (defineSchedule): each due tick is enqueued once across every supervisor
   *  running the schedule. Default none. */
  schedules?: readonly Schedule[];
  /** Named gates shared by queues: name → how many of their jobs run at once. Default none. */
  gates?: Record<string, number>;
  /** Jobs running at once across all queues. Default: the sum of the queues' concurrency. */
  concurrency?: number;
  /** Written on every claim and history row. Default `<hostname>:<pid>:<random>`. */
  workerId?: string;
  /** A pino logger, or anything with debug/info/warn/error. Default pino at `warn`: warnings
   *  and errors only, quiet as a library should be (`silent` under a test runner, i.e. when
   *  VITEST or NODE_ENV=test is set). */
  logger?: Logger;
  /** Default `monotonicClock`: durations that a change of the system time cannot stretch or
   *  shrink. Pass XState's SimulatedClock in tests. */
  clock?: SupervisorClock;
  /** Randomness in [0, 1) for the jitter of every queue's default backoff (a queue with a
   *  `backoff` of its own keeps it). Default Math.random; the testing helpers pass `() => 0.5`,
   *  so that two test runs retry at the same times. */
  random?: () => number;
  /** Wait between claims when idle and no notification came. Default 1,000 ms. */
  pollIntervalMs?: number;
  /** Period of the reaper that rescues expired leases. Default 30,000 ms. */
  reaperIntervalMs?: number;
  /** First wait after the store failed a claim; doubles per failure. Default 1,000 ms. */
  errorBackoffMs?: number;
  /** Longest wait after repeated store failures. Default 30,000 ms. */
  maxErrorBackoffMs?: number;
  /** Wait before a failed outcome write (store down) is tried again. Default 1,000 ms. */
  writeRetryMs?: number;
  /** Claim ahead, per queue, about as many jobs as this process's slots free in this many ms
   *  (measured), so that a slot need not wait for a claim's round trip. Slow queues get no
   *  prefetch. The larger the window, the more jobs a claim and an outcome write carry; a
   *  job enqueued behind those held waits up to the window. 0 = claim only for free slots.
   *  Default 500 ms (docs/performance.md says why). */
  prefetchWindowMs?: number;
  /** Most jobs of one queue held claimed ahead of a free slot. 0 = none. Default 1,000
   *  (docs/performance.md says why). */
  maxPrefetch?: number;
  /** Called once per job that goes dead. Default: none (the logger still warns). */
  onDead?: DeadJobSink;
  /** The same dedupe key alerts at most once per window. Default 3,600,000 ms (one hour). */
  alertThrottleMs?: number;
  /** A job's progress reports are written at most once per this many ms, the last winning.
   *  Default 1,000 ms. */
  progressIntervalMs?: number;
  /** XState's `inspect` observer, given to the supervisor and every job actor
   *  (e.g. `@statelyai/inspect`). Default none. */
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
}

export interface StopOptions {
  /** How long running jobs may go on after stop() before their handlers are aborted and
   *  their rows released for retry. Default 30,000 ms. */
  graceMs?: number;
  /** After the grace period, how long stop() waits for the store's answers still due: the
   *  released jobs' writes, a claim on its way, the worker's row removed. Past it, stop()
   *  resolves with a warning, and those jobs' rows stay `running` until their leases end,
   *  when the reaper gives them back. Default 30,000 ms. */
  storeWaitMs?: number;
}

export const DEFAULTS = {
  pollIntervalMs: 1_000,
  reaperIntervalMs: 30_000,
  errorBackoffMs: 1_000,
  maxErrorBackoffMs: 30_000,
  writeRetryMs: 1_000,
  prefetchWindowMs: 500,
  maxPrefetch: 1_000,
  alertThrottleMs: 3_600_000,
  progressIntervalMs: 1_000,
  graceMs: 30_000,
  storeWaitMs: 30_000,
};

export type ResolvedOptions = ReturnType<typeof resolveOptions>;

/** Every option's name: another (a typo, a queue's option) is refused, not ignored. */
const OPTION_NAMES: ReadonlySet<string> = new Set<keyof SupervisorOptions>([
  'store', 'queues', 'migrate', 'schedules', 'gates', 'concurrency', 'workerId', 'logger', 'clock', 'pollIntervalMs', 'reaperIntervalMs',
  'errorBackoffMs', 'maxErrorBackoffMs', 'writeRetryMs', 'prefetchWindowMs', 'maxPrefetch', 'onDead', 'alertThrottleMs',
  'progressIntervalMs', 'inspect', 'random',
]);

/** Options of defineQueue that a caller may put here by mistake. */
const QUEUE_OPTION_NAMES: ReadonlySet<string> = new Set([
  'handlers', 'gate', 'maxAttempts', 'leaseMs', 'heartbeatMs', 'deadlineMs', 'backoff', 'alertKey', 'maxPayloadBytes', 'perKeyConcurrency', 'rateLimit',
]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function assertFunction(what: string, value: unknown, shape: string): void {
  if (value !== undefined && typeof value !== 'function') throw new InvalidOptionError(what, `must be a function ${shape}, got ${describe(value)}`);
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : value === null ? 'null' : typeof value;
}

const STOP_OPTION_NAMES = ['graceMs', 'storeWaitMs'] as const;

/** stop()'s options with their defaults; throws InvalidOptionError naming what is wrong. */
export function resolveStopOptions(options: unknown): Required<StopOptions> {
  if (options === undefined) options = {};
  if (!isObject(options)) throw new InvalidOptionError('stop', `takes an object of options ({ graceMs, storeWaitMs }), got ${describe(options)}`);
  for (const key of Object.keys(options)) {
    if (!(STOP_OPTION_NAMES as readonly string[]).includes(key)) throw new InvalidOptionError(key, `is not an option of stop() (they are ${STOP_OPTION_NAMES.join(', ')})`);
  }
  const resolved = { graceMs: options.graceMs ?? DEFAULTS.graceMs, storeWaitMs: options.storeWaitMs ?? DEFAULTS.storeWaitMs };
  for (const name of STOP_OPTION_NAMES) {
    const ms = resolved[name];
    if (!(typeof ms === 'number' && Number.isFinite(ms) && ms >= 0 && ms <= MAX_TIMER_MS)) {
      throw new InvalidOptionError(name, `must be a number of ms from 0 to ${MAX_TIMER_MS}, got ${typeof ms === 'number' ? ms : describe(ms)}`);
    }
  }
  return resolved as Required<StopOptions>;
}

export function resolveOptions(options: SupervisorOptions) {
  if (!isObject(options)) throw new InvalidOptionError('options', `must be an object, got ${describe(options)}`);
  if (!isObject(options.store) || typeof options.store.claimJobs !== 'function') {
    throw new InvalidOptionError('store', `is required: a store (memoryStore, pgliteStore, postgresStore), got ${describe(options.store)}`);
  }
  if (options.random !== undefined && typeof options.random !== 'function') {
    throw new InvalidOptionError('random', 'must be a function returning a number in [0, 1)');
  }
  // The supervisor knows nothing of the inspector; the inspector observes it from outside.
  if ('inspector' in options) {
    throw new InvalidOptionError('inspector', 'is no longer a supervisor option: start it beside the supervisor with startInspector({ store, supervisor }) from jobvisor/inspector');
  }
  for (const key of Object.keys(options)) {
    if (OPTION_NAMES.has(key)) continue;
    const hint = QUEUE_OPTION_NAMES.has(key) ? 'is a queue option: give it to defineQueue'
      : key === 'graceMs' || key === 'storeWaitMs' ? `is an option of stop(): supervisor.stop({ ${key} })`
      : `is not a supervisor option (they are ${[...OPTION_NAMES].join(', ')})`;
    throw new InvalidOptionError(key, hint);
  }
  if (options.migrate !== undefined && typeof options.migrate !== 'boolean') {
    throw new InvalidOptionError('migrate', `must be true or false, got ${describe(options.migrate)}`);
  }
  if (!Array.isArray(options.queues) || options.queues.length === 0) {
    throw new InvalidOptionError('queues', 'must name at least one queue (defineQueue)');
  }
  const names = new Set<string>();
  options.queues.forEach((q: unknown, i) => {
    if (!isObject(q) || typeof q.name !== 'string' || !isObject(q.settings) || typeof q.alertKey !== 'function') {
      throw new InvalidOptionError(`queues[${i}]`, `must be a queue made by defineQueue, got ${describe(q)}`);
    }
    if (names.has(q.name)) throw new InvalidOptionError('queues', `queue "${q.name}" is given twice`);
    names.add(q.name);
  });
  if (options.schedules !== undefined && !Array.isArray(options.schedules)) {
    throw new InvalidOptionError('schedules', `must be an array of schedules (defineSchedule), got ${describe(options.schedules)}`);
  }
  const scheduleNames = new Set<string>();
  (options.schedules ?? []).forEach((schedule: unknown, i) => {
    if (!isObject(schedule) || typeof schedule.name !== 'string') {
      throw new InvalidOptionError(`schedules[${i}]`, `must be a schedule made by defineSchedule, got ${describe(schedule)}`);
    }
    if (scheduleNames.has(schedule.name)) throw new InvalidOptionError('schedules', `schedule "${schedule.name}" is given twice`);
    scheduleNames.add(schedule.name);
  });
  if (options.gates !== undefined && (!isObject(options.gates) || Array.isArray(options.gates))) {
    throw new InvalidOptionError('gates', `must be an object of gate name → size, got ${describe(options.gates)}`);
  }
  assertFunction('onDead', options.onDead, '(alert) => void');
  if (options.inspect !== undefined && typeof options.inspect !== 'function' && !isObject(options.inspect)) {
    throw new InvalidOptionError('inspect', `must be an XState inspection observer (a function or { next }), got ${describe(options.inspect)}`);
  }
  if (options.clock !== undefined) {
    if (!isObject(options.clock) || typeof options.clock.now !== 'function') {
      throw new InvalidOptionError('clock', `must have now(), as monotonicClock or XState's SimulatedClock, got ${describe(options.clock)}`);
    }
    if ((options.clock.setTimeout === undefined) !== (options.clock.clearTimeout === undefined)) {
      throw new InvalidOptionError('clock', 'must have both setTimeout() and clearTimeout(), or neither');
    }
    assertFunction('clock.setTimeout', options.clock.setTimeout, '(fn, ms) => id');
    assertFunction('clock.clearTimeout', options.clock.clearTimeout, '(id) => void');
  }
  const gates = options.gates ?? {};
  for (const [name, size] of Object.entries(gates)) {
    assertName('gate name', name);
    assertPositiveInt(`gates.${name}`, size);
  }
  for (const q of options.queues) {
    const gate = q.settings.gate;
    if (gate !== undefined && !(gate in gates)) {
      throw new InvalidOptionError(`queue "${q.name}" gate`, `gate "${gate}" is not declared in the supervisor's gates`);
    }
  }
  const concurrency = options.concurrency ?? options.queues.reduce((sum, q) => sum + q.settings.concurrency, 0);
  assertPositiveInt('concurrency', concurrency);
  const timer = (key: Exclude<keyof typeof DEFAULTS, 'graceMs' | 'storeWaitMs' | 'prefetchWindowMs' | 'maxPrefetch' | 'alertThrottleMs'>) => {
    const value = options[key] ?? DEFAULTS[key];
    assertTimerMs(key, value);
    return value;
  };
  const nonNegative = (key: 'prefetchWindowMs' | 'maxPrefetch') => {
    const value = options[key] ?? DEFAULTS[key];
    if (!Number.isInteger(value) || value < 0) throw new InvalidOptionError(key, `must be an integer >= 0, got ${String(value)}`);
    return value;
  };
  if (options.workerId !== undefined) assertStorableString('workerId', options.workerId);
  // Not a timer: compared with the clock, so it may be longer than one can wait.
  const alertThrottleMs = options.alertThrottleMs ?? DEFAULTS.alertThrottleMs;
  assertPositiveInt('alertThrottleMs', alertThrottleMs);
  const errorBackoffMs = timer('errorBackoffMs');
  const maxErrorBackoffMs = timer('maxErrorBackoffMs');
  if (maxErrorBackoffMs < errorBackoffMs) {
    throw new InvalidOptionError('maxErrorBackoffMs', `must be at least errorBackoffMs (${errorBackoffMs}), got ${maxErrorBackoffMs}`);
  }
  return {
    gates,
    concurrency,
    workerId: options.workerId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
    logger: options.logger === undefined ? defaultLogger() : containedLogger(options.logger),
    clock: options.clock ?? monotonicClock,
    random: options.random,
    pollIntervalMs: timer('pollIntervalMs'),
    reaperIntervalMs: timer('reaperIntervalMs'),
    errorBackoffMs,
    maxErrorBackoffMs,
    writeRetryMs: timer('writeRetryMs'),
    progressIntervalMs: timer('progressIntervalMs'),
    prefetch: { windowMs: nonNegative('prefetchWindowMs'), max: nonNegative('maxPrefetch') },
    alertThrottleMs,
  };
}

function defaultLogger(): Logger {
  const underTest = process.env.VITEST !== undefined || process.env.NODE_ENV === 'test';
  return pino({ name: 'jobvisor', level: underTest ? 'silent' : 'warn' });
}

