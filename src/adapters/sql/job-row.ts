/**
 * How job and history rows come out of SQL and become `JobRecord` / `JobEvent`. Total: rows
 * written around the library (by SQL, by hand, by an older version) hold what its checks
 * never saw, and a read or a claim must answer whatever a row holds (see `readTime`).
 */
import type { JobErrorInfo, JobEvent, JobRecord, JobState } from '../../types.js';
import type { EnqueueJob } from '../store.js';
import { EARLIEST_DATE, LATEST_DATE } from '../../validation.js';
import { parseSteps } from './job-steps.js';
import type { SqlSchema } from './sql-schema.js';
import { parseTimestamptz } from './timestamptz.js';

/** A job row's columns, in the order every select list gives them. */
const JOB_COLUMNS = [
  'id', 'queue', 'kind', 'payload', 'state', 'priority', 'run_at', 'attempt', 'max_attempts', 'unique_key',
  'concurrency_key', 'worker_id', 'lease_token', 'lease_expires_at', 'result', 'error', 'created_at', 'updated_at',
  'finished_at', 'expires_at', 'cancel_requested_at', 'progress_percent', 'progress_message', 'progress_at',
  'trace_context', 'steps', 'wait_signal', 'tenant', 'debounce_key',
] as const;

type ColumnSelect = (alias: string) => string;

/** Ids and tokens as text: int8 would arrive as a string from `pg` and as a number from
 *  PGlite, and a token is compared as text. */
const AS_TEXT: Partial<Record<(typeof JOB_COLUMNS)[number], ColumnSelect>> = {
  id: (alias) => `${alias}.id::text as id`,
  lease_token: (alias) => `${alias}.lease_token::text as lease_token`,
};

const NO_STEPS = "'[]'::jsonb";
/** A row of job_steps as the compact entry job-steps.ts parses (times in epoch ms); its
 *  one-letter kind (migration 0030) read back as the entry's kind and a wait's status. */
const STEP_ENTRY = `jsonb_build_object('n', t.name,
  'k', case t.kind when 's' then 'step' when 'z' then 'sleep' when 'w' then 'signal' when 'r' then 'signal' when 't' then 'signal' end,
  'a', floor(extract(epoch from t.at) * 1000), 'v', t.value::jsonb, 'u', floor(extract(epoch from t.until) * 1000), 's', t.signal,
  'r', case t.kind when 'w' then 'waiting' when 'r' then 'received' when 't' then 'timedOut' end)`;

/** What a list leaves unread: payload, result, steps, lease token and trace context (a large
 *  payload stays in its TOAST table), and of the error only its code and message. */
const UNREAD_IN_LISTS: Partial<Record<(typeof JOB_COLUMNS)[number], ColumnSelect>> = {
  payload: () => 'null::jsonb as payload',
  lease_token: () => 'null::text as lease_token',
  result: () => 'null::jsonb as result',
  error: (alias) =>
    `case when ${alias}.error is null then null else jsonb_build_object('code', ${alias}.error -> 'code', 'message', ${alias}.error -> 'message') end as error`,
  trace_context: () => 'null::jsonb as trace_context',
  steps: () => `${NO_STEPS} as steps`,
};

function selectList(alias: string, ...overrides: Partial<Record<(typeof JOB_COLUMNS)[number], ColumnSelect>>[]): string {
  const pick = (column: (typeof JOB_COLUMNS)[number]) => overrides.find((o) => o[column])?.[column]?.(alias) ?? `${alias}.${column}`;
  return JOB_COLUMNS.map(pick).join(', ');
}

/**
 * How a select list reads a job's steps, which live in job_steps (migration 0027), not in its
 * row: `all` by the job's id (one probe of job_steps_job_idx per row); `none` for rows this
 * statement inserted, which have none; `{ when }` by the id only where the SQL condition
 * holds (a claim asks only for jobs that ran before: a first attempt has no steps, and the
 * drain then pays no probe per job).
 */
export type StepsRead = 'all' | 'none' | { when: string };

/** The select list of a job row under `alias`. */
export function jobColumns(alias: string, s: SqlSchema, steps: StepsRead = 'all'): string {
  const stored = (a: string) =>
    `(select coalesce(jsonb_agg(${STEP_ENTRY} order by t.id), ${NO_STEPS}) from ${s.quoted}.job_steps t where t.job_id = ${a}.id)`;
  const read: ColumnSelect =
    steps === 'none'
      ? () => `${NO_STEPS} as steps`
      : steps === 'all'
        ? (a) => `${stored(a)} as steps`
        : (a) => `case when ${steps.when} then ${stored(a)} else ${NO_STEPS} end as steps`;
  return selectList(alias, AS_TEXT, { steps: read });
}

/** Null in every job column, named as jobColumns names them (a union's rows that are not jobs). */
export function nullJobColumns(): string {
  return JOB_COLUMNS.map((column) => `null as ${column}`).join(', ');
}

/** jobColumns for a list (scanJobs): the same columns, with what a list never shows unread. */
export function listingColumns(alias: string): string {
  return selectList(alias, UNREAD_IN_LISTS, AS_TEXT);
}

/** A `timestamptz` as a driver gives it: a Date, ±Infinity for ±infinity (`pg` and PGlite
 *  both), or its text from a pool whose parsers were told to leave it as text. */
export type StoredTime = Date | number | string;

export interface JobRow {
  id: string;
  queue: string;
  kind: string;
  payload: unknown;
  state: JobState;
  priority: number;
  run_at: StoredTime;
  attempt: number;
  max_attempts: number;
  unique_key: string | null;
  concurrency_key: string | null;
  worker_id: string | null;
  lease_token: string | null;
  lease_expires_at: StoredTime | null;
  result: unknown;
  error: JobErrorInfo | null;
  created_at: StoredTime;
  updated_at: StoredTime;
  finished_at: StoredTime | null;
  expires_at: StoredTime | null;
  cancel_requested_at: StoredTime | null;
  progress_percent: number | null;
  progress_message: string | null;
  progress_at: StoredTime | null;
  trace_context: Record<string, string> | null;
  steps: unknown;
  wait_signal: string | null;
  tenant: string | null;
  debounce_key: string | null;
}

/** The row as a JobRecord; a time it cannot show as it is (see `readTime`) is shown as the
 *  nearest one it can. */
export function toJobRecord(row: JobRow): JobRecord {
  return buildJobRecord(row, undefined);
}

/** The row as `toJobRecord` reads it, and what in it was not as stored: a claim does not
 *  run a job whose row has any problem (claim-jobs.ts). */
export function checkedJobRecord(row: JobRow): { job: JobRecord; problems: string[] } {
  const problems: string[] = [];
  return { job: buildJobRecord(row, problems), problems };
}

function buildJobRecord(row: JobRow, problems: string[] | undefined): JobRecord {
  const time = (value: StoredTime, column: string) => readTime(value, column, problems);
  const maybe = (value: StoredTime | null, column: string) => (value === null ? null : readTime(value, column, problems));
  return {
    id: row.id,
    queue: row.queue,
    kind: row.kind,
    payload: row.payload,
    state: row.state,
    priority: row.priority,
    runAt: time(row.run_at, 'run_at'),
    attempt: row.attempt,
    maxAttempts: row.max_attempts,
    uniqueKey: row.unique_key,
    concurrencyKey: row.concurrency_key,
    workerId: row.worker_id,
    leaseToken: row.lease_token,
    leaseExpiresAt: maybe(row.lease_expires_at, 'lease_expires_at'),
    result: row.result,
    error: row.error,
    createdAt: time(row.created_at, 'created_at'),
    updatedAt: time(row.updated_at, 'updated_at'),
    finishedAt: maybe(row.finished_at, 'finished_at'),
    expiresAt: maybe(row.expires_at, 'expires_at'),
    cancelRequestedAt: maybe(row.cancel_requested_at, 'cancel_requested_at'),
    progress:
      row.progress_at === null
        ? null
        : { percent: row.progress_percent!, message: row.progress_message, at: time(row.progress_at, 'progress_at') },
    traceContext: row.trace_context,
    steps: parseSteps(row.steps),
    // Only a sleeping job waits: a cancel or the reaper ends one without clearing the name.
    waitingForSignal: row.state === 'sleeping' ? row.wait_signal : null,
    tenant: row.tenant,
    debounceKey: row.debounce_key,
  };
}

/** What a job just inserted by enqueue_new_jobs holds that its input does not give as is:
 *  what the database decided, and its payload and trace context as stored. */
export interface InsertedJob {
  id: string;
  createdMs: number;
  runMs: number;
  expiresMs: number | null;
  payload: unknown;
  traceContext: Record<string, string> | null;
}

/** A job just inserted without a unique key (not fair, not debounced), as toJobRecord would
 *  read its row: every column the statement did not answer holds the input as given or the
 *  table's default for a new job. */
export function insertedJobRecord(job: EnqueueJob, row: InsertedJob): JobRecord {
  const created = new Date(row.createdMs);
  return {
    id: row.id,
    queue: job.queue,
    kind: job.kind,
    payload: row.payload,
    state: 'pending',
    priority: job.priority ?? 0,
    runAt: new Date(row.runMs),
    attempt: 0,
    maxAttempts: job.maxAttempts,
    uniqueKey: null,
    concurrencyKey: job.concurrencyKey ?? null,
    workerId: null,
    leaseToken: null,
    leaseExpiresAt: null,
    result: null,
    error: null,
    createdAt: created,
    updatedAt: new Date(created.getTime()),
    finishedAt: null,
    expiresAt: row.expiresMs === null ? null : new Date(row.expiresMs),
    cancelRequestedAt: null,
    progress: null,
    traceContext: row.traceContext,
    steps: [],
    waitingForSignal: null,
    tenant: null,
    debounceKey: null,
  };
}

/**
 * A stored time as a `Date` in the years 1 to 9999: every time the library writes is one, and
 * every reader (ordering, due-ness, `toISOString`, the CLI, the inspector) can take it. Any
 * other (`-infinity`, `infinity`, a year past 9999 or before 1, written around the library)
 * reads as the nearest such time, 0001-01-01T00:00:00.000Z or 9999-12-31T23:59:59.999Z, which
 * orders and compares with now as the stored value does; what it was is pushed to `problems`.
 */
export function readTime(value: StoredTime, column: string, problems?: string[]): Date {
  if (value instanceof Date) {
    const t = value.getTime();
    if (t >= EARLIEST_DATE && t <= LATEST_DATE) return value;
  }
  return nearestTime(value, column, problems);
}

function nearestTime(value: StoredTime, column: string, problems: string[] | undefined): Date {
  const parsed = typeof value === 'string' ? parseTimestamptz(value) : value;
  if (typeof value === 'string' && parsed instanceof Date && !Number.isNaN(parsed.getTime())) {
    return readTime(parsed, column, problems);
  }
  problems?.push(`${column} is ${shownTime(value, parsed)}, not a time in the years 1 to 9999`);
  // An Invalid Date is a year past what a Date holds (PostgreSQL's go to 294276), or text
  // no timestamptz has: taken as the latest.
  const early = parsed === -Infinity || (parsed instanceof Date && parsed.getTime() < EARLIEST_DATE);
  return new Date(early ? EARLIEST_DATE : LATEST_DATE);
}

function shownTime(value: StoredTime, parsed: Date | number): string {
  if (parsed === Infinity) return 'infinity';
  if (parsed === -Infinity) return '-infinity';
  if (typeof value === 'string') return JSON.stringify(value);
  if (parsed instanceof Date && !Number.isNaN(parsed.getTime())) return parsed.toISOString();
  return 'past the year 275760';
}

export interface JobEventRow {
  job_id: string;
  from_state: JobState | null;
  to_state: JobState;
  attempt: number;
  worker_id: string | null;
  at: StoredTime;
  error: JobErrorInfo | null;
}

export function toJobEvent(row: JobEventRow): JobEvent {
  return {
    jobId: row.job_id,
    fromState: row.from_state,
    toState: row.to_state,
    attempt: row.attempt,
    workerId: row.worker_id,
    at: readTime(row.at, 'at'),
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
