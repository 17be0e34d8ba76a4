/**
 * A worker module: the user's JavaScript module that `worker` runs and `enqueue
 * --worker-module` checks against. It exports, by name or as properties of its default
 * export:
 *
 *   queues        (required) an array of defineQueue(...) results
 *   schedules     an array of defineSchedule(...) results: recurring jobs the worker enqueues
 *   gates         { name: size } for the queues' `gate` option
 *   concurrency   jobs running at once across all queues
 *   onDead        the dead-job alert sink
 *   supervisor    timing options of the supervisor (supervisor-tuning.ts); flags override them
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Queue } from '../queue.js';
import type { Schedule } from '../schedule.js';
import type { DeadJobSink } from '../supervisor/alerts.js';
import { CliError, describeError, EXIT } from './cli-error.js';
import { moduleTuning, type SupervisorTuning } from './supervisor-tuning.js';

export interface WorkerModule {
  queues: Queue[];
  schedules?: Schedule[];
  gates?: Record<string, number>;
  concurrency?: number;
  onDead?: DeadJobSink;
  supervisor: SupervisorTuning;
}

export async function loadWorkerModule(path: string): Promise<WorkerModule> {
  const file = resolve(path);
  if (!existsSync(file)) throw new CliError(EXIT.usage, `worker module ${path} not found`);
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    throw new CliError(EXIT.failure, `worker module ${path} failed to load: ${describeError(error)}${typeScriptHint(file, error)}`);
  }
  const exported = !('queues' in loaded) && isObject(loaded.default) ? loaded.default : loaded;
  const { queues, schedules, gates, concurrency, onDead, supervisor } = exported;
  if (!Array.isArray(queues) || queues.length === 0 || !queues.every(isQueue)) {
    throw new CliError(EXIT.usage, `worker module ${path} does not export \`queues\`: an array of defineQueue(...) results`);
  }
  // The supervisor checks the values; here only that they have the right shape.
  if (schedules !== undefined && (!Array.isArray(schedules) || !schedules.every(isSchedule))) {
    throw new CliError(EXIT.usage, `worker module ${path}: \`schedules\` must be an array of defineSchedule(...) results`);
  }
  if (gates !== undefined && !isObject(gates)) throw new CliError(EXIT.usage, `worker module ${path}: \`gates\` must be { name: size }`);
  if (concurrency !== undefined && typeof concurrency !== 'number') {
    throw new CliError(EXIT.usage, `worker module ${path}: \`concurrency\` must be a number`);
  }
  if (onDead !== undefined && typeof onDead !== 'function') {
    throw new CliError(EXIT.usage, `worker module ${path}: \`onDead\` must be a function`);
  }
  return {
    queues,
    supervisor: moduleTuning(path, supervisor),
    ...(schedules !== undefined ? { schedules: schedules as Schedule[] } : {}),
    ...(gates !== undefined ? { gates: gates as Record<string, number> } : {}),
    ...(concurrency !== undefined ? { concurrency } : {}),
    ...(onDead !== undefined ? { onDead: onDead as DeadJobSink } : {}),
  };
}

/** Node before 22.18 cannot import TypeScript, and says only "Unknown file extension". */
function typeScriptHint(file: string, error: unknown): string {
  if ((error as { code?: unknown } | null)?.code !== 'ERR_UNKNOWN_FILE_EXTENSION' || !/\.[cm]?ts$/.test(file)) return '';
  return (
    ` (Node ${process.version} does not run TypeScript: use Node 22.18 or later, which strips types, ` +
    "compile the module to JavaScript, or run with NODE_OPTIONS='--import tsx')"
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** What defineSchedule returns, checked by shape. */
function isSchedule(value: unknown): value is Schedule {
  return isObject(value) && typeof value.name === 'string' && typeof value.jobFor === 'function' && typeof value.nextTick === 'function';
}

/** What defineQueue returns, checked by shape: the module may have its own copy of jobvisor. */
function isQueue(value: unknown): value is Queue {
  return (
    isObject(value) &&
    typeof value.name === 'string' &&
    isObject(value.handlers) &&
    isObject(value.settings) &&
    typeof value.enqueue === 'function'
  );
}
