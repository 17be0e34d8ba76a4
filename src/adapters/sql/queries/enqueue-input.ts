import type { EnqueueJob } from '../../store.js';

/** One job of an enqueue as the enqueue statements read it (jsonb_to_recordset's columns;
 *  enqueue-new-jobs.ts resolves its times), `i` its place in the call. Shared by every
 *  statement that inserts jobs: plain, keyed, scheduled, a flow's and a waiting job's children. */
export function toInput(i: number, job: EnqueueJob) {
  return {
    i,
    queue: job.queue,
    kind: job.kind,
    payload: job.payload === undefined ? {} : job.payload,
    priority: job.priority,
    run_at: job.runAt,
    run_in_ms: job.runIn,
    max_attempts: job.maxAttempts,
    unique_key: job.uniqueKey ?? null,
    concurrency_key: job.concurrencyKey ?? null,
    expires_at: job.expiresAt ?? null,
    expires_in_ms: job.expiresIn,
    trace_context: job.traceContext ?? null,
  };
}
