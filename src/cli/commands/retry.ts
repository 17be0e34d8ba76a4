import { Command } from 'commander';
import { JobNotFoundError } from '../../errors.js';
import { retryFlow } from '../../flows/retry-flow.js';
import type { JobRecord } from '../../types.js';
import { CliError, EXIT } from '../cli-error.js';
import { addConnectionOptions, type ConnectionOptions, withStore } from '../connection.js';
import { print, printJson } from '../output.js';
import { parseJobId } from '../parse.js';

interface RetryOptions extends ConnectionOptions {
  flow?: string;
  json?: boolean;
}

const RETRYABLE = new Set(['dead', 'cancelled', 'skipped']);

export function retryCommand(): Command {
  return addConnectionOptions(new Command('retry'))
    .summary('run a dead, cancelled or skipped job, or a failed flow, again')
    .description(
      'Send a dead, cancelled or skipped job back to pending, due now, with at least one attempt left; in a flow, back ' +
        'to waiting while a parent has not ended, with the jobs its failure cancelled (docs/workflows.md). With ' +
        '--flow, every dead, cancelled or skipped job of the flow at once.',
    )
    .argument('[id]', 'job id', parseJobId)
    .option('--flow <id>', 'retry every failed job of this flow', parseJobId)
    .option('--json', 'print {"retried": true, "job"}, or with --flow {"retried": n, "left": n} (exit 5 when not retried)')
    .action((id: string | undefined, options: RetryOptions) =>
      withStore(options, async ({ store }) => {
        if ((id === undefined) === (options.flow === undefined)) {
          throw new CliError(EXIT.usage, 'retry takes a job id or --flow <id>, one of the two');
        }
        if (options.flow !== undefined) {
          const answer = await retryFlow(store, options.flow);
          if (answer.retried === 0 && answer.left > 0) {
            throw new CliError(EXIT.notApplied, `flow ${options.flow}: no job retried; ${answer.left} failed with a parent outside the flow that failed`);
          }
          if (options.json) printJson(answer);
          else print(`flow ${options.flow}: ${answer.retried} job(s) retried${answer.left > 0 ? `, ${answer.left} left failed (a parent outside the flow failed)` : ''}`);
          return;
        }
        const answer = await store.retryJob({ id: id! });
        if (!answer) throw new JobNotFoundError(id!);
        const { job, retried } = answer;
        if (!retried) throw new CliError(EXIT.notApplied, notRetried(job));
        if (options.json) printJson({ retried, job });
        else if (job.state === 'waiting') print(`job ${job.id} is waiting again, for its parents that have not ended`);
        else print(`job ${job.id} is pending again (attempt ${job.attempt} of ${job.maxAttempts} done)`);
      }),
    );
}

function notRetried(job: JobRecord): string {
  if (!RETRYABLE.has(job.state)) return `job ${job.id} is ${job.state}: only dead, cancelled or skipped jobs can be retried`;
  if (job.uniqueKey !== null) return `job ${job.id} was not retried: another live job in ${job.queue} holds its unique key "${job.uniqueKey}"`;
  return `job ${job.id} was not retried: a job it waits for failed and its edge is not onFailure 'run'; retry that one, or the flow (--flow)`;
}
