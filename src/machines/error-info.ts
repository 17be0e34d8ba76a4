import { JobvisorError } from '../errors.js';
import type { JobErrorInfo } from '../types.js';
import { toStorableString } from '../validation.js';

/** Turns whatever a handler threw into what the row stores. The stack is kept for
 *  failures; `code` comes from a JobvisorError, else the fallback. Every field is made a
 *  string the store can hold: one it refused would fail its write, and every write batched
 *  with it, forever. */
export function toErrorInfo(error: unknown, fallbackCode: string): JobErrorInfo {
  if (error instanceof Error) {
    const info: JobErrorInfo = {
      code: storable(error instanceof JobvisorError ? error.code : fallbackCode),
      message: storable(error.message),
      name: storable(error.name),
    };
    if (error.stack !== undefined) info.stack = storable(error.stack);
    return info;
  }
  return { code: storable(fallbackCode), message: storable(typeof error === 'string' ? error : safeString(error)) };
}

function storable(value: unknown): string {
  return toStorableString(String(value));
}

function safeString(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
