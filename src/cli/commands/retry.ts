import { Command } from 'commander';
import { JobNotFoundError } from '../../errors.js';
import { CliError, EXIT } from '../cli-error.js';
import { addConnectionOptions, type ConnectionOptions, withStore } from '../connection.js';
import { print, printJson } from '../output.js';
import { parseJobId } from '../parse.js';

interface RetryOptions extends ConnectionOptions {
  json?: boolean;
}

const RETRYABLE = new Set(['dead', 'cancelled', 'skipped']);

export function retryCommand(): Command {
  return addConnectionOptions(new Command('retry'))
    .summary('run a dead, cancelled or skipped job again')
    .description('Send a dead, cancelled or skipped job back to pending, due now, with at least one attempt left.')
    .argument('<id>', 'job id', parseJobId)
    .option('--json', 'print {"retried": true, "job"} (exit 5 when not retried)')
    .action((id: string, options: RetryOptions) =>
      withStore(options, async ({ store }) => {
        const answer = await store.retryJob({ id });
        if (!answer) throw new JobNotFoundError(id);
        const { job, retried } = answer;
        if (!retried) {
          throw new CliError(
            EXIT.notApplied,
            RETRYABLE.has(job.state)
              ? `job ${id} was not retried: another live job in ${job.queue} holds its unique key "${job.uniqueKey}"`
              : `job ${id} is ${job.state}: only dead, cancelled or skipped jobs can be retried`,
          );
        }
        if (options.json) printJson({ retried, job });
        else print(`job ${id} is pending again (attempt ${job.attempt} of ${job.maxAttempts} done)`);
      }),
    );
}
