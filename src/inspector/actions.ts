/** Retry, cancel, delete and signal of a job, pause and resume of a queue, as the page asks
 *  for them: each answers what happened or why not. */
import type { JobStore, QueueInfo } from '../adapters/store.js';
import { InvalidOptionError, InvalidPayloadError, JobEndedError, JobNotFoundError } from '../errors.js';
import { sendSignal } from '../signals.js';
import type { Supervisor } from '../supervisor/supervisor.js';
import { HttpError, jsonObjectBody } from './http.js';
import { jobDetail, type JobDetail } from './job-json.js';

export const ACTIONS = ['retry', 'cancel', 'delete'] as const;
export type Action = (typeof ACTIONS)[number];

export interface ActionResult {
  /** What was done, for the page to show. */
  message: string;
  job: JobDetail | null;
}

export async function runAction(
  action: Action,
  id: string,
  store: JobStore,
  supervisor: Supervisor | undefined,
): Promise<ActionResult> {
  switch (action) {
    case 'retry': {
      const answer = await store.retryJob({ id });
      if (!answer) throw notFound(id);
      if (!answer.retried) {
        const { state } = answer.job;
        throw new HttpError(
          409,
          state === 'dead' || state === 'cancelled' || state === 'skipped'
            ? `job ${id} was not retried: a live job of its queue holds its unique key`
            : `job ${id} is ${state}: only dead, cancelled or skipped jobs can be retried`,
        );
      }
      return { message: `job ${id} is pending again`, job: jobDetail(answer.job) };
    }
    case 'cancel': {
      // A supervisor beside us aborts a job it runs at once; otherwise the store cancels a
      // waiting job, or records the request for a running one, which its worker hears (by
      // notification, or at its next lease renewal) and acts on.
      if (supervisor && (await supervisor.cancel(id))) {
        return { message: `job ${id} is being cancelled`, job: await read(store, id) };
      }
      const answer = await store.cancelJob({ id });
      if (!answer) throw notFound(id);
      if (answer.cancelled) return { message: `job ${id} is cancelled`, job: jobDetail(answer.job) };
      const { state, workerId } = answer.job;
      if (state === 'running') {
        return {
          message: `job ${id} is running on worker ${workerId}: it is asked to cancel, and ends cancelled once its worker aborts it`,
          job: jobDetail(answer.job),
        };
      }
      throw new HttpError(409, `job ${id} is ${state}: only pending, retrying, waiting, sleeping or running jobs can be cancelled`);
    }
    case 'delete': {
      const answer = await store.deleteJob({ id });
      if (!answer) throw notFound(id);
      if (!answer.deleted && answer.job.state === 'running') throw new HttpError(409, `job ${id} is running: cancel it first, then delete it`);
      if (!answer.deleted) throw new HttpError(409, `job ${id} is waited for by jobs of its flow: delete it once they have run, or cancel them first`);
      return { message: `job ${id} is deleted`, job: null };
    }
  }
}

/**
 * Sends a signal to job `id` (docs/durable-jobs.md). The body names it: JSON
 * `{"name": …, "payload": …}`, or form fields `name` and `payload` (JSON text); the payload
 * defaults to `{}`. 400 for a bad name or payload, 404 for no such job, 409 for one that ended.
 */
export async function runSignal(id: string, body: string, contentType: string, store: JobStore): Promise<ActionResult> {
  const { name, payload } = signalRequest(body, contentType);
  try {
    // The store checks the name (a string of the allowed characters) and the payload.
    const { delivered, state } = await sendSignal(store, id, name as string, payload);
    const message =
      delivered === 'woke'
        ? `job ${id} woke: signal "${name}" delivered, the job is ${state} again`
        : `job ${id} is ${state}: signal "${name}" kept in its mailbox for its next wait for "${name}"`;
    return { message, job: await read(store, id) };
  } catch (error) {
    if (error instanceof JobNotFoundError) throw notFound(id);
    if (error instanceof JobEndedError) throw new HttpError(409, error.message);
    if (error instanceof InvalidOptionError || error instanceof InvalidPayloadError) throw new HttpError(400, error.message);
    throw error;
  }
}

function signalRequest(body: string, contentType: string): { name: unknown; payload: unknown } {
  if (contentType.startsWith('application/json')) {
    const { name, payload } = jsonObjectBody(body, '{"name": …, "payload": …}');
    return { name, payload: payload === undefined ? {} : payload };
  }
  const form = new URLSearchParams(body);
  const text = form.get('payload');
  if (text === null || text.trim() === '') return { name: form.get('name'), payload: {} };
  try {
    return { name: form.get('name'), payload: JSON.parse(text) as unknown };
  } catch (error) {
    throw new HttpError(400, `payload is not valid JSON: ${(error as Error).message}`);
  }
}

export const QUEUE_ACTIONS = ['pause', 'resume'] as const;
export type QueueAction = (typeof QUEUE_ACTIONS)[number];

export async function runQueueAction(action: QueueAction, queue: string, store: JobStore): Promise<{ message: string; queue: QueueInfo }> {
  if (action === 'pause') {
    const info = await store.pauseQueue({ queue });
    return { message: `queue ${queue} is paused: no worker claims its jobs until it is resumed`, queue: info };
  }
  const info = await store.resumeQueue({ queue });
  return { message: `queue ${queue} is resumed`, queue: info };
}

async function read(store: JobStore, id: string): Promise<JobDetail | null> {
  const job = await store.getJob({ id });
  return job ? jobDetail(job) : null;
}

function notFound(id: string): HttpError {
  return new HttpError(404, `no job with id ${id}`);
}
