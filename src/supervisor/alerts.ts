import type { Clock, JobErrorInfo, JobRecord, Logger } from '../types.js';

/** What the alert sink receives when a job goes dead (attempts spent, permanent error,
 *  deadline on the last attempt, or lease expired with no attempt left). */
export interface DeadJobAlert {
  kind: 'job_dead';
  /** "Does the same target keep dying?": built from the job's natural key, never its id. */
  dedupeKey: string;
  title: string;
  detail: string;
  job: JobRecord;
  error: JobErrorInfo | null;
  /** Alerts with this key that the throttle held back since the last one sent. */
  suppressed: number;
}

export type DeadJobSink = (alert: DeadJobAlert) => void | Promise<void>;

export interface DeadJobAlerterOptions {
  sink: DeadJobSink | undefined;
  /** The same dedupe key alerts at most once per window. */
  throttleMs: number;
  clock: Clock;
  logger: Logger;
  /** The natural key of a job (the queue's `alertKey`), if it has one. */
  alertKey(job: JobRecord): string | undefined;
}

/** Calls the sink once per dead job, at most once per dedupe key per throttle window. A sink
 *  that throws is logged, never allowed to disturb the worker. */
export function createDeadJobAlerter(options: DeadJobAlerterOptions): (job: JobRecord, error: JobErrorInfo | null) => void {
  const lastSent = new Map<string, { at: number; suppressed: number }>();
  return (job, error) => {
    const { sink, throttleMs, clock, logger } = options;
    const target = options.alertKey(job) ?? '';
    const dedupeKey = `job_dead:${job.queue}:${job.kind}:${target}`;
    const now = clock.now();
    const last = lastSent.get(dedupeKey);
    logger.warn(
      { jobId: job.id, queue: job.queue, kind: job.kind, attempt: job.attempt, code: error?.code, reason: error?.message },
      'job is dead',
    );
    if (!sink) return;
    if (last && now - last.at < throttleMs) {
      last.suppressed += 1;
      return;
    }
    // Forget keys whose window has passed, so the map stays as small as the alert rate.
    for (const [key, entry] of lastSent) if (now - entry.at >= throttleMs) lastSent.delete(key);
    lastSent.set(dedupeKey, { at: now, suppressed: 0 });
    const alert: DeadJobAlert = {
      kind: 'job_dead',
      dedupeKey,
      title: `[${job.queue}/${job.kind}] job ${job.id} is dead`,
      detail: `job_id=${job.id} attempts=${job.attempt}/${job.maxAttempts}\n${error ? `${error.code}: ${error.message}` : ''}`,
      job,
      error,
      suppressed: last?.suppressed ?? 0,
    };
    Promise.resolve()
      .then(() => sink(alert))
      .catch((sinkError: unknown) => logger.error({ err: sinkError, dedupeKey }, 'dead-job alert sink failed'));
  };
}
