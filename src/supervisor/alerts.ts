import type { AlertClaim } from '../adapters/store.js';
import { InvalidOptionError } from '../errors.js';
import { jobLogLine } from '../telemetry/job-log.js';
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
  /** The natural key of a job (the queue's `alertKey`), if it has one: whatever the user's
   *  function returns, checked here. */
  alertKey(job: JobRecord): unknown;
}

/** Calls the sink once per dead job, at most once per dedupe key per throttle window across
 *  every worker on the store. A user callback that throws (the queue's alertKey, the sink) is
 *  logged, never allowed to disturb the worker. A key that cannot be made (alertKey threw, or
 *  returned no string or number) is logged, and the alert goes out unthrottled, keyed by queue
 *  and kind: held back under a shared key it would hide other targets' deaths. If the store
 *  cannot be asked, the alert goes out too: a duplicate is better than a dead job nobody hears
 *  of. */
export function createDeadJobAlerter(options: DeadJobAlerterOptions): (job: JobRecord, error: JobErrorInfo | null) => void {
  return (job, error) => {
    const { sink, throttleMs, logger } = options;
    const line = jobLogLine(job, 'dead', 'is dead', error);
    logger.warn(line.fields, line.message);
    if (!sink) return;
    const target = targetOf(job, options);
    const dedupeKey = `job_dead:${job.queue}:${job.kind}:${target ?? ''}`;
    const claim: Promise<AlertClaim> =
      target === null ? Promise.resolve({ send: true, suppressed: 0 }) : options.claimAlert({ key: dedupeKey, windowMs: throttleMs });
    void claim
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

/** The job's natural key: a string as it is, a number (or bigint) as its decimal text ('' for
 *  none: undefined, null or '', alerting by queue and kind); null when none can be made, which
 *  is logged. */
function targetOf(job: JobRecord, options: DeadJobAlerterOptions): string | null {
  const what = `queue "${job.queue}" alertKey`;
  let key: unknown;
  try {
    key = options.alertKey(job);
  } catch (error) {
    options.logger.error({ err: error, jobId: job.id, queue: job.queue }, `the ${what} threw; the alert goes out unthrottled, keyed by queue and kind`);
    return null;
  }
  if (typeof key === 'string') return key;
  if (key === undefined || key === null) return '';
  if ((typeof key === 'number' && Number.isFinite(key)) || typeof key === 'bigint') return String(key);
  const error = new InvalidOptionError(what, `returned ${describeValue(key)} for job ${job.id}; it must return a string, a finite number or undefined`);
  options.logger.error({ err: error, jobId: job.id, queue: job.queue }, `the ${what} gave no usable key; the alert goes out unthrottled, keyed by queue and kind`);
  return null;
}

function describeValue(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
