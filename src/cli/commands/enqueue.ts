import { readFile } from 'node:fs/promises';
import { text } from 'node:stream/consumers';
import { Command } from 'commander';
import type { EnqueueJob, OnConflict } from '../../adapters/store.js';
import { assertHandledKind, buildEnqueueJob, DEFAULTS, type EnqueueOptions } from '../../queue.js';
import { UnknownQueueError } from '../../errors.js';
import { DEFAULT_MAX_PAYLOAD_BYTES } from '../../validation.js';
import { CliError, describeError, EXIT } from '../cli-error.js';
import { addConnectionOptions, type ConnectionOptions, withStore } from '../connection.js';
import { describeJsonError } from '../json-error.js';
import { print, printJson } from '../output.js';
import { parseDuration, parseInteger, parseOnConflict, parsePositiveInteger, parseRunAt, parseWeight } from '../parse.js';
import { loadWorkerModule } from '../worker-module.js';

interface EnqueueCommandOptions extends ConnectionOptions {
  priority?: number;
  runAt?: { runAt: Date } | { runIn: number };
  uniqueKey?: string;
  onConflict?: OnConflict;
  debounce?: string;
  debounceDelay?: number;
  debounceMaxWait?: number;
  tenant?: string;
  tenantWeight?: number;
  maxAttempts?: number;
  workerModule?: string;
  newQueue?: boolean;
  payloadFile?: string;
  json?: boolean;
}

export function enqueueCommand(): Command {
  return addConnectionOptions(new Command('enqueue'))
    .summary('add a job')
    .description(
      'Add a job. The queue must be one that --worker-module defines, or else one that jobs in the store already use ' +
        '(--new-queue enqueues the first job of a new queue).',
    )
    .argument('<queue>', 'queue name')
    .argument('<kind>', 'kind of job (selects the handler)')
    .argument('[payload]', 'the payload as JSON; - reads it from stdin (default: {})')
    .option('--payload-file <path>', 'read the payload (JSON) from this file, for one too large for the command line')
    .option('--priority <n>', 'higher runs first (default: 0)', parseInteger)
    .option('--run-at <time>', "not before this ISO 8601 time, or this long from now by the store's clock (10m) (default: now)", parseRunAt)
    .option('--unique-key <key>', 'while a job with this key is live in the queue, return it instead of adding one')
    .option('--on-conflict <mode>', 'what a live job with the --unique-key gets: return (default), replace (a pending one), replace-running (a running one too: its attempt is cancelled)', parseOnConflict)
    .option('--debounce <key>', 'one job per burst of enqueues with this key, run --debounce-delay after the last (not with --run-at, --unique-key)')
    .option('--debounce-delay <duration>', 'with --debounce: how long after the last enqueue of the burst it runs (500ms, 30s, 10m …)', parseDuration)
    .option('--debounce-max-wait <duration>', 'with --debounce: at most this long after the first (default: no bound)', parseDuration)
    .option('--tenant <name>', "on a queue defined with fairShare: whose job this is (claims go round-robin across tenants) (default: the default tenant)")
    .option('--tenant-weight <n>', "without --worker-module: the tenant's jobs per round (default: 1; with --worker-module, the queue's weights)", parseWeight)
    .option('--max-attempts <n>', "attempts before the job is dead (default: the queue's, else 3)", parsePositiveInteger)
    .option('--worker-module <path>', "check the queue and kind against this module's queues, and use the queue's settings")
    .option('--new-queue', 'allow a queue that no job in the store has used yet')
    .option('--json', 'print {"created", "job"}')
    .action(async (queue: string, kind: string, payloadArgument: string | undefined, options: EnqueueCommandOptions) => {
      const payload = await readPayload(payloadArgument, options.payloadFile);
      if (options.tenantWeight !== undefined && (options.tenant === undefined || options.workerModule !== undefined)) {
        throw new CliError(EXIT.usage, '--tenant-weight needs --tenant, and is taken from the queue\'s fairShare weights with --worker-module');
      }
      const jobOptions: Omit<EnqueueOptions, 'client'> = {
        ...(options.priority !== undefined ? { priority: options.priority } : {}),
        ...options.runAt,
        ...(options.uniqueKey !== undefined ? { uniqueKey: options.uniqueKey } : {}),
        ...(options.onConflict !== undefined ? { onConflict: options.onConflict } : {}),
        ...debounceOption(options),
        ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}),
      };
      // Checked before connecting: a bad name or payload never reaches the store.
      const withTenant = { ...jobOptions, ...(options.tenant !== undefined ? { tenant: options.tenant } : {}) };
      const job = options.workerModule
        ? await checkedAgainstModule(options.workerModule, queue, kind, payload, withTenant)
        : buildEnqueueJob(queue, kind, payload, withTenant, unknownQueueSettings(options));
      await withStore(options, async ({ store }) => {
        if (!options.workerModule && !options.newQueue) {
          // A queue is known from its first job on, also once prune took them all.
          const known = await store.listQueues();
          if (!known.some((q) => q.name === queue)) {
            throw new CliError(
              EXIT.usage,
              `unknown queue "${queue}": no job in the store uses it (check the name; --new-queue enqueues its first job, --worker-module checks against your queues)`,
            );
          }
        }
        const [result] = await store.enqueueJobs({ jobs: [job] });
        if (!result) throw new Error('the store answered no result for the enqueue');
        if (options.json) printJson(result);
        else if (result.created && result.replaced) print(`enqueued job ${result.job.id} (${queue}/${kind}, due ${result.job.runAt.toISOString()}); the running job that held unique key "${job.uniqueKey}" is cancelled`);
        else if (result.created) print(`enqueued job ${result.job.id} (${queue}/${kind}, due ${result.job.runAt.toISOString()})`);
        else if (result.replaced) print(`job ${result.job.id} (${result.job.state}) held unique key "${job.uniqueKey}" in ${queue}: replaced its payload, due ${result.job.runAt.toISOString()}`);
        else if (job.debounce) print(`job ${result.job.id} is the burst's for debounce key "${job.debounce.key}" in ${queue}: payload replaced, due ${result.job.runAt.toISOString()}`);
        else print(`job ${result.job.id} (${result.job.state}) already holds unique key "${job.uniqueKey}" in ${queue}: nothing enqueued`);
      });
    });
}

/** Without --worker-module the CLI cannot tell whether the queue is defined with fairShare:
 *  with --tenant the job is ranked for its tenant as the SQL enqueue ranks it (`p_tenant`,
 *  `p_tenant_weight`), and a queue that is not fair claims it in the plain order. */
function unknownQueueSettings(options: EnqueueCommandOptions): Parameters<typeof buildEnqueueJob>[4] {
  const defaults = { maxAttempts: DEFAULTS.maxAttempts, maxPayloadBytes: DEFAULT_MAX_PAYLOAD_BYTES };
  if (options.tenant === undefined) return defaults;
  return { ...defaults, fairShare: { weights: new Map([[options.tenant, options.tenantWeight ?? 1]]) } };
}

/** `--debounce` and its delays, as the library's `debounce` option. */
function debounceOption(options: EnqueueCommandOptions): Pick<EnqueueOptions, 'debounce'> {
  if (options.debounce === undefined) {
    if (options.debounceDelay !== undefined || options.debounceMaxWait !== undefined) {
      throw new CliError(EXIT.usage, '--debounce-delay and --debounce-max-wait need --debounce <key>');
    }
    return {};
  }
  if (options.debounceDelay === undefined) throw new CliError(EXIT.usage, '--debounce needs --debounce-delay <duration>');
  return {
    debounce: {
      key: options.debounce,
      delayMs: options.debounceDelay,
      ...(options.debounceMaxWait !== undefined ? { maxWaitMs: options.debounceMaxWait } : {}),
    },
  };
}

/** The payload from the argument, stdin (`-`) or --payload-file: one of them, `{}` without. */
export async function readPayload(argument: string | undefined, file: string | undefined): Promise<unknown> {
  if (argument !== undefined && file !== undefined) throw new CliError(EXIT.usage, 'give the payload as an argument or --payload-file, not both');
  if (file !== undefined) return parsePayload(await readText(() => readFile(file, 'utf8'), `--payload-file ${file}`), ` in ${file}`);
  if (argument === '-') return parsePayload(await readText(() => text(process.stdin), 'the payload from stdin'), ' from stdin');
  return parsePayload(argument ?? '{}', '');
}

async function readText(read: () => Promise<string>, what: string): Promise<string> {
  try {
    return await read();
  } catch (error) {
    throw new CliError(EXIT.usage, `cannot read ${what}: ${describeError(error)}`);
  }
}

function parsePayload(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(EXIT.usage, `payload${where} is not valid JSON: ${describeJsonError(error, text)}`);
  }
}

async function checkedAgainstModule(
  path: string,
  queueName: string,
  kind: string,
  payload: unknown,
  options: Omit<EnqueueOptions, 'client'>,
): Promise<EnqueueJob> {
  const { queues } = await loadWorkerModule(path);
  const queue = queues.find((q) => q.name === queueName);
  if (!queue) {
    throw new CliError(EXIT.usage, `${new UnknownQueueError(queueName).message}: ${path} defines ${queues.map((q) => q.name).join(', ')}`);
  }
  assertHandledKind(queueName, queue.handlers, kind);
  return buildEnqueueJob(queueName, kind, payload, options, queue.settings);
}
