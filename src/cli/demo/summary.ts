/** What the demo prints at the end, read back from the store: final states, the paths the
 *  jobs took through the machine (their stored history), and what each feature did. */
import type { JobStore } from '../../adapters/store.js';
import type { DeadJobAlert } from '../../supervisor/alerts.js';
import { JOB_STATES, type JobRecord } from '../../types.js';
import { errorText, historyPath, stateStyle, truncate } from '../format.js';
import { type Paint, painter } from '../terminal.js';
import type { DemoJobs } from './demo-jobs.js';
import type { GateMeter } from './demo-queues.js';
import { emptyCounts, queueTable, type StateCounts } from './progress.js';

export interface DemoOutcome {
  jobs: DemoJobs;
  records: readonly JobRecord[];
  alerts: readonly DeadJobAlert[];
  gpu: GateMeter;
  elapsedMs: number;
  /** How to run the CLI, for the hints: `npx jobvisor` or `npm run cli --`. */
  invocation: string;
  /** Connection options to repeat in the hints (a non-default data dir). */
  connectionArgs: string;
}

export async function demoSummary(store: JobStore, outcome: DemoOutcome): Promise<string[]> {
  const paint = painter(process.stdout);
  const { records, jobs, alerts, gpu } = outcome;
  const byQueue = new Map<string, StateCounts>();
  const totals = emptyCounts();
  for (const job of records) {
    const counts = byQueue.get(job.queue) ?? emptyCounts();
    counts[job.state] += 1;
    byQueue.set(job.queue, counts);
    totals[job.state] += 1;
  }
  const attemptsByQueue = new Map<string, number>();
  for (const job of records) attemptsByQueue.set(job.queue, (attemptsByQueue.get(job.queue) ?? 0) + job.attempt);
  const attempts = records.reduce((sum, job) => sum + job.attempt, 0);
  const states = JOB_STATES.filter((s) => totals[s] > 0).map((s) => paint(stateStyle(s), `${s} ${totals[s]}`));

  const lines = [
    '',
    paint('bold', `Done in ${(outcome.elapsedMs / 1000).toFixed(1)} s: ${records.length} jobs, ${attempts} attempts.`),
    `Final states: ${states.join(', ')}`,
    '',
    ...queueTable(byQueue, paint, attemptsByQueue).map((line) => `  ${line}`),
    '',
    paint('bold', 'Paths through the job machine, from each job’s stored history:'),
    ...(await pathLines(store, records, paint)),
    '',
    `Unique key "${jobs.duplicate.uniqueKey}": enqueued twice, one job (the second enqueue returned job ${jobs.duplicate.id}, created: ${jobs.duplicate.created}).`,
    `Gate "gpu" (size ${gpu.size}), shared by thumbnails and reports: at most ${gpu.peak} of their jobs ran at once.`,
    `Job ${jobs.scheduledId}, due tomorrow, was cancelled while it waited.`,
    `Dead-job alerts: ${alerts.length}${alerts.length ? ` (${alerts.map((a) => a.dedupeKey).join(', ')})` : ''}.`,
    '',
    'Look around:',
    ...['jobs --state dead', `job ${firstDeadId(records) ?? jobs.scheduledId}`, 'stats'].map(
      (args) => `  ${outcome.invocation} ${args}${outcome.connectionArgs}`,
    ),
  ];
  return lines;
}

/** One line per distinct path (and final error code), most common first, with an example. */
async function pathLines(store: JobStore, records: readonly JobRecord[], paint: Paint): Promise<string[]> {
  const groups = new Map<string, { count: number; path: string; example: JobRecord; why: string }>();
  for (const job of records) {
    const events = await store.getJobEvents({ id: job.id });
    const path = historyPath(events);
    // The error that explains the path: the final one, else the first that caused a retry.
    const error = job.error ?? events.find((e) => e.error)?.error ?? null;
    const key = `${path}|${error?.code ?? ''}`;
    const group = groups.get(key);
    if (group) group.count += 1;
    else groups.set(key, { count: 1, path, example: job, why: error ? truncate(errorText(error), 60) : '' });
  }
  const sorted = [...groups.values()].sort((a, b) => b.count - a.count || a.path.length - b.path.length);
  const pathWidth = Math.max(...sorted.map((g) => g.path.length));
  const columns = process.stdout.isTTY ? process.stdout.columns : undefined;
  return sorted.flatMap(({ count, path, example, why }) => {
    const head = `  ${String(count).padStart(3)}×  `;
    const label = `job ${example.id} ${example.queue}/${example.kind}${why ? ` · ${why}` : ''}`;
    // The example under its path when one line would wrap on this terminal.
    if (columns !== undefined && head.length + pathWidth + 2 + label.length > columns) {
      return [`${head}${path}`, `${' '.repeat(head.length)}${paint('dim', truncate(label, columns - head.length))}`];
    }
    return [`${head}${path.padEnd(pathWidth)}  ${paint('dim', label)}`];
  });
}

function firstDeadId(records: readonly JobRecord[]): string | undefined {
  return records.find((job) => job.state === 'dead')?.id;
}
