/**
 * One shape for every log line about a job, whoever writes it (the supervisor's dead and lost
 * lines, the CLI worker's start and end lines): `job` {id, queue, kind, attempt, maxAttempts},
 * `jobEvent` (started, completed, retrying, dead, lost …), `error` {code, message, …} when
 * there is one, and a message that starts `job <id> <queue>/<kind>`.
 */
import type { JobErrorInfo } from '../types.js';

export interface LoggedJob {
  readonly id: string;
  readonly queue: string;
  readonly kind: string;
  readonly attempt: number;
  readonly maxAttempts: number;
}

export interface JobLogLine {
  readonly fields: { job: LoggedJob; jobEvent: string; error?: JobErrorInfo };
  /** `job 12 mail/send <says> (attempt 2 of 3<, details>)<: code: message>` */
  readonly message: string;
}

export function jobLogLine(job: LoggedJob, jobEvent: string, says: string, error: JobErrorInfo | null, details: readonly string[] = []): JobLogLine {
  const { id, queue, kind, attempt, maxAttempts } = job;
  const told = [`attempt ${attempt} of ${maxAttempts}`, ...details].join(', ');
  return {
    fields: { job: { id, queue, kind, attempt, maxAttempts }, jobEvent, ...(error ? { error } : {}) },
    message: `job ${id} ${queue}/${kind} ${says} (${told})${error ? `: ${error.code}: ${error.message.replace(/\s*\n\s*/g, ' ')}` : ''}`,
  };
}
