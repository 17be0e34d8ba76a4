import { JobvisorError } from '../errors.js';
import type { JobErrorInfo } from '../types.js';

/** Turns whatever a handler threw into what the row stores. The stack is kept for
 *  failures; `code` comes from a JobvisorError, else the fallback. */
export function toErrorInfo(error: unknown, fallbackCode: string): JobErrorInfo {
  if (error instanceof Error) {
    const info: JobErrorInfo = {
      code: error instanceof JobvisorError ? error.code : fallbackCode,
      message: error.message,
      name: error.name,
    };
    if (error.stack !== undefined) info.stack = error.stack;
    return info;
  }
  return { code: fallbackCode, message: typeof error === 'string' ? error : safeString(error) };
}

function safeString(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
