import { Command, Option } from 'commander';
import { JOB_STATES, type JobState } from '../../types.js';
import { addConnectionOptions, type ConnectionOptions, withStore } from '../connection.js';
import { jobsTable } from '../format.js';
import { print, printJson } from '../output.js';
import { parseJobId, parsePositiveInteger } from '../parse.js';
import { painter } from '../terminal.js';

interface JobsOptions extends ConnectionOptions {
  queue?: string;
  state?: JobState;
  kind?: string;
  limit: number;
  before?: string;
  json?: boolean;
}

export function jobsCommand(): Command {
  return addConnectionOptions(new Command('jobs'))
    .summary('list jobs, newest first')
    .description('List jobs, newest first, a page at a time.')
    .option('--queue <name>', 'only this queue')
    .addOption(new Option('--state <state>', 'only this state').choices(JOB_STATES))
    .option('--kind <kind>', 'only this kind')
    .addOption(new Option('--limit <n>', 'jobs per page').default(50).argParser(parsePositiveInteger))
    .option('--before <id>', 'the page after the job with this id (as printed at the end of a page)', parseJobId)
    .option('--json', 'print {"jobs": [...], "nextBefore": id or null}')
    .action((options: JobsOptions) =>
      withStore(options, async ({ store }) => {
        const jobs = await store.listJobs({
          ...(options.queue !== undefined ? { queue: options.queue } : {}),
          ...(options.state !== undefined ? { state: options.state } : {}),
          ...(options.kind !== undefined ? { kind: options.kind } : {}),
          ...(options.before !== undefined ? { beforeId: options.before } : {}),
          limit: options.limit,
        });
        // A full page may have a next one; an empty next page is the cheap way to find out.
        const nextBefore = jobs.length === options.limit ? (jobs.at(-1)?.id ?? null) : null;
        if (options.json) {
          printJson({ jobs, nextBefore });
          return;
        }
        if (jobs.length === 0) {
          print('no jobs');
          return;
        }
        for (const line of jobsTable(jobs, painter(process.stdout))) print(line);
        if (nextBefore !== null) print(`more: --before ${nextBefore}`);
      }),
    );
}
