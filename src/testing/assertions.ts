/**
 * Assertions for any test framework: each resolves with what it found, or rejects with a plain
 * Error saying what was expected and what the store holds instead. As Oban.Testing and
 * rivertest offer: a job enqueued, none enqueued, exactly these enqueued, each matched on its
 * kind, payload and options.
 */
import { isDeepStrictEqual } from 'node:util';
import type { JobStore } from '../adapters/store.js';
import type { HandlerMap, PayloadOf, Queue } from '../queue.js';
import type { JobRecord, JobState } from '../types.js';

const SHOWN = 10;
/** Jobs of one queue read at most. */
const READ = 1_000;

/** What else an enqueued job must have, beside its kind and payload. Each field given must
 *  equal the job's (`runAt` as the same instant). */
export interface EnqueuedMatch {
  priority?: number;
  runAt?: Date;
  uniqueKey?: string | null;
  maxAttempts?: number;
  concurrencyKey?: string | null;
  expiresAt?: Date | null;
  state?: JobState;
}

/** One job of `assertManyEnqueued`: its kind, and optionally its payload and options. */
export type ExpectedJob<H extends HandlerMap = HandlerMap> = {
  [K in keyof H & string]: { kind: K; payload?: PayloadOf<H[K]> } & EnqueuedMatch;
}[keyof H & string];

/** A job of this queue and kind was enqueued (in any state since), with this payload if one is
 *  given (compared as stored: after a JSON round trip) and the options in `match`. Resolves
 *  with the newest such job. */
export async function assertEnqueued<H extends HandlerMap, K extends keyof H & string>(
  store: JobStore,
  queue: Queue<H>,
  kind: K,
  payload?: PayloadOf<H[K]>,
  match?: EnqueuedMatch,
): Promise<JobRecord<PayloadOf<H[K]>>>;
export async function assertEnqueued(store: JobStore, queue: string, kind: string, payload?: unknown, match?: EnqueuedMatch): Promise<JobRecord>;
export async function assertEnqueued(
  store: JobStore,
  queue: Queue | string,
  kind: string,
  payload?: unknown,
  match: EnqueuedMatch = {},
): Promise<JobRecord> {
  const name = queueName(queue);
  const jobs = await readJobs(store, name, kind);
  const found = jobs.find((job) => matches(job, { kind, payload, ...match }));
  if (found) return found;
  const [ofKind, withOptions] = describe({ kind, payload, ...match });
  const what = `no job ${ofKind} in queue "${name}" was enqueued${withOptions}`;
  if (jobs.length === 0) throw new Error(`${what}; the queue holds no job of that kind`);
  throw new Error(`${what}; the queue holds ${count(jobs)} of that kind, newest first: ${show(jobs)}`);
}

/** No job of this queue (and kind, payload and options, where given) was enqueued, in any
 *  state. */
export async function assertNotEnqueued<H extends HandlerMap, K extends keyof H & string>(
  store: JobStore,
  queue: Queue<H>,
  kind?: K,
  payload?: PayloadOf<H[K]>,
  match?: EnqueuedMatch,
): Promise<void>;
export async function assertNotEnqueued(store: JobStore, queue: string, kind?: string, payload?: unknown, match?: EnqueuedMatch): Promise<void>;
export async function assertNotEnqueued(
  store: JobStore,
  queue: Queue | string,
  kind?: string,
  payload?: unknown,
  match: EnqueuedMatch = {},
): Promise<void> {
  const name = queueName(queue);
  const found = (await readJobs(store, name, kind)).filter((job) => matches(job, { kind, payload, ...match }));
  if (found.length === 0) return;
  const [ofKind, withOptions] = describe({ kind, payload, ...match });
  throw new Error(`expected no job ${ofKind} in queue "${name}"${withOptions}, found ${count(found)}, newest first: ${show(found)}`);
}

/** The queue's jobs (in any state) are exactly these, in the order they were enqueued, each
 *  matched as by `assertEnqueued`. Resolves with them, oldest first. */
export async function assertManyEnqueued<H extends HandlerMap>(
  store: JobStore,
  queue: Queue<H>,
  expected: readonly ExpectedJob<H>[],
): Promise<JobRecord[]>;
export async function assertManyEnqueued(store: JobStore, queue: string, expected: readonly ({ kind: string; payload?: unknown } & EnqueuedMatch)[]): Promise<JobRecord[]>;
export async function assertManyEnqueued(
  store: JobStore,
  queue: Queue | string,
  expected: readonly ({ kind: string; payload?: unknown } & EnqueuedMatch)[],
): Promise<JobRecord[]> {
  const name = queueName(queue);
  const jobs = (await readJobs(store, name)).reverse();
  const wrong = expected.findIndex((want, i) => !jobs[i] || !matches(jobs[i], want));
  if (wrong === -1 && jobs.length === expected.length) return jobs;
  const at = wrong === -1 ? expected.length : wrong;
  const got = jobs[at] ? `job #${jobs[at].id} is ${describeJob(jobs[at])}` : 'there is no such job';
  const wanted = expected[at] ? `expected a job ${describe(expected[at]).join('')}` : 'expected no more jobs';
  throw new Error(
    `queue "${name}" holds ${count(jobs)}, expected ${expected.length}; at position ${at + 1} (oldest first) ${wanted}, but ${got}`,
  );
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

function queueName(queue: Queue | string): string {
  return typeof queue === 'string' ? queue : queue.name;
}

/** Newest first. */
function readJobs(store: JobStore, queue: string, kind?: string): Promise<JobRecord[]> {
  return store.listJobs({ queue, ...(kind === undefined ? {} : { kind }), limit: READ });
}

type Wanted = { kind?: string | undefined; payload?: unknown } & EnqueuedMatch;

/** Payloads compare as stored (after a JSON round trip); dates as instants. */
function matches(job: JobRecord, wanted: Wanted): boolean {
  return Object.entries(normalise(wanted)).every(([key, value]) => {
    const actual = job[key as keyof JobRecord];
    return value instanceof Date ? actual instanceof Date && actual.getTime() === value.getTime() : isDeepStrictEqual(actual, value);
  });
}

/** The fields given, the payload as stored. */
function normalise(wanted: Wanted): Record<string, unknown> {
  const given = Object.entries(wanted).filter(([, value]) => value !== undefined);
  return Object.fromEntries(given.map(([key, value]) => [key, key === 'payload' ? JSON.parse(JSON.stringify(value)) : value]));
}

/** `of kind "k"`, and ` with payload …, priority …` (empty without fields). */
function describe(wanted: Wanted): [string, string] {
  const { kind, ...rest } = normalise(wanted);
  const fields = Object.entries(rest).map(([key, value]) => `${key} ${value instanceof Date ? value.toISOString() : JSON.stringify(value)}`);
  return [kind === undefined ? 'of any kind' : `of kind "${String(kind)}"`, fields.length ? ` with ${fields.join(', ')}` : ''];
}

function describeJob(job: JobRecord): string {
  return `of kind "${job.kind}" with payload ${JSON.stringify(job.payload)}, priority ${job.priority}, runAt ${job.runAt.toISOString()}, uniqueKey ${JSON.stringify(job.uniqueKey)}, state ${job.state}`;
}

function count(jobs: readonly unknown[]): string {
  return jobs.length === 1 ? '1 job' : `${jobs.length} jobs`;
}

function show(jobs: readonly JobRecord[]): string {
  const shown = jobs.slice(0, SHOWN).map((job) => `#${job.id} ${JSON.stringify(job.payload)} (${job.state})`);
  return `${shown.join(', ')}${jobs.length > SHOWN ? ', …' : ''}`;
}
