/**
 * The CLI worker's log: pino, as JSON lines on stdout, or (`pretty`, the default on a
 * terminal) one readable line per entry through pino-pretty. Besides what the supervisor
 * logs, it has one entry per job event of this process, read from XState's inspection
 * events of the job actors: the supervisor needs no hook for it, and runs no slower without.
 *
 * Loaded by the worker command only: the other commands start without pino-pretty or XState.
 * pino-pretty is an optional peer: without it, pretty falls back to JSON lines, with a notice.
 */
import { pino, type Logger as Pino } from 'pino';
import type { AnyMachineSnapshot, InspectionEvent } from 'xstate';
import { PeerDependencyMissingError } from '../errors.js';
import { type JobActorFinalState, type JobMachineContext, jobMachine } from '../machines/job-machine.js';
import { jobLogLine } from '../telemetry/job-log.js';
import type { JobErrorInfo, Logger } from '../types.js';
import { importOptionalPeer } from './optional-peer.js';
import { notice } from './output.js';

export type LogFormat = 'pretty' | 'json';

/** Fields of job events, which the pretty line says in its message instead. */
const JOB_EVENT_FIELDS = ['job', 'jobEvent', 'durationMs', 'delayMs', 'error'];

export async function workerLogger(level: string, format: LogFormat): Promise<Pino> {
  const options = { name: 'jobvisor', level };
  // On process.stdout, not a file descriptor of pino's own, so that a closed stdout is
  // handled in one place (output.ts).
  if (format === 'json') return pino(options, process.stdout);
  let pretty: typeof import('pino-pretty');
  try {
    ({ default: pretty } = await importOptionalPeer('pino-pretty', 'readable log lines', () => import('pino-pretty')));
  } catch (error) {
    if (!(error instanceof PeerDependencyMissingError)) throw error;
    notice(`${error.message}; writing JSON lines`);
    return pino(options, process.stdout);
  }
  return pino(
    options,
    pretty({
      destination: process.stdout,
      sync: true,
      colorize: process.stdout.isTTY === true && process.env.NO_COLOR === undefined,
      singleLine: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: ['pid', 'hostname', 'name', ...JOB_EVENT_FIELDS].join(','),
    }),
  );
}

/** How each way an attempt ends is told; `dead` and `lost` the supervisor logs itself. */
const ENDINGS: Partial<Record<JobActorFinalState | 'released', { level: 'info' | 'warn'; says: string }>> = {
  completed: { level: 'info', says: 'completed' },
  retrying: { level: 'warn', says: 'failed, will retry' },
  released: { level: 'warn', says: 'released for retry, no attempt spent' },
  snoozed: { level: 'info', says: 'snoozed' },
  skipped: { level: 'info', says: 'skipped' },
  cancelled: { level: 'info', says: 'cancelled' },
  waiting: { level: 'info', says: 'added children, continues when they are done' },
  sleeping: { level: 'info', says: 'sleeps or waits for a signal, its slot given back' },
};

/** The `inspect` observer that logs each job's start (at debug) and end. */
export function jobEventLog(logger: Logger): (event: InspectionEvent) => void {
  const startedAt = new WeakMap<object, number>();
  const ended = new WeakSet<object>();
  return (event) => {
    if (event.type !== '@xstate.snapshot') return;
    const snapshot = event.snapshot as AnyMachineSnapshot;
    if (snapshot.machine !== jobMachine || ended.has(event.actorRef)) return;
    const context = snapshot.context as JobMachineContext;
    const { job } = context;
    if (snapshot.status === 'active') {
      if (!startedAt.has(event.actorRef) && snapshot.matches('running')) {
        startedAt.set(event.actorRef, Math.round(performance.now()));
        const line = jobLogLine(job, 'started', 'started', null);
        logger.debug(line.fields, line.message);
      }
      return;
    }
    if (snapshot.status !== 'done') return;
    ended.add(event.actorRef);
    const outcome = context.outcome;
    const final = snapshot.value as JobActorFinalState;
    const jobEvent = final === 'retrying' && outcome?.state === 'released' ? 'released' : final;
    const ending = ENDINGS[jobEvent];
    if (!ending) return;
    // A snooze or a release spends no attempt: the row allows one more now, and so does the log.
    const maxAttempts = job.maxAttempts + (jobEvent === 'snoozed' || jobEvent === 'released' ? 1 : 0);
    const began = startedAt.get(event.actorRef);
    const durationMs = began === undefined ? undefined : Math.round(performance.now()) - began;
    const delayMs = outcome && 'delayMs' in outcome ? outcome.delayMs : undefined;
    const details = [...(durationMs === undefined ? [] : [`${durationMs} ms`]), ...(delayMs === undefined ? [] : [`again in ${delayMs} ms`])];
    const error: JobErrorInfo | null = jobEvent === 'completed' ? null : context.error;
    const line = jobLogLine({ ...job, maxAttempts }, jobEvent, ending.says, error, details);
    logger[ending.level](
      { ...line.fields, ...(durationMs === undefined ? {} : { durationMs }), ...(delayMs === undefined ? {} : { delayMs }) },
      line.message,
    );
  };
}
