import { Command } from 'commander';
import { CliError, EXIT } from '../cli-error.js';
import { addConnectionOptions, type ConnectionOptions, withStore } from '../connection.js';
import { print, printJson } from '../output.js';
import { parseDuration } from '../parse.js';

interface PruneOptions extends ConnectionOptions {
  completedOlderThan?: number;
  deadOlderThan?: number;
  json?: boolean;
}

export function pruneCommand(): Command {
  return addConnectionOptions(new Command('prune'))
    .summary('delete old finished jobs')
    .description('Delete finished jobs, and their history, that finished longer ago than a cutoff.')
    .option('--completed-older-than <duration>', 'completed and skipped jobs (e.g. 7d)', parseDuration)
    .option('--dead-older-than <duration>', 'dead and cancelled jobs (e.g. 30d)', parseDuration)
    .option('--json', 'print {"pruned": count}')
    .action((options: PruneOptions) => {
      const { completedOlderThan, deadOlderThan } = options;
      if (completedOlderThan === undefined && deadOlderThan === undefined) {
        throw new CliError(EXIT.usage, 'prune needs --completed-older-than or --dead-older-than (or both)');
      }
      const ago = (ms: number) => new Date(Date.now() - ms);
      return withStore(options, async ({ store }) => {
        const pruned = await store.pruneJobs({
          ...(completedOlderThan !== undefined ? { completedBefore: ago(completedOlderThan) } : {}),
          ...(deadOlderThan !== undefined ? { deadBefore: ago(deadOlderThan) } : {}),
        });
        if (options.json) printJson({ pruned });
        else print(`pruned ${pruned} job${pruned === 1 ? '' : 's'}`);
      });
    });
}
