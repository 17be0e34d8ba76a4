/**
 * Assertions for any test framework: each resolves with what it found, or rejects with a plain
 * Error saying what was expected and what the store holds instead.
 */
import { isDeepStrictEqual } from 'node:util';
import type { JobStore } from '../adapters/store.js';
import type { HandlerMap, PayloadOf, Queue } from '../queue.js';
import type { JobRecord, JobState } from '../types.js';

const SHOWN = 10;

/** A job of this queue and kind was enqueued (in any state since), with this payload if one is
 *  given (compared as stored: after a JSON round trip). Resolves with the newest such job. */
export async function assertEnqueued<H extends HandlerMap, K extends keyof H & string>(
  store: JobStore,
  queue: Queue<H>,
  kind: K,
  payload?: PayloadOf<H[K]>,
): Promise<JobRecord<PayloadOf<H[K]>>>;
export async function assertEnqueued(store: JobStore, queue: string, kind: string, payload?: unknown): Promise<JobRecord>;
export async function assertEnqueued(store: JobStore, queue: Queue | string, kind: string, payload?: unknown): Promise<JobRecord> {
  const name = typeof queue === 'string' ? queue : queue.name;
  const jobs = await store.listJobs({ queue: name, kind, limit: 1_000 });
  const wanted = payload === undefined ? undefined : JSON.parse(JSON.stringify(payload));
  const match = jobs.find((job) => wanted === undefined || isDeepStrictEqual(job.payload, wanted));
  if (match) return match;
  const what = `no job of kind "${kind}" in queue "${name}" was enqueued${wanted === undefined ? '' : ` with payload ${JSON.stringify(wanted)}`}`;
  if (jobs.length === 0) throw new Error(`${what}; the queue holds no job of that kind`);
  const shown = jobs.slice(0, SHOWN).map((job) => `#${job.id} ${JSON.stringify(job.payload)} (${job.state})`);
  throw new Error(`${what}; the queue holds ${jobs.length === 1 ? '1 job' : `${jobs.length} jobs`} of that kind, newest first: ${shown.join(', ')}${jobs.length > SHOWN ? ', …' : ''}`);
}

/** The job (an id, or anything with one: a row, `enqueue`'s `job`) is in `state`. Resolves
 *  with its row. */
export async function assertJobState(store: JobStore, job: string | { id: string }, state: JobState): Promise<JobRecord> {
  const id = typeof job === 'string' ? job : job.id;
  const row = await store.getJob({ id });
  if (!row) throw new Error(`no job with id ${id}`);
  if (row.state === state) return row;
  const path = (await store.getJobEvents({ id })).map((e) => e.toState).join(' → ');
  const error = row.error ? `; error ${row.error.code}: ${row.error.message}` : '';
  throw new Error(`job ${id} (queue "${row.queue}", kind "${row.kind}") is ${row.state}, expected ${state}${error}; path: ${path}`);
}
