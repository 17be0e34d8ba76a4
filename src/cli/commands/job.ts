import { Command } from 'commander';
import { JobNotFoundError } from '../../errors.js';
import { durableSteps } from '../../inspector/durable-steps.js';
import type { JobEvent, JobRecord } from '../../types.js';
import { addConnectionOptions, type ConnectionOptions, withStore } from '../connection.js';
import { errorText, progressText, stateStyle, table, time, truncate } from '../format.js';
import { print, printJson } from '../output.js';
import { parseJobId } from '../parse.js';
import { painter } from '../terminal.js';

interface JobOptions extends ConnectionOptions {
  json?: boolean;
}

export function jobCommand(): Command {
  return addConnectionOptions(new Command('job'))
    .summary('show one job and its history')
    .description("Show one job's row and its history of transitions.")
    .argument('<id>', 'job id', parseJobId)
    .option('--json', 'print {"job", "events"}')
    .action((id: string, options: JobOptions) =>
      withStore(options, async ({ store }) => {
        const job = await store.getJob({ id });
        if (!job) throw new JobNotFoundError(id);
        const events = await store.getJobEvents({ id });
        if (options.json) printJson({ job, events });
        else for (const line of describeJob(job, events)) print(line);
      }),
    );
}

function describeJob(job: JobRecord, events: readonly JobEvent[]): string[] {
  const paint = painter(process.stdout);
  const json = (value: unknown) => JSON.stringify(value);
  const lines = [
    `job ${job.id}  ${job.queue}/${job.kind}  ${paint(stateStyle(job.state), job.state)}`,
    `  attempt      ${job.attempt} of ${job.maxAttempts}`,
    `  priority     ${job.priority}`,
    `  unique key   ${job.uniqueKey ?? '-'}`,
    `  created      ${time(job.createdAt)}`,
    `  run at       ${time(job.runAt)}`,
    `  finished     ${time(job.finishedAt)}`,
    `  worker       ${job.workerId ?? '-'}`,
    `  payload      ${json(job.payload)}`,
  ];
  if (job.tenant !== null) lines.push(`  tenant       ${job.tenant}`);
  // Until its first claim, enqueues with the key join its burst and move "run at".
  if (job.debounceKey !== null) lines.push(`  debounce key ${job.debounceKey}`);
  if (job.expiresAt) lines.push(`  expires at   ${time(job.expiresAt)}`);
  if (job.cancelRequestedAt) lines.push(`  cancel asked ${time(job.cancelRequestedAt)}`);
  if (job.progress) lines.push(`  progress     ${progressText(job.progress)}  (${time(job.progress.at)})`);
  if (job.result !== null) lines.push(`  result       ${json(job.result)}`);
  if (job.error) lines.push(`  error        ${errorText(job.error)}`);
  if (job.state === 'sleeping' && job.waitingForSignal) {
    lines.push(`  waits for    signal "${job.waitingForSignal}" (jobvisor signal ${job.id} ${job.waitingForSignal} [payload])`);
  }
  const durable = durableSteps(job);
  if (durable.length > 0) {
    lines.push('', 'steps (stored: a replay gets it back without running or waiting again)');
    const rows = durable.map((step) => [
      step.name,
      step.kind,
      step.status,
      step.stored ? 'yes' : 'no',
      truncate('value' in step ? json(step.value) : step.until ? `until ${time(step.until)}` : '', 60),
    ]);
    const columns = ['NAME', 'KIND', 'STATUS', 'STORED', 'VALUE'].map((header) => ({ header }));
    lines.push(...table(columns, rows, () => undefined, paint).map((l) => `  ${l}`));
  }
  lines.push('', 'history');
  const rows = events.map((e) => [
    time(e.at),
    e.fromState ?? '(enqueued)',
    e.toState,
    String(e.attempt),
    e.workerId ?? '',
    errorText(e.error),
  ]);
  const columns = ['AT', 'FROM', 'TO', 'ATTEMPT', 'WORKER', 'ERROR'].map((header) => ({ header }));
  lines.push(...table(columns, rows, (row, column) => (column === 2 ? stateStyle(rows[row]![2]!) : undefined), paint).map((l) => `  ${l}`));
  return lines;
}
