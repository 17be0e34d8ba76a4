import type { EnqueueJob } from './adapters/store.js';
import { InvalidOptionError, InvalidPayloadError } from './errors.js';

/** Queue and kind names: what a CLI argument, a log line and a URL can carry unescaped. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

export function assertName(what: string, value: unknown): asserts value is string {
  if (typeof value !== 'string' || !NAME.test(value)) {
    throw new InvalidOptionError(
      what,
      `must be 1-128 characters of letters, digits, "_", ".", ":" or "-", starting with a letter or digit; got ${JSON.stringify(value)}`,
    );
  }
}

export function assertPositiveInt(what: string, value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new InvalidOptionError(what, `must be a positive integer, got ${String(value)}`);
  }
}

export function assertNonNegativeNumber(what: string, value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidOptionError(what, `must be a finite number >= 0, got ${String(value)}`);
  }
}

/** The most attempts a job may have: far below the column's 2^31 - 1, so that the attempt a
 *  snooze or a shutdown release gives back can never overflow it. */
export const MAX_ATTEMPTS = 1_000_000;

export function assertMaxAttempts(what: string, value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_ATTEMPTS) {
    throw new InvalidOptionError(what, `must be an integer from 1 to ${MAX_ATTEMPTS}, got ${String(value)}`);
  }
}

/** A job's priority: the store's 32-bit integer column. */
export function assertPriority(value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < -2_147_483_648 || value > 2_147_483_647) {
    throw new InvalidOptionError('priority', `must be an integer from -2147483648 to 2147483647, got ${String(value)}`);
  }
}

/** Years 1 to 9999: what every store, and an ISO 8601 string, can hold. */
export const EARLIEST_DATE = Date.parse('0001-01-01T00:00:00.000Z');
export const LATEST_DATE = Date.parse('9999-12-31T23:59:59.999Z');

/** A time a job row keeps (`runAt`, `expiresAt`). */
export function assertStorableDate(what: string, value: unknown): asserts value is Date {
  assertValidDate(what, value);
  const t = value.getTime();
  if (t < EARLIEST_DATE || t > LATEST_DATE) {
    throw new InvalidOptionError(what, `must be in the years 1 to 9999, got ${value.toISOString()}`);
  }
}

export function assertValidDate(what: string, value: unknown): asserts value is Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    throw new InvalidOptionError(what, `must be a valid Date, got ${String(value)}`);
  }
}

/** The longest delay a timer can wait: past 2^31 - 1 ms (about 24.8 days) Node's setTimeout
 *  fires after 1 ms instead, so a longer deadline or heartbeat would fire at once. */
export const MAX_TIMER_MS = 2_147_483_647;

/** A delay that drives a timer: a positive integer a timer can wait. */
export function assertTimerMs(what: string, value: unknown): asserts value is number {
  assertPositiveInt(what, value);
  if (value > MAX_TIMER_MS) {
    throw new InvalidOptionError(what, `must be at most ${MAX_TIMER_MS} ms (about 24.8 days), the longest a timer can wait; got ${value}`);
  }
}

/** At least two: while a supervisor listens for wake-ups it holds one of them. */
const MIN_POOL_SIZE = 2;
const MAX_POOL_SIZE = 1000;

/** The number of connections a store's own pool may open. */
export function assertPoolSize(what: string, value: unknown): asserts value is number {
  if (!Number.isSafeInteger(value) || (value as number) < MIN_POOL_SIZE || (value as number) > MAX_POOL_SIZE) {
    throw new InvalidOptionError(
      what,
      `must be an integer from ${MIN_POOL_SIZE} (one connection listens for wake-ups) to ${MAX_POOL_SIZE}; got ${String(value)}`,
    );
  }
}

/** A string the store can hold as text and in jsonb: no NUL character (PostgreSQL refuses it)
 *  and no lone UTF-16 surrogate (jsonb refuses it; text would silently replace it). */
const UNSTORABLE_CHARACTER = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_CHARACTERS = new RegExp(UNSTORABLE_CHARACTER.source, 'g');

export function storableStringIssue(value: string): string | undefined {
  const found = UNSTORABLE_CHARACTER.exec(value);
  if (!found) return undefined;
  return found[0] === '\0' ? 'holds a NUL character (\\u0000)' : 'holds a lone UTF-16 surrogate (not valid Unicode)';
}

/** `value` with each NUL and lone surrogate replaced by U+FFFD: for text that must be
 *  stored whatever it holds (an error message, a stack). */
export function toStorableString(value: string): string {
  return value.replace(UNSTORABLE_CHARACTERS, '\uFFFD');
}

/** Longest unique or concurrency key, in bytes of UTF-8. The store indexes each with its
 *  queue name, and an index row holds at most about 2,700 bytes: a longer key would fail the
 *  claims that index it (every claim of the worker) or the enqueue itself. The store refuses
 *  longer ones too (a CHECK constraint, migration 0005). */
export const MAX_KEY_BYTES = 1_000;

/** A unique or concurrency key: a storable string of at most MAX_KEY_BYTES bytes. */
export function assertKey(what: string, value: unknown): asserts value is string {
  assertStorableString(what, value);
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_KEY_BYTES) {
    throw new InvalidOptionError(what, `is ${bytes} bytes of UTF-8, over the limit of ${MAX_KEY_BYTES} (the store indexes it)`);
  }
}

export function assertStorableString(what: string, value: unknown): asserts value is string {
  if (typeof value !== 'string' || value.length === 0) throw new InvalidOptionError(what, 'must be a non-empty string');
  const issue = storableStringIssue(value);
  if (issue) throw new InvalidOptionError(what, `${issue}, which the store cannot hold`);
}

/** Default largest payload, as JSON text: 1 MiB. */
export const DEFAULT_MAX_PAYLOAD_BYTES = 1_048_576;

/**
 * Checks that a payload survives a JSON round trip unchanged in meaning (see `jsonIssue`) and
 * that its JSON text fits the limit. Returns the byte size.
 */
export function assertJsonPayload(value: unknown, maxBytes: number = DEFAULT_MAX_PAYLOAD_BYTES): number {
  const issue = jsonIssue(value, 'payload');
  if (issue) throw new InvalidPayloadError(issue);
  let text: string | undefined;
  try {
    text = JSON.stringify(value ?? null);
  } catch (error) {
    throw new InvalidPayloadError(`payload cannot be turned into JSON: ${(error as Error).message}`, { cause: error });
  }
  if (text === undefined) throw new InvalidPayloadError('payload turns into nothing in JSON (its toJSON returned undefined)');
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > maxBytes) {
    throw new InvalidPayloadError(`payload is ${bytes} bytes of JSON, over the limit of ${maxBytes}`);
  }
  return bytes;
}

/**
 * What in `value` JSON or PostgreSQL's jsonb cannot hold, naming where (`payload.a[2]`), or
 * undefined when all is well: a BigInt, function, symbol or cycle (JSON.stringify throws on
 * some and silently drops others), NaN or Infinity, a Map or Set (stored as `{}`), a string
 * or key with a NUL or lone surrogate, a toJSON that throws.
 */
export function jsonIssue(value: unknown, path: string): string | undefined {
  try {
    walk(value, path, new Set());
    return undefined;
  } catch (error) {
    if (error instanceof JsonIssue) return error.message;
    return `${path} cannot be read: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * `value` read once into plain JSON data (a deep copy through JSON text), or why it cannot be.
 * What travels on after this holds no getter, toJSON, class or shared reference, so writing it
 * later can neither throw nor differ from what was checked (a handler may change its result
 * after returning it). Never throws, whatever `value` is.
 */
export function toJsonData(value: unknown, path: string): { value: unknown } | { issue: string } {
  if (value === undefined || value === null) return { value: null };
  if (typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) return { value };
  try {
    const issue = jsonIssue(value, path);
    if (issue) return { issue };
    const text = JSON.stringify(value);
    return { value: text === undefined ? null : JSON.parse(text) };
  } catch {
    return { issue: `${path} cannot be read as JSON (it threw while being read)` };
  }
}

class JsonIssue extends Error {}

/** `afterToJson`: `value` is what a toJSON returned, which JSON does not call toJSON on again. */
function walk(value: unknown, path: string, ancestors: Set<object>, afterToJson = false): void {
  switch (typeof value) {
    case 'bigint':
    case 'function':
    case 'symbol':
      throw new JsonIssue(`${path} is a ${typeof value}, which JSON cannot hold`);
    case 'number':
      if (!Number.isFinite(value)) throw new JsonIssue(`${path} is ${value}, which JSON cannot hold`);
      return;
    case 'string': {
      const issue = storableStringIssue(value);
      if (issue) throw new JsonIssue(`${path} ${issue}, which PostgreSQL's jsonb cannot hold`);
      return;
    }
    case 'object': {
      if (value === null) return;
      if (ancestors.has(value)) throw new JsonIssue(`${path} refers back to itself (a cycle)`);
      if (!afterToJson && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
        let json: unknown;
        try {
          json = (value as { toJSON(): unknown }).toJSON();
        } catch (error) {
          throw new JsonIssue(`${path}: its toJSON threw: ${error instanceof Error ? error.message : String(error)}`);
        }
        walk(json, path, ancestors, true);
        return;
      }
      if (value instanceof Map || value instanceof Set || value instanceof WeakMap || value instanceof WeakSet) {
        throw new JsonIssue(`${path} is a ${value.constructor.name}, which JSON would store as {} (its entries lost)`);
      }
      ancestors.add(value);
      if (Array.isArray(value)) {
        value.forEach((item, i) => walk(item, `${path}[${i}]`, ancestors));
      } else {
        for (const [key, item] of Object.entries(value)) {
          const keyIssue = storableStringIssue(key);
          if (keyIssue) throw new JsonIssue(`${path} has a key that ${keyIssue}, which PostgreSQL's jsonb cannot hold`);
          if (item !== undefined) walk(item, `${path}.${key}`, ancestors);
        }
      }
      ancestors.delete(value);
      return;
    }
    default:
      return;
  }
}

/** A job as a store takes it: every name, key, number and time within what every store can
 *  hold, checked before anything is written. The queue's `enqueue` checks the payload too;
 *  a store checks this much itself, for callers of `store.enqueueJobs`. */
export function assertEnqueueJob(job: EnqueueJob): void {
  assertName('queue', job.queue);
  assertName('kind', job.kind);
  if (job.priority !== undefined) assertPriority(job.priority);
  assertMaxAttempts('maxAttempts', job.maxAttempts);
  if (job.runAt !== undefined) assertStorableDate('runAt', job.runAt);
  if (job.runIn !== undefined) {
    if (job.runAt !== undefined) throw new InvalidOptionError('runIn', 'give runAt or runIn, not both');
    assertRelativeMs('runIn', job.runIn, 0);
  }
  if (job.uniqueKey !== undefined && job.uniqueKey !== null) assertKey('uniqueKey', job.uniqueKey);
  if (job.concurrencyKey !== undefined && job.concurrencyKey !== null) assertKey('concurrencyKey', job.concurrencyKey);
  assertKeyedOptions(job);
  if (job.fairShare !== undefined && job.fairShare !== null) {
    if (job.fairShare.tenant !== null) assertKey('tenant', job.fairShare.tenant);
    const { weight } = job.fairShare;
    if (typeof weight !== 'number' || !Number.isFinite(weight) || weight <= 0 || weight > 1_000) {
      throw new InvalidOptionError('fairShare.weight', `must be a number above 0 and at most 1000 (jobs per round), got ${String(weight)}`);
    }
  }
  if (job.expiresIn !== undefined) {
    if (job.expiresAt !== undefined && job.expiresAt !== null) throw new InvalidOptionError('expiresIn', 'give expiresAt or expiresIn, not both');
    assertRelativeMs('expiresIn', job.expiresIn, 1);
  }
  if (job.expiresAt !== undefined && job.expiresAt !== null) {
    assertStorableDate('expiresAt', job.expiresAt);
    if (job.runAt !== undefined && job.expiresAt <= job.runAt) {
      throw new InvalidOptionError('expiresAt', `must be after runAt (${job.runAt.toISOString()}), got ${job.expiresAt.toISOString()}`);
    }
  }
}

const ON_CONFLICT: ReadonlySet<unknown> = new Set(['return', 'replace', 'replaceRunning']);

/** `onConflict` and `debounce`, each on its own and against the options they exclude. */
function assertKeyedOptions(job: EnqueueJob): void {
  if (job.onConflict !== undefined) {
    if (!ON_CONFLICT.has(job.onConflict)) {
      throw new InvalidOptionError('onConflict', `must be "return", "replace" or "replaceRunning", got ${JSON.stringify(job.onConflict) ?? String(job.onConflict)}`);
    }
    if (job.onConflict !== 'return' && (job.uniqueKey === undefined || job.uniqueKey === null)) {
      throw new InvalidOptionError('onConflict', `"${job.onConflict}" needs a uniqueKey: it is what the new job and the live one share`);
    }
  }
  const debounce = job.debounce;
  if (debounce === undefined || debounce === null) return;
  if (typeof debounce !== 'object' || Array.isArray(debounce)) {
    throw new InvalidOptionError('debounce', `must be { key, delayMs, maxWaitMs? }, got ${String(debounce)}`);
  }
  for (const option of Object.keys(debounce)) {
    if (option !== 'key' && option !== 'delayMs' && option !== 'maxWaitMs') {
      throw new InvalidOptionError(`debounce.${option}`, 'is not a debounce option (they are key, delayMs, maxWaitMs)');
    }
  }
  assertKey('debounce.key', debounce.key);
  assertRelativeMs('debounce.delayMs', debounce.delayMs, 0);
  if (debounce.maxWaitMs !== undefined) {
    assertRelativeMs('debounce.maxWaitMs', debounce.maxWaitMs, 0);
    if (debounce.maxWaitMs < debounce.delayMs) {
      throw new InvalidOptionError('debounce.maxWaitMs', `must be at least delayMs (${debounce.delayMs}), got ${debounce.maxWaitMs}`);
    }
  }
  // The burst decides when the job runs, and one job stands for the burst.
  for (const option of ['uniqueKey', 'runAt', 'runIn'] as const) {
    if (job[option] !== undefined && job[option] !== null) {
      throw new InvalidOptionError(option, 'cannot be given with debounce: the burst sets when its one job runs');
    }
  }
  if (job.onConflict !== undefined && job.onConflict !== 'return') {
    throw new InvalidOptionError('onConflict', 'cannot be given with debounce: a burst always rewrites its one job');
  }
}

/** Flows and the children a handler adds take `runAt` and `expiresAt` only: the statements
 *  that write them resolve no time from the store's clock. */
export function assertAbsoluteTimes(where: string, job: EnqueueJob): void {
  for (const option of ['runIn', 'expiresIn'] as const) {
    if (job[option] !== undefined) {
      throw new InvalidOptionError(option, `is not taken ${where}: only enqueue and enqueueMany resolve a time from the store's clock; give ${option === 'runIn' ? 'runAt' : 'expiresAt'}`);
    }
  }
  // Nor what only the keyed enqueue statement does (a flow's jobs are all new, and unranked).
  if (job.fairShare !== undefined && job.fairShare !== null) {
    throw new InvalidOptionError('queue', `"${job.queue}" is defined with fairShare, which jobs ${where} cannot go to yet: enqueue them one by one`);
  }
  if (job.debounce !== undefined && job.debounce !== null) throw new InvalidOptionError('debounce', `is not taken ${where}: only enqueue and enqueueMany debounce`);
  if (job.onConflict !== undefined && job.onConflict !== 'return') {
    throw new InvalidOptionError('onConflict', `is not taken ${where}: only enqueue and enqueueMany replace a live job`);
  }
}

/** The longest `runIn` or `expiresIn`: a hundred years, far inside what every store's times
 *  hold from any now a store has. */
export const MAX_RELATIVE_MS = 3_155_760_000_000;

/** A time relative to the store's now: whole milliseconds, `min` to MAX_RELATIVE_MS. */
function assertRelativeMs(what: string, value: unknown, min: number): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > MAX_RELATIVE_MS) {
    throw new InvalidOptionError(what, `must be a whole number of milliseconds from ${min} to ${MAX_RELATIVE_MS} (a hundred years), got ${String(value)}`);
  }
}

/**
 * A job's runAt and expiresAt as a store stores them, resolved at its `now`: `runIn` and
 * `expiresIn` from it, runAt now by default. Throws InvalidOptionError when expiresAt does not
 * come after that runAt, or a relative time leaves the years 1 to 9999: a check by the
 * store's clock, which the caller's may not agree with. As the SQL stores' refuse_job_times
 * (migration 0014), word for word.
 */
export function resolveJobTimes(job: EnqueueJob, now: Date): { runAt: Date; expiresAt: Date | null } {
  const runAt = job.runAt ?? new Date(now.getTime() + (job.runIn ?? 0));
  const expiresAt = job.expiresIn !== undefined ? new Date(now.getTime() + job.expiresIn) : (job.expiresAt ?? null);
  if (runAt.getTime() > LATEST_DATE) throw new InvalidOptionError('runIn', `gives runAt ${isoTime(runAt)}, outside the years 1 to 9999`);
  if (expiresAt !== null && expiresAt.getTime() > LATEST_DATE) {
    throw new InvalidOptionError('expiresIn', `gives expiresAt ${isoTime(expiresAt)}, outside the years 1 to 9999`);
  }
  if (expiresAt !== null && expiresAt <= runAt) {
    if (job.expiresIn !== undefined) {
      throw new InvalidOptionError('expiresIn', `gives expiresAt ${expiresAt.toISOString()}, not after runAt (${runAt.toISOString()})`);
    }
    throw new InvalidOptionError('expiresAt', `must be after runAt (${runAt.toISOString()}), got ${expiresAt.toISOString()}`);
  }
  return { runAt, expiresAt };
}

/** A time as PostgreSQL's to_char shows it in refuse_job_times: years past 9999 unsigned. */
function isoTime(time: Date): string {
  return time.toISOString().replace(/^\+0*(\d{5,})/, '$1');
}

/** A signal as `sendSignal` takes it (docs/durable-jobs.md): a job id, a name as a queue's,
 *  and a JSON payload within the default limit. */
export function assertSignal(params: { id: unknown; name: unknown; payload: unknown }): void {
  if (typeof params.id !== 'string' || params.id.length === 0) throw new InvalidOptionError('id', `must be a job id, got ${String(params.id)}`);
  assertName('name', params.name);
  assertJsonPayload(params.payload);
}
