/** Parsers for command-line values. Each throws commander's InvalidArgumentError, which
 *  commander reports as one line naming the option, and the CLI exits with the usage code. */
import { InvalidArgumentError } from 'commander';
import { sqlSchema } from '../adapters/sql/sql-schema.js';
import type { OnConflict } from '../adapters/store.js';
import { JobvisorError } from '../errors.js';
import { assertName, assertPoolSize } from '../validation.js';

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/;
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/** `500ms`, `30s`, `10m`, `2h`, `7d`, `1w` → milliseconds. */
export function parseDuration(text: string): number {
  const match = DURATION.exec(text.trim());
  if (!match) throw new InvalidArgumentError('expected a duration such as 500ms, 30s, 10m, 2h, 7d or 1w.');
  return Math.round(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]);
}

/** When a job runs: an ISO 8601 date-time, or a duration from now (`10m`), which the store
 *  resolves by its own clock (the database's), not this machine's. */
export function parseRunAt(text: string): { runAt: Date } | { runIn: number } {
  if (DURATION.test(text.trim())) return { runIn: parseDuration(text) };
  const date = /^\d{4}-\d{2}-\d{2}/.test(text) ? new Date(text) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime())) {
    throw new InvalidArgumentError('expected an ISO 8601 time (2026-06-01T09:00:00Z) or a duration from now (10m).');
  }
  return { runAt: date };
}

/** `--on-conflict`: the library's onConflict, in the CLI's kebab-case. */
export function parseOnConflict(text: string): OnConflict {
  const modes: Record<string, OnConflict> = { return: 'return', replace: 'replace', 'replace-running': 'replaceRunning' };
  const mode = modes[text];
  if (mode === undefined) throw new InvalidArgumentError('expected return, replace or replace-running.');
  return mode;
}

export function parseInteger(text: string): number {
  const value = Number(text);
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(value)) throw new InvalidArgumentError('expected an integer.');
  return value;
}

export function parsePositiveInteger(text: string): number {
  const value = parseInteger(text);
  if (value < 1) throw new InvalidArgumentError('expected a positive integer.');
  return value;
}

/** A fair-share tenant's weight: jobs per round, as `fairShare.weight` takes it. */
export function parseWeight(text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0 || value > 1_000) {
    throw new InvalidArgumentError('expected a number above 0 and at most 1000 (jobs per round).');
  }
  return value;
}

/** A job id as the stores hand them out: a positive decimal integer. */
export function parseJobId(text: string): string {
  if (!/^[1-9]\d*$/.test(text)) throw new InvalidArgumentError('expected a job id (a positive integer).');
  return text;
}

export function parseSchema(text: string): string {
  try {
    return sqlSchema(text).name;
  } catch (error) {
    throw new InvalidArgumentError(error instanceof JobvisorError ? error.message.replace(/^schema: /, '') : String(error));
  }
}

/** A signal's name, checked as the library checks it (a durable call's name). */
export function parseSignalName(text: string): string {
  try {
    assertName('name', text);
  } catch (error) {
    throw new InvalidArgumentError(error instanceof JobvisorError ? error.message.replace(/^name: /, '') : String(error));
  }
  return text;
}

/** The size of the command's pool of PostgreSQL connections, checked as the store checks it. */
export function parsePoolSize(text: string): number {
  const value = parseInteger(text);
  try {
    assertPoolSize('pool size', value);
  } catch (error) {
    throw new InvalidArgumentError(error instanceof JobvisorError ? error.message.replace(/^pool size: /, '') : String(error));
  }
  return value;
}
