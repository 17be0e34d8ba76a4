import { Command } from 'commander';
import type { PruneProgress } from '../../adapters/store.js';
import { CliError, EXIT } from '../cli-error.js';
import { addConnectionOptions, type ConnectionOptions, withStore } from '../connection.js';
import { print, printJson } from '../output.js';
import { parseDuration, parsePositiveInteger } from '../parse.js';

interface PruneOptions extends ConnectionOptions {
  completedOlderThan?: number;
  deadOlderThan?: number;
  batchSize?: number;
  json?: boolean;
}

export function pruneCommand(): Command {
  return addConnectionOptions(new Command('prune'))
    .summary('delete old finished jobs')
    .description(
      'Delete finished jobs, and their history, that finished longer ago than a cutoff, a batch at a time (each batch its own transaction).',
    )
    .option('--completed-older-than <duration>', 'completed and skipped jobs (e.g. 7d)', parseDuration)
    .option('--dead-older-than <duration>', 'dead and cancelled jobs (e.g. 30d)', parseDuration)
    .option('--batch-size <n>', 'jobs deleted per batch (default 1000)', parsePositiveInteger)
    .option('--json', 'print {"pruned": count}')
    .action((options: PruneOptions) => {
      const { completedOlderThan, deadOlderThan, batchSize } = options;
      if (completedOlderThan === undefined && deadOlderThan === undefined) {
        throw new CliError(EXIT.usage, 'prune needs --completed-older-than or --dead-older-than (or both)');
      }
      const ago = (ms: number) => new Date(Date.now() - ms);
      return withStore(options, async ({ store }) => {
        const progress = process.stderr.isTTY ? progressLine() : undefined;
        let pruned: number;
        try {
          pruned = await store.pruneJobs({
            ...(completedOlderThan !== undefined ? { completedBefore: ago(completedOlderThan) } : {}),
            ...(deadOlderThan !== undefined ? { deadBefore: ago(deadOlderThan) } : {}),
            ...(batchSize !== undefined ? { batchSize } : {}),
            ...(progress ? { onBatch: progress.show } : {}),
          });
        } finally {
          progress?.clear();
        }
        if (options.json) printJson({ pruned });
        else print(`pruned ${pruned} job${pruned === 1 ? '' : 's'}`);
      });
    });
}

/** On a terminal, a long prune's running total on one stderr line, rewritten after each batch
 *  and erased at the end (the result goes to stdout as ever). */
function progressLine(): { show: (progress: PruneProgress) => void; clear: () => void } {
  let shown = false;
  return {
    show: ({ total }) => {
      shown = true;
      process.stderr.write(`\r\x1b[Kjobvisor: pruning, ${total} jobs deleted so far`);
    },
    clear: () => {
      if (shown) process.stderr.write('\r\x1b[K');
    },
  };
}
