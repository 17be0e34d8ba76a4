import { Command, InvalidArgumentError } from 'commander';
import type { JobStore, QueueInfo } from '../../adapters/store.js';
import { InvalidOptionError } from '../../errors.js';
import { assertName } from '../../validation.js';
import { CliError, EXIT } from '../cli-error.js';
import { addConnectionOptions, type ConnectionOptions, withStore } from '../connection.js';
import { table, time } from '../format.js';
import { print, printJson } from '../output.js';

interface QueueOptions extends ConnectionOptions {
  json?: boolean;
  newQueue?: boolean;
}

/** `jobvisor queue pause|resume|list`: what every worker on the store may claim. */
export function queueCommand(): Command {
  return new Command('queue')
    .summary('pause, resume or list queues')
    .description(
      'Pause a queue (its jobs stay; no worker on the store claims any of them, and running attempts finish), resume it, ' +
        'or list the queues the store knows with whether each is paused.',
    )
    .addCommand(changeCommand('pause'))
    .addCommand(changeCommand('resume'))
    .addCommand(
      addConnectionOptions(new Command('list'))
        .summary('list the queues, active or paused')
        .description('List the queues the store knows (a queue is known from its first job on, prune or not).')
        .option('--json', 'print {"queues": [{name, createdAt, pausedAt}]}')
        .action((options: QueueOptions) =>
          withStore(options, async ({ store }) => {
            const queues = await store.listQueues();
            if (options.json) return printJson({ queues });
            if (queues.length === 0) return print('no queues');
            const rows = queues.map((q) => [q.name, q.pausedAt ? 'paused' : 'active', q.pausedAt ? time(q.pausedAt) : '-', time(q.createdAt)]);
            for (const line of table([{ header: 'QUEUE' }, { header: 'STATE' }, { header: 'PAUSED SINCE' }, { header: 'CREATED' }], rows)) print(line);
          }),
        ),
    );
}

function changeCommand(change: 'pause' | 'resume'): Command {
  return addConnectionOptions(new Command(change))
    .summary(change === 'pause' ? 'stop every worker claiming its jobs' : 'let workers claim its jobs again')
    .description(
      change === 'pause'
        ? 'Pause a queue: no worker on the store claims its jobs until it is resumed.'
        : 'Resume a paused queue: workers claim its jobs again, woken at once.',
    )
    .argument('<queue>', 'queue name', parseQueueName)
    .option('--new-queue', 'allow a queue that no job in the store has used yet')
    .option('--json', 'print {"queue": {name, createdAt, pausedAt}}')
    .action((name: string, options: QueueOptions) =>
      withStore(options, async ({ store }) => {
        if (!options.newQueue) await requireKnownQueue(store, name);
        const queue = change === 'pause' ? await store.pauseQueue({ queue: name }) : await store.resumeQueue({ queue: name });
        if (options.json) return printJson({ queue });
        print(describe(queue));
      }),
    );
}

async function requireKnownQueue(store: JobStore, name: string): Promise<void> {
  const known = (await store.listQueues()).map((q) => q.name);
  if (known.includes(name)) return;
  const names = known.length === 0 ? 'none yet' : known.map((q) => `"${q}"`).join(', ');
  throw new CliError(EXIT.usage, `unknown queue "${name}": the store knows ${names} (--new-queue for a queue with no job yet)`);
}

function describe(queue: QueueInfo): string {
  return queue.pausedAt ? `queue ${queue.name} paused since ${time(queue.pausedAt)}` : `queue ${queue.name} active`;
}

function parseQueueName(text: string): string {
  try {
    assertName('queue', text);
  } catch (error) {
    throw new InvalidArgumentError(error instanceof InvalidOptionError ? error.message.replace(/^queue: /, '') : String(error));
  }
  return text;
}
