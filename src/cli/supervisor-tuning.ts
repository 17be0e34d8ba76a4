/**
 * The supervisor's timing options a worker module may export as `supervisor` and the
 * `worker` command's flags override (createSupervisor checks their values).
 */
import { Option, type Command } from 'commander';
import type { SupervisorOptions } from '../supervisor/supervisor-options.js';
import { CliError, EXIT } from './cli-error.js';
import { parseDuration, parseInteger } from './parse.js';

export const TUNING_KEYS = [
  'pollIntervalMs',
  'reaperIntervalMs',
  'errorBackoffMs',
  'maxErrorBackoffMs',
  'writeRetryMs',
  'prefetchWindowMs',
  'maxPrefetch',
  'alertThrottleMs',
  'progressIntervalMs',
] as const;

export type SupervisorTuning = Partial<Pick<SupervisorOptions, (typeof TUNING_KEYS)[number]>>;

/** Flag, key, help, and whether it takes a duration (else a count). */
const FLAGS: ReadonlyArray<[string, keyof SupervisorTuning, string, boolean]> = [
  ['--poll-interval <duration>', 'pollIntervalMs', 'how often to look for due jobs without a notification (1s)', true],
  ['--reaper-interval <duration>', 'reaperIntervalMs', 'how often to rescue jobs whose lease lapsed, and end expired ones (30s)', true],
  ['--error-backoff <duration>', 'errorBackoffMs', 'first wait after a failed store call (1s)', true],
  ['--max-error-backoff <duration>', 'maxErrorBackoffMs', 'longest wait after failed store calls (30s)', true],
  ['--prefetch-window <duration>', 'prefetchWindowMs', 'claim jobs due within this much ahead (500ms)', true],
  ['--max-prefetch <n>', 'maxPrefetch', 'most jobs claimed ahead of their time (1000)', false],
  ['--alert-throttle <duration>', 'alertThrottleMs', 'one dead-job alert per key per this long (1h)', true],
  ['--progress-interval <duration>', 'progressIntervalMs', 'how often job progress is written (1s)', true],
];

export function addTuningOptions(command: Command): Command {
  for (const [flag, , help, duration] of FLAGS) command.addOption(new Option(flag, help).argParser(duration ? parseDuration : parseInteger));
  return command;
}

/** The module's `supervisor` export, checked for shape: an object of known keys. */
export function moduleTuning(path: string, value: unknown): SupervisorTuning {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new CliError(EXIT.usage, `worker module ${path}: \`supervisor\` must be an object of supervisor options (${TUNING_KEYS.join(', ')})`);
  }
  const unknown = Object.keys(value).filter((key) => !(TUNING_KEYS as readonly string[]).includes(key));
  if (unknown.length > 0) {
    throw new CliError(EXIT.usage, `worker module ${path}: \`supervisor\` takes ${TUNING_KEYS.join(', ')}; not ${unknown.join(', ')}`);
  }
  return value as SupervisorTuning;
}

/** The module's values, each flag given on the command line over it. */
export function tuningFrom(flags: Record<string, unknown>, fromModule: SupervisorTuning): SupervisorTuning {
  const tuning: SupervisorTuning = { ...fromModule };
  for (const [flag, key] of FLAGS) {
    const name = flag.slice(2, flag.indexOf(' ')).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    if (flags[name] !== undefined) tuning[key] = flags[name] as number;
  }
  return tuning;
}
