import { Command } from 'commander';
import { JOB_STATES, type JobState } from '../../types.js';
import { addConnectionOptions, type ConnectionOptions, withStore } from '../connection.js';
import { stateStyle, table } from '../format.js';
import { print, printJson } from '../output.js';
import { painter } from '../terminal.js';

interface StatsOptions extends ConnectionOptions {
  json?: boolean;
}

type StateCounts = Record<JobState, number>;

export function statsCommand(): Command {
  return addConnectionOptions(new Command('stats'))
    .summary('count jobs per queue and state')
    .description('Count the jobs of each queue in each state.')
    .option('--json', 'print {"queues": {queue: {state: count}}, "total": {state: count}}')
    .action((options: StatsOptions) =>
      withStore(options, async ({ store }) => {
        const queues: Record<string, StateCounts> = {};
        const total = zeroCounts();
        for (const { queue, state, count } of await store.countJobs()) {
          queues[queue] ??= zeroCounts();
          queues[queue][state] += count;
          total[state] += count;
        }
        if (options.json) {
          printJson({ queues, total });
          return;
        }
        const names = Object.keys(queues);
        if (names.length === 0) {
          print('no jobs');
          return;
        }
        const paint = painter(process.stdout);
        const columns = [{ header: 'QUEUE' }, ...JOB_STATES.map((s) => ({ header: s.toUpperCase(), align: 'right' as const }))];
        const row = (name: string, counts: StateCounts) => [name, ...JOB_STATES.map((s) => String(counts[s]))];
        const rows = [...names.map((name) => row(name, queues[name]!)), row('(all)', total)];
        const style = (r: number, c: number) => (c > 0 && rows[r]![c] !== '0' ? stateStyle(JOB_STATES[c - 1]!) : undefined);
        for (const line of table(columns, rows, style, paint)) print(line);
      }),
    );
}

function zeroCounts(): StateCounts {
  return Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as StateCounts;
}
