/** A job record as scanJobs lists it (store.ts, JobListing), for every store alike. */
import type { JobRecord } from '../types.js';
import type { JobListing } from './store.js';

export function toJobListing(job: JobRecord): JobListing {
  const { payload, result, steps, leaseToken, traceContext, error, ...rest } = job;
  return { ...rest, error: error ? { code: error.code, message: error.message } : null };
}
