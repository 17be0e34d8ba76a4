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

export function assertInteger(what: string, value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new InvalidOptionError(what, `must be an integer, got ${String(value)}`);
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

/** Default largest payload, as JSON text: 1 MiB. */
export const DEFAULT_MAX_PAYLOAD_BYTES = 1_048_576;

/**
 * Checks that a payload survives a JSON round trip unchanged in meaning: no BigInt, function,
 * symbol or cycle (JSON.stringify would throw on some and silently drop others), and that its
 * JSON text fits the limit. Returns the byte size.
 */
export function assertJsonPayload(value: unknown, maxBytes: number = DEFAULT_MAX_PAYLOAD_BYTES): number {
  walk(value, 'payload', new Set());
  const text = JSON.stringify(value ?? null);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > maxBytes) {
    throw new InvalidPayloadError(`payload is ${bytes} bytes of JSON, over the limit of ${maxBytes}`);
  }
  return bytes;
}

function walk(value: unknown, path: string, ancestors: Set<object>): void {
  switch (typeof value) {
    case 'bigint':
    case 'function':
    case 'symbol':
      throw new InvalidPayloadError(`${path} is a ${typeof value}, which JSON cannot hold`);
    case 'number':
      if (!Number.isFinite(value)) throw new InvalidPayloadError(`${path} is ${value}, which JSON cannot hold`);
      return;
    case 'object': {
      if (value === null) return;
      if (ancestors.has(value)) throw new InvalidPayloadError(`${path} refers back to itself (a cycle)`);
      if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return;
      ancestors.add(value);
      if (Array.isArray(value)) {
        value.forEach((item, i) => walk(item, `${path}[${i}]`, ancestors));
      } else {
        for (const [key, item] of Object.entries(value)) if (item !== undefined) walk(item, `${path}.${key}`, ancestors);
      }
      ancestors.delete(value);
      return;
    }
    default:
      return;
  }
}
