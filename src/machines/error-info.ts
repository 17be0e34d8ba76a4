import { JobvisorError, PermanentJobError, SkipJobError, SnoozeJobError } from '../errors.js';
import type { JobErrorInfo } from '../types.js';
import { toStorableString } from '../validation.js';

/** What a thrown value asks for: a failure (retry while attempts remain), dead at once, a
 *  skip, or a snooze. */
export type ThrownVerdict = 'failure' | 'permanent' | 'skip' | 'snooze';

/** What a handler's thrown value asks for. Never throws, whatever was thrown: a revoked
 *  Proxy makes `instanceof` itself throw, and that is a failure like any other. */
export function verdictOf(thrown: unknown): ThrownVerdict {
  if (isInstance(thrown, SnoozeJobError)) return snoozeDelayMs(thrown) === undefined ? 'failure' : 'snooze';
  if (isInstance(thrown, SkipJobError)) return 'skip';
  if (isInstance(thrown, PermanentJobError)) return 'permanent';
  return 'failure';
}

/** A snooze's delay, or undefined if it cannot be read as one (a subclass's getter). */
export function snoozeDelayMs(thrown: SnoozeJobError): number | undefined {
  const delay = attempt(() => thrown.delayMs);
  return typeof delay === 'number' && delay >= 0 && Number.isFinite(delay) ? delay : undefined;
}

/** Turns whatever a handler threw into what the row stores, and never throws: a getter that
 *  throws, a revoked Proxy, an object with no prototype or a cycle each give what can be read
 *  safely. The stack is kept for failures; `code` comes from a JobvisorError, else the
 *  fallback. Every field is made a string the store can hold: one it refused would fail its
 *  write forever. */
export function toErrorInfo(error: unknown, fallbackCode: string): JobErrorInfo {
  if (isInstance(error, Error)) {
    const code = isInstance(error, JobvisorError) ? attempt(() => error.code) : undefined;
    const info: JobErrorInfo = {
      code: storable(typeof code === 'string' ? code : fallbackCode),
      message: storable(textOf(attempt(() => error.message)) ?? UNREADABLE),
      name: storable(textOf(attempt(() => error.name)) ?? 'Error'),
    };
    const stack = textOf(attempt(() => error.stack));
    if (stack !== undefined) info.stack = storable(stack);
    return info;
  }
  return { code: storable(fallbackCode), message: storable(describe(error)) };
}

const UNREADABLE = '(the thrown value could not be read)';

function isInstance<T>(value: unknown, type: abstract new (...args: any[]) => T): value is T {
  try {
    return value instanceof type;
  } catch {
    return false;
  }
}

/** `read()`, or undefined if it throws. */
function attempt<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/** A string as is; anything else that is not a string (a getter returning an object) is left out. */
function textOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return value;
  const json = attempt(() => JSON.stringify(value));
  if (typeof json === 'string') return json;
  const text = attempt(() => String(value));
  if (typeof text === 'string') return text;
  return `${attempt(() => typeof value) ?? 'unknown'} value ${UNREADABLE}`;
}

/** The longest message or stack kept, in UTF-16 code units: a handler that throws a
 *  megabyte-long message must not write it to the row and again to each history row. */
export const MAX_ERROR_TEXT = 16_384;

function storable(value: string): string {
  // Cut first: a surrogate pair split at the cut is then made storable like any lone one.
  const text = value.length > MAX_ERROR_TEXT ? `${value.slice(0, MAX_ERROR_TEXT)}… (${value.length - MAX_ERROR_TEXT} more characters)` : value;
  return toStorableString(text);
}
