/** What the inspector's API sends of a job: never its lease token (the right to write its
 *  outcome), and in lists neither payload, result nor durable steps. */
import { toJobListing } from '../adapters/job-listing.js';
import type { JobListing } from '../adapters/store.js';
import type { JobErrorInfo, JobRecord } from '../types.js';
import type { HeldJobs, RunningPhase } from './held.js';

export interface JobSummary {
  id: string;
  queue: string;
  kind: string;
  state: JobRecord['state'];
  priority: number;
  attempt: number;
  maxAttempts: number;
  uniqueKey: string | null;
  workerId: string | null;
  runAt: Date;
  leaseExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
  expiresAt: Date | null;
  cancelRequestedAt: Date | null;
  progress: JobRecord['progress'];
  error: { code: string; message: string } | null;
  /** While sleeping for a signal: its name. */
  waitingForSignal: string | null;
  /** A running job: its handler runs (`started`) or it waits in its worker for a slot
   *  (`held`), as of the worker's last heartbeat; null when not running or not known. */
  phase?: RunningPhase | null;
}

export interface JobDetail extends Omit<JobSummary, 'error'> {
  tenant: string | null;
  debounceKey: string | null;
  payload: unknown;
  result: unknown;
  error: JobErrorInfo | null;
  steps: JobRecord['steps'];
}

const MAX_LIST_MESSAGE = 200;

/** A listed job (JobListing), or a whole one read by id, as a list sends it. */
export function jobSummary(job: JobRecord | JobListing, held?: HeldJobs): JobSummary {
  const { error, ...rest } = 'payload' in job ? toJobListing(job) : job;
  const message = error?.message ?? '';
  return {
    ...rest,
    ...(held === undefined ? {} : { phase: held.phase(job) }),
    error: error
      ? { code: error.code, message: message.length > MAX_LIST_MESSAGE ? `${message.slice(0, MAX_LIST_MESSAGE)}…` : message }
      : null,
  };
}

export function jobDetail(job: JobRecord): JobDetail {
  const { leaseToken, ...rest } = job;
  return rest;
}
