import type { AlertClaim } from '../adapters/store.js';
import type { JobErrorInfo, JobRecord, Logger } from '../types.js';

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
  /** Alerts with this key that the throttle held back since the last one sent, by any
   *  worker on the store. */
  suppressed: number;
}

export type DeadJobSink = (alert: DeadJobAlert) => void | Promise<void>;

export interface DeadJobAlerterOptions {
  sink: DeadJobSink | undefined;
  /** The same dedupe key alerts at most once per window, across every worker on the store. */
  throttleMs: number;
  /** The store's compare-and-set on the key's row (`JobStore.claimAlert`). */
  claimAlert(params: { key: string; windowMs: number }): Promise<AlertClaim>;
  logger: Logger;
  /** The natural key of a job (the queue's `alertKey`), if it has one. */
  alertKey(job: JobRecord): string | undefined;
}

/** Calls the sink once per dead job, at most once per dedupe key per throttle window across
 *  every worker on the store. A user callback that throws (the queue's alertKey, the sink) is
 *  logged, never allowed to disturb the worker: a key that cannot be made falls back to the
 *  queue and kind, and the alert still goes out. If the store cannot be asked, the alert goes
 *  out too: a duplicate is better than a dead job nobody hears of. */
export function createDeadJobAlerter(options: DeadJobAlerterOptions): (job: JobRecord, error: JobErrorInfo | null) => void {
  return (job, error) => {
    const { sink, throttleMs, logger } = options;
    logger.warn(
      { jobId: job.id, queue: job.queue, kind: job.kind, attempt: job.attempt, code: error?.code, reason: error?.message },
      'job is dead',
    );
    if (!sink) return;
    const dedupeKey = `job_dead:${job.queue}:${job.kind}:${targetOf(job, options)}`;
    void options
      .claimAlert({ key: dedupeKey, windowMs: throttleMs })
      .catch((storeError: unknown): AlertClaim => {
        logger.warn({ err: storeError, dedupeKey }, 'the store could not dedupe a dead-job alert; sending it anyway');
        return { send: true, suppressed: 0 };
      })
      .then((claim) => {
        if (!claim.send) return;
        const alert: DeadJobAlert = {
          kind: 'job_dead',
          dedupeKey,
          title: `[${job.queue}/${job.kind}] job ${job.id} is dead`,
          detail: `job_id=${job.id} attempts=${job.attempt}/${job.maxAttempts}\n${error ? `${error.code}: ${error.message}` : ''}`,
          job,
          error,
          suppressed: claim.suppressed,
        };
        return sink(alert);
      })
      .catch((sinkError: unknown) => logger.error({ err: sinkError, dedupeKey }, 'dead-job alert sink failed'));
  };
}

/** The job's natural key, or '' when the queue has none or its alertKey throws. */
function targetOf(job: JobRecord, options: DeadJobAlerterOptions): string {
  try {
    const key = options.alertKey(job);
    return typeof key === 'string' ? key : '';
  } catch (error) {
    options.logger.error({ err: error, jobId: job.id, queue: job.queue }, "the queue's alertKey threw; the alert goes out keyed by queue and kind");
    return '';
  }
}
