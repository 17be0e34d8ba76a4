/** How job and history rows come out of SQL and become `JobRecord` / `JobEvent`. */
import type { JobErrorInfo, JobEvent, JobRecord, JobState } from '../../types.js';

/** The select list of a job row under `alias`. Ids and tokens as text: int8 would arrive as
 *  a string from `pg` and as a number from PGlite, and a token is compared as text. */
export function jobColumns(alias: string): string {
  return [
    `${alias}.id::text as id`,
    `${alias}.queue`,
    `${alias}.kind`,
    `${alias}.payload`,
    `${alias}.state`,
    `${alias}.priority`,
    `${alias}.run_at`,
    `${alias}.attempt`,
    `${alias}.max_attempts`,
    `${alias}.unique_key`,
    `${alias}.concurrency_key`,
    `${alias}.worker_id`,
    `${alias}.lease_token::text as lease_token`,
    `${alias}.lease_expires_at`,
    `${alias}.result`,
    `${alias}.error`,
    `${alias}.created_at`,
    `${alias}.updated_at`,
    `${alias}.finished_at`,
    `${alias}.expires_at`,
    `${alias}.cancel_requested_at`,
    `${alias}.progress_percent`,
    `${alias}.progress_message`,
    `${alias}.progress_at`,
    `${alias}.trace_context`,
  ].join(', ');
}

export interface JobRow {
  id: string;
  queue: string;
  kind: string;
  payload: unknown;
  state: JobState;
  priority: number;
  run_at: Date;
  attempt: number;
  max_attempts: number;
  unique_key: string | null;
  concurrency_key: string | null;
  worker_id: string | null;
  lease_token: string | null;
  lease_expires_at: Date | null;
  result: unknown;
  error: JobErrorInfo | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
  expires_at: Date | null;
  cancel_requested_at: Date | null;
  progress_percent: number | null;
  progress_message: string | null;
  progress_at: Date | null;
  trace_context: Record<string, string> | null;
}

export function toJobRecord(row: JobRow): JobRecord {
  return {
    id: row.id,
    queue: row.queue,
    kind: row.kind,
    payload: row.payload,
    state: row.state,
    priority: row.priority,
    runAt: row.run_at,
    attempt: row.attempt,
    maxAttempts: row.max_attempts,
    uniqueKey: row.unique_key,
    concurrencyKey: row.concurrency_key,
    workerId: row.worker_id,
    leaseToken: row.lease_token,
    leaseExpiresAt: row.lease_expires_at,
    result: row.result,
    error: row.error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
    expiresAt: row.expires_at,
    cancelRequestedAt: row.cancel_requested_at,
    progress:
      row.progress_at === null
        ? null
        : { percent: row.progress_percent!, message: row.progress_message, at: row.progress_at },
    traceContext: row.trace_context,
  };
}

export interface JobEventRow {
  job_id: string;
  from_state: JobState | null;
  to_state: JobState;
  attempt: number;
  worker_id: string | null;
  at: Date;
  error: JobErrorInfo | null;
}

export function toJobEvent(row: JobEventRow): JobEvent {
  return {
    jobId: row.job_id,
    fromState: row.from_state,
    toState: row.to_state,
    attempt: row.attempt,
    workerId: row.worker_id,
    at: row.at,
    error: row.error,
  };
}

const MAX_BIGINT = 9223372036854775807n;

/** A job id as the `bigint` column takes it, or null for a string that no job has as its id
 *  ("abc", "007", "-1"): such an id names no job, and passing it through would make the cast
 *  fail the whole statement. */
export function toDbId(id: string): string | null {
  return /^[1-9]\d{0,18}$/.test(id) && BigInt(id) <= MAX_BIGINT ? id : null;
}
