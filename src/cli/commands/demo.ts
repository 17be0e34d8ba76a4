import { setTimeout as sleep } from 'node:timers/promises';
import { Command } from 'commander';
import type { JobStore } from '../../adapters/store.js';
import type { DeadJobAlert } from '../../supervisor/alerts.js';
import { FINAL_JOB_STATES, type JobRecord, type Logger } from '../../types.js';
import { CliError, EXIT } from '../cli-error.js';
import { addConnectionOptions, type ConnectionOptions, type OpenedStore, withStore } from '../connection.js';
import { enqueueDemoJobs } from '../demo/demo-jobs.js';
import { createDemoQueues } from '../demo/demo-queues.js';
import { createProgressView, emptyCounts, type StateCounts } from '../demo/progress.js';
import { demoSummary } from '../demo/summary.js';
import { print } from '../output.js';

const POLL_MS = 100;
/** The demo takes a few seconds; this long means something is wrong. */
const GIVE_UP_MS = 60_000;
/** When the demo cancels the job it scheduled for tomorrow. */
const CANCEL_AT_MS = 1_000;

export function demoCommand(): Command {
  return addConnectionOptions(new Command('demo'), { useEnv: false })
    .summary('run a realistic mix of jobs with live progress, then a summary')
    .description(
      'Run a realistic mix of jobs (successes, retries, a deadline, permanent failures, an unknown kind, unique keys, a shared gate) ' +
        'on the embedded store, with live progress, then a summary of what happened. $DATABASE_URL is ignored: pass --database-url to run it on PostgreSQL.',
    )
    .action((options: ConnectionOptions) =>
      withStore(options, (opened) => runDemo(opened, hintArgs(options)), { useEnv: false, migrate: true }),
    );
}

async function runDemo({ store, label }: OpenedStore, connectionArgs: string): Promise<void> {
  // Imported here, not at the top: the other commands' start-up need not load XState.
  const { createSupervisor } = await import('../../supervisor/supervisor.js');
  const { queues, gates, gpu } = createDemoQueues();
  const alerts: DeadJobAlert[] = [];
  const logger = quietLogger();
  const supervisor = createSupervisor({ store, queues, gates, logger, pollIntervalMs: POLL_MS, onDead: (alert) => void alerts.push(alert) });
  const jobs = await enqueueDemoJobs(store, queues);
  print(`jobvisor demo: ${jobs.ids.size} jobs on ${queues.length} queues (${queues.map((q) => q.name).join(', ')}), store ${label}.`);
  print('Each claimed job runs as an XState actor. Some succeed, some fail and retry, one hangs past its deadline,');
  print('one fails for good, one has a kind no handler knows; thumbnails and reports share a "gpu" gate.');
  print();

  const interrupted = new AbortController();
  const onSignal = () => interrupted.abort();
  process.once('SIGINT', onSignal);
  const view = createProgressView(process.stdout);
  const startedAt = Date.now();
  const tracker = createTracker(store, jobs.ids);
  await supervisor.start();
  let cancelled = false;
  let done = false;
  let records: JobRecord[];
  try {
    for (;;) {
      const elapsedMs = Date.now() - startedAt;
      if (!cancelled && elapsedMs >= CANCEL_AT_MS) {
        await store.cancelJob({ id: jobs.scheduledId });
        cancelled = true;
      }
      records = await tracker.poll();
      const finished = records.filter((job) => FINAL_JOB_STATES.includes(job.state)).length;
      view.update({ queues: countByQueue(records, queues.map((q) => q.name)), finished, total: records.length, elapsedMs });
      done = cancelled && finished === records.length;
      if (done) break;
      if (interrupted.signal.aborted) throw new CliError(EXIT.interrupted, 'demo interrupted');
      if (elapsedMs > GIVE_UP_MS) {
        throw new CliError(EXIT.failure, `demo did not finish in ${GIVE_UP_MS / 1000} s${logger.lastError ? ` (last error: ${logger.lastError})` : ''}`);
      }
      await sleep(POLL_MS);
    }
  } finally {
    view.finish(done);
    process.off('SIGINT', onSignal);
    await supervisor.stop({ graceMs: interrupted.signal.aborted ? 0 : 1_000 });
  }
  const invocation = process.env.npm_lifecycle_event === 'start' ? 'npm run cli --' : 'npx jobvisor';
  const summary = await demoSummary(store, { jobs, records, alerts, gpu, elapsedMs: Date.now() - startedAt, invocation, connectionArgs });
  for (const line of summary) print(line);
}

/** This run's jobs as the store has them; a final job is not read again. */
function createTracker(store: JobStore, ids: ReadonlySet<string>) {
  const latest = new Map<string, JobRecord>();
  return {
    async poll(): Promise<JobRecord[]> {
      for (const id of ids) {
        if (FINAL_JOB_STATES.includes(latest.get(id)?.state ?? 'pending')) continue;
        const job = await store.getJob({ id });
        if (job) latest.set(id, job);
      }
      return [...latest.values()];
    },
  };
}

function countByQueue(records: readonly JobRecord[], queueNames: readonly string[]): Map<string, StateCounts> {
  const byQueue = new Map(queueNames.map((name) => [name, emptyCounts()]));
  for (const job of records) byQueue.get(job.queue)![job.state] += 1;
  return byQueue;
}

/** The supervisor's logs would tear through the live view: keep only the last error, for
 *  the message if the demo gets stuck. */
function quietLogger(): Logger & { lastError: string | undefined } {
  const logger = {
    lastError: undefined as string | undefined,
    debug() {},
    info() {},
    warn() {},
    error(obj: object, msg?: string) {
      const err = (obj as { err?: unknown }).err;
      logger.lastError = [msg, err instanceof Error ? err.message : undefined].filter(Boolean).join(': ');
    },
  };
  return logger;
}

/** The options to repeat in the summary's hints, so that they open the same store. */
function hintArgs(options: ConnectionOptions): string {
  return [
    options.dataDir !== undefined ? ` --data-dir ${options.dataDir}` : '',
    options.databaseUrl !== undefined ? ' --database-url <url>' : '',
    options.schema !== 'jobvisor' ? ` --schema ${options.schema}` : '',
  ].join('');
}
