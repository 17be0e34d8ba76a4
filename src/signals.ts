/**
 * `sendSignal`: the public way to deliver a signal to a job that waits, or will wait, for it
 * (docs/durable-jobs.md).
 */
import type { JobStore, SignalDelivery, SqlClient } from './adapters/store.js';

export interface SendSignalOptions {
  /** A `pg` client in a transaction of yours: the signal commits or rolls back with it
   *  (PostgreSQL and PGlite stores). */
  client?: SqlClient;
}

/**
 * Delivers `payload` under `name` to job `jobId`: wakes it at once if it waits for that name
 * (`delivered: 'woke'`), else keeps it in the job's mailbox (`'queued'`) for the job's next
 * `waitForSignal(name)`; several signals of one name wait in order, one taken per wait.
 * Throws JobNotFoundError for no such job, JobEndedError for one that has ended,
 * InvalidOptionError / InvalidPayloadError for a bad name or payload; nothing is written then.
 */
export function sendSignal(
  store: Pick<JobStore, 'sendSignal'>,
  jobId: string,
  name: string,
  payload: unknown = {},
  options: SendSignalOptions = {},
): Promise<SignalDelivery> {
  return store.sendSignal({ id: jobId, name, payload, ...(options.client ? { client: options.client } : {}) });
}
