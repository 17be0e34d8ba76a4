import { Command } from 'commander';
import { JobNotFoundError } from '../../errors.js';
import { CliError, EXIT } from '../cli-error.js';
import { addConnectionOptions, type ConnectionOptions, withStore } from '../connection.js';
import { print, printJson } from '../output.js';
import { parseJobId } from '../parse.js';

interface CancelOptions extends ConnectionOptions {
  json?: boolean;
}

export function cancelCommand(): Command {
  return addConnectionOptions(new Command('cancel'))
    .summary('cancel a pending or retrying job')
    .description('Cancel a pending or retrying job. A running job belongs to its worker: the CLI cannot stop it.')
    .argument('<id>', 'job id', parseJobId)
    .option('--json', 'print {"cancelled": true, "job"} (exit 5 when not cancelled)')
    .action((id: string, options: CancelOptions) =>
      withStore(options, async ({ store }) => {
        const answer = await store.cancelJob({ id });
        if (!answer) throw new JobNotFoundError(id);
        const { job, cancelled } = answer;
        // Cancelling a cancelled job asks for what already holds: not an error.
        if (!cancelled && job.state !== 'cancelled') {
          throw new CliError(
            EXIT.notApplied,
            job.state === 'running'
              ? `job ${id} is running: only its worker can cancel it now`
              : `job ${id} is already ${job.state}: only pending or retrying jobs can be cancelled`,
          );
        }
        if (options.json) printJson({ cancelled: true, job });
        else print(cancelled ? `job ${id} is cancelled` : `job ${id} was already cancelled`);
      }),
    );
}
