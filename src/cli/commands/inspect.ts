import { randomBytes } from 'node:crypto';
import { Command, InvalidArgumentError, Option } from 'commander';
import { pino } from 'pino';
import { isLoopbackAddress } from '../../inspector/http.js';
import { CliError, EXIT } from '../cli-error.js';
import { addConnectionOptions, type ConnectionOptions, openStore } from '../connection.js';
import { notice, print } from '../output.js';
import { parseInteger } from '../parse.js';
import { loadWorkerModule } from '../worker-module.js';

/** As the inspector's own default (src/inspector/inspector.ts), without loading it for --help. */
const DEFAULT_PORT = 4780;

interface InspectOptions extends ConnectionOptions {
  port: number;
  host: string;
  /** true: `--token` without a value, make one up. */
  token?: string | true;
  workerModule?: string;
}

export function inspectCommand(): Command {
  return addConnectionOptions(new Command('inspect'))
    .summary('serve the inspector: a live page of queues, jobs and their paths')
    .description(
      'Serve the inspector on 127.0.0.1 until SIGTERM or SIGINT: queues, jobs, each job with its history and its path through ' +
        'the job machine, live. Read-only unless a token is given; then retry, cancel and delete need it.',
    )
    .addOption(new Option('--port <n>', 'port to listen on; 0 picks a free one').default(DEFAULT_PORT).argParser(parsePort))
    .addOption(new Option('--host <address>', 'address to listen on; anything but loopback needs --token, for reads too').default('127.0.0.1'))
    .addOption(
      new Option('--token [token]', 'enables actions for requests carrying it; without a value, a random one is printed')
        .env('JOBVISOR_INSPECTOR_TOKEN')
        .argParser(parseToken),
    )
    .option('--worker-module <path>', "the module's queues and schedules: the enqueue form checks a job's queue and kind against them, the schedules page lists its schedules")
    .action(async (options: InspectOptions) => {
      const token = options.token === true ? randomBytes(18).toString('base64url') : options.token;
      const loopback = isLoopbackAddress(options.host);
      if (!loopback && token === undefined) {
        throw new CliError(EXIT.usage, `--host ${options.host} is not loopback: give --token, which every request will then need`);
      }
      // Imported here, not at the top: the other commands' start-up need not load the inspector.
      const { startInspector } = await import('../../inspector/inspector.js');
      const module = options.workerModule === undefined ? undefined : await loadWorkerModule(options.workerModule);
      const logger = pino({ name: 'jobvisor', level: 'warn' }, pino.destination(2));
      const { store, label, close } = await openStore(options, { logger });
      try {
        const inspector = await startInspector({
          store,
          host: options.host,
          port: options.port,
          logger,
          ...(token === undefined ? {} : { token }),
          ...(module === undefined ? {} : { queues: module.queues, ...(module.schedules ? { schedules: module.schedules } : {}) }),
        }).catch((error: unknown) => {
          if ((error as { code?: unknown }).code === 'EADDRINUSE') {
            const where = (error as { address?: string }).address ?? options.host;
            throw new CliError(EXIT.unavailable, `port ${options.port} is in use on ${where}: pick another with --port`);
          }
          throw error;
        });
        print(`inspector for ${label}: ${inspector.url}`);
        if (options.token === true) print(`token: ${token}`);
        if (token === undefined) notice('read-only: give --token to enable retry, cancel and delete');
        if (!loopback) notice(`listening on ${options.host}, not loopback: every request, reads too, needs the token`);
        await new Promise<void>((resolve) => {
          process.once('SIGINT', () => resolve());
          process.once('SIGTERM', () => resolve());
        });
        await inspector.close();
      } finally {
        await close();
      }
    });
}

/** As startInspector wants it; checked here so that a bad one is refused before the store opens. */
function parseToken(text: string): string {
  if (text.length < 8) throw new InvalidArgumentError('expected at least 8 characters.');
  return text;
}

function parsePort(text: string): number {
  const port = parseInteger(text);
  if (port < 0 || port > 65_535) throw new InvalidArgumentError('expected a port from 0 to 65535.');
  return port;
}
