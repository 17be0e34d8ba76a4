import { Command, Option } from 'commander';
import { describeError, EXIT } from '../cli-error.js';
import { addConnectionOptions, type ConnectionOptions, openStore } from '../connection.js';
import { whenStdoutGone } from '../output.js';
import { parseDuration, parsePositiveInteger } from '../parse.js';
import type { LogFormat } from '../worker-log.js';
import { addTuningOptions, tuningFrom } from '../supervisor-tuning.js';
import { loadWorkerModule } from '../worker-module.js';

interface WorkerOptions extends ConnectionOptions {
  concurrency?: number;
  grace: number;
  storeWait: number;
  migrate?: boolean;
  drain?: boolean;
  workerId?: string;
  logLevel: string;
  logFormat?: LogFormat;
}

export function workerCommand(): Command {
  return addTuningOptions(addConnectionOptions(new Command('worker')))
    .summary('run the queues a module exports')
    .description(
      'Run a supervisor for the queues (and schedules) a module exports until SIGTERM or SIGINT, then stop gracefully: ' +
        'running jobs may finish within the grace period, then they are aborted and released for retry. Logs go to stdout: ' +
        'one readable line per job event on a terminal, JSON lines otherwise. A promise rejection no one handled (a ' +
        'fire-and-forget promise in a handler) is logged, and the worker keeps running.',
    )
    .argument('<module>', 'JavaScript module exporting `queues` (and optionally `schedules`, `gates`, `concurrency`, `onDead`, `supervisor`)')
    .option('--concurrency <n>', "jobs running at once across all queues (default: the module's, else the sum of the queues')", parsePositiveInteger)
    .addOption(
      new Option('--grace <duration>', 'after a signal, how long running jobs may finish before they are aborted and released for retry')
        .default(30_000, '30s')
        .argParser(parseDuration),
    )
    .addOption(
      new Option('--store-wait <duration>', 'after the grace period, how long the stop waits for the database to answer its last writes before it exits without them (their rows go back when their leases end)')
        .default(30_000, '30s')
        .argParser(parseDuration),
    )
    .option('--migrate', 'apply pending migrations first (always done on the embedded store)')
    .option('--drain', 'run every due job, and what becomes due meanwhile, then exit instead of waiting for a signal')
    .option('--worker-id <id>', 'written on claims and history (default: host:pid:random)')
    .addOption(new Option('--log-level <level>', 'log level (job starts are debug)').choices(['debug', 'info', 'warn', 'error', 'silent']).default('info'))
    .addOption(
      new Option('--log-format <format>', 'pretty: one readable line per entry; json: JSON lines (default: pretty on a terminal, else json)').choices([
        'pretty',
        'json',
      ]),
    )
    .action(async (modulePath: string, options: WorkerOptions) => {
      const worker = await loadWorkerModule(modulePath);
      // Imported here, not at the top: the other commands' start-up need not load XState or pino-pretty.
      const [{ createSupervisor }, { jobEventLog, workerLogger }] = await Promise.all([
        import('../../supervisor/supervisor.js'),
        import('../worker-log.js'),
      ]);
      const logger = await workerLogger(options.logLevel, options.logFormat ?? (process.stdout.isTTY ? 'pretty' : 'json'));
      // A handler's fire-and-forget promise that rejects would end the process, and every job
      // running in it, by Node's default. The library installs no global handler (the process
      // is not its own); this one is ours: log it, keep running.
      process.on('unhandledRejection', (reason) =>
        logger.error({ err: reason }, 'a promise rejected and nothing handled it (a fire-and-forget promise in a handler?); the worker keeps running'),
      );
      // A signal, or a stdout whose reader went away (`jobvisor worker … | head`): stop as gracefully.
      // An exception nothing caught (a throw in a handler's timer callback) leaves the process in
      // a state no one planned for: log it, stop as gracefully (the grace period, then running
      // jobs released), and exit 1. A second one while stopping ends the process at once.
      let uncaught: unknown;
      const stopAsked = new Promise<string>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
        whenStdoutGone(() => resolve('stdout closed'));
        process.on('uncaughtException', (error) => {
          if (uncaught !== undefined) {
            logger.error({ err: error }, 'another exception nothing caught while stopping; quitting at once');
            process.exit(EXIT.failure);
          }
          uncaught = error;
          logger.error({ err: error }, 'an exception nothing caught (a throw in a handler\'s callback?); the worker stops');
          resolve('uncaught exception');
        });
      });
      const { store, label, close } = await openStore(options, { migrate: options.migrate ?? false, logger });
      try {
        const concurrency = options.concurrency ?? worker.concurrency;
        const supervisor = createSupervisor({
          store,
          queues: worker.queues,
          logger,
          inspect: jobEventLog(logger),
          ...(worker.schedules ? { schedules: worker.schedules } : {}),
          ...(worker.gates ? { gates: worker.gates } : {}),
          ...(concurrency !== undefined ? { concurrency } : {}),
          ...(worker.onDead ? { onDead: worker.onDead } : {}),
          ...(options.workerId !== undefined ? { workerId: options.workerId } : {}),
          ...tuningFrom(options as unknown as Record<string, unknown>, worker.supervisor),
        });
        const stopping = stopAsked.then((signal) => {
          process.once('SIGINT', () => process.exit(EXIT.interrupted));
          process.once('SIGTERM', () => process.exit(EXIT.interrupted));
          logger.info({ signal, graceMs: options.grace }, 'stopping: running jobs may finish within the grace period (a second signal quits at once)');
          return supervisor.stop({ graceMs: options.grace, storeWaitMs: options.storeWait });
        });
        if (options.drain) {
          logger.info({ store: label }, 'draining: running every due job, then exiting');
          const attempts = await Promise.race([supervisor.drain(), stopping.then(() => undefined)]);
          if (attempts !== undefined) logger.info({ attempts }, 'drained');
          return;
        }
        await supervisor.start();
        const scheduled = worker.schedules?.length ? ` and ${worker.schedules.length} schedule${worker.schedules.length === 1 ? '' : 's'}` : '';
        logger.info({ store: label }, `worker running ${worker.queues.length} queue${worker.queues.length === 1 ? '' : 's'}${scheduled}; SIGTERM or SIGINT stops it`);
        await stopping;
      } finally {
        await close();
      }
      if (uncaught !== undefined) throw new Error(`the worker stopped after an exception nothing caught: ${describeError(uncaught)}`);
    });
}
