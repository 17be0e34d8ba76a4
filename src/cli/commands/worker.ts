import { Command, Option } from 'commander';
import { pino } from 'pino';
import { EXIT } from '../cli-error.js';
import { addConnectionOptions, type ConnectionOptions, openStore } from '../connection.js';
import { parseDuration, parsePositiveInteger } from '../parse.js';
import { loadWorkerModule } from '../worker-module.js';

interface WorkerOptions extends ConnectionOptions {
  concurrency?: number;
  grace: number;
  migrate?: boolean;
  drain?: boolean;
  workerId?: string;
  logLevel: string;
}

export function workerCommand(): Command {
  return addConnectionOptions(new Command('worker'))
    .summary('run the queues a module exports')
    .description(
      'Run a supervisor for the queues a module exports until SIGTERM or SIGINT, then stop gracefully: running jobs may finish ' +
        'within the grace period, then they are aborted and released for retry. Logs are JSON lines on stdout.',
    )
    .argument('<module>', 'JavaScript module exporting `queues` (and optionally `gates`, `concurrency`, `onDead`)')
    .option('--concurrency <n>', "jobs running at once across all queues (default: the module's, else the sum of the queues')", parsePositiveInteger)
    .addOption(
      new Option('--grace <duration>', 'after a signal, how long running jobs may finish before they are aborted and released for retry')
        .default(30_000, '30s')
        .argParser(parseDuration),
    )
    .option('--migrate', 'apply pending migrations first (always done on the embedded store)')
    .option('--drain', 'run every due job, and what becomes due meanwhile, then exit instead of waiting for a signal')
    .option('--worker-id <id>', 'written on claims and history (default: host:pid:random)')
    .addOption(new Option('--log-level <level>', 'log level (JSON lines on stdout)').choices(['debug', 'info', 'warn', 'error', 'silent']).default('info'))
    .action(async (modulePath: string, options: WorkerOptions) => {
      const worker = await loadWorkerModule(modulePath);
      // Imported here, not at the top: the other commands' start-up need not load XState.
      const { createSupervisor } = await import('../../supervisor/supervisor.js');
      const logger = pino({ name: 'jobvisor', level: options.logLevel });
      const { store, label, close } = await openStore(options, { migrate: options.migrate ?? false, logger });
      try {
        const concurrency = options.concurrency ?? worker.concurrency;
        const supervisor = createSupervisor({
          store,
          queues: worker.queues,
          logger,
          ...(worker.gates ? { gates: worker.gates } : {}),
          ...(concurrency !== undefined ? { concurrency } : {}),
          ...(worker.onDead ? { onDead: worker.onDead } : {}),
          ...(options.workerId !== undefined ? { workerId: options.workerId } : {}),
        });
        const signalled = new Promise<NodeJS.Signals>((resolve) => {
          process.once('SIGINT', resolve);
          process.once('SIGTERM', resolve);
        });
        const stopping = signalled.then((signal) => {
          process.once('SIGINT', () => process.exit(EXIT.interrupted));
          process.once('SIGTERM', () => process.exit(EXIT.interrupted));
          logger.info({ signal, graceMs: options.grace }, 'stopping: running jobs may finish within the grace period (a second signal quits at once)');
          return supervisor.stop({ graceMs: options.grace });
        });
        if (options.drain) {
          logger.info({ store: label }, 'draining: running every due job, then exiting');
          const attempts = await Promise.race([supervisor.drain(), stopping.then(() => undefined)]);
          if (attempts !== undefined) logger.info({ attempts }, 'drained');
          return;
        }
        await supervisor.start();
        logger.info({ store: label }, 'worker running; SIGTERM or SIGINT stops it');
        await stopping;
      } finally {
        await close();
      }
    });
}
