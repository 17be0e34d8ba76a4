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
    .summary('cancel a job: a waiting one at once, a running one by its worker')
    .description(
      'Cancel a job. A pending, retrying, waiting or sleeping job is cancelled at once. A running job gets a cancel request: the worker ' +
        'holding it hears it (at once, or at its next lease renewal), aborts the handler and records the job cancelled.',
    )
    .argument('<id>', 'job id', parseJobId)
    .option('--json', 'print {"cancelled", "requested", "job"} (exit 5 when neither)')
    .action((id: string, options: CancelOptions) =>
      withStore(options, async ({ store }) => {
        const answer = await store.cancelJob({ id });
        if (!answer) throw new JobNotFoundError(id);
        const { job, cancelled } = answer;
        const requested = job.state === 'running';
        // Cancelling a cancelled job asks for what already holds: not an error.
        if (!cancelled && !requested && job.state !== 'cancelled') {
          throw new CliError(EXIT.notApplied, `job ${id} is already ${job.state}: only waiting or running jobs can be cancelled`);
        }
        if (options.json) printJson({ cancelled: cancelled || job.state === 'cancelled', requested, job });
        else if (requested) print(`job ${id} is running: cancel requested; its worker stops it and records it cancelled`);
        else print(cancelled ? `job ${id} is cancelled` : `job ${id} was already cancelled`);
      }),
    );
}
