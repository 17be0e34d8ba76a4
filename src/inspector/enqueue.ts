/**
 * Enqueue from the page (POST /api/jobs with the token): one job, checked as the library
 * checks it (buildEnqueueJob: names, payload as JSON within the queue's limit, options).
 * Given the queue definitions (startInspector's `queues`, the CLI's --worker-module), the
 * queue must be one of them, the kind one it handles, and its settings apply; without them,
 * as `jobvisor enqueue` without --worker-module: the queue must be one the store's jobs use,
 * with the default settings.
 */
import type { JobStore } from '../adapters/store.js';
import { InvalidOptionError, InvalidPayloadError } from '../errors.js';
import { assertHandledKind, buildEnqueueJob, type EnqueueOptions, type Queue } from '../queue.js';
import { HttpError, jsonObjectBody } from './http.js';
import { jobDetail, type JobDetail } from './job-json.js';

/** The largest body an enqueue reads: the default payload limit (1 MiB) and its fields. */
export const ENQUEUE_BODY_BYTES = 1_048_576 + 4_096;

const FIELDS = ['queue', 'kind', 'payload', 'runInMs', 'priority', 'uniqueKey', 'maxAttempts'] as const;

interface EnqueueRequest {
  queue: string;
  kind: string;
  payload: unknown;
  options: Omit<EnqueueOptions, 'client'>;
}

export async function runEnqueue(
  store: JobStore,
  queues: readonly Queue[] | undefined,
  body: string,
  contentType: string,
): Promise<{ message: string; created: boolean; job: JobDetail }> {
  const request = enqueueRequest(body, contentType);
  const job = checked(() => {
    if (!queues) return buildEnqueueJob(request.queue, request.kind, request.payload, request.options);
    const queue = queues.find((q) => q.name === request.queue);
    if (!queue) throw new HttpError(400, `queue: "${request.queue}" is not one of this inspector's queues (${queues.map((q) => q.name).join(', ')})`);
    assertHandledKind(queue.name, queue.handlers, request.kind);
    return buildEnqueueJob(queue.name, request.kind, request.payload, request.options, queue.settings);
  });
  if (!queues && !(await store.listQueues()).some((q) => q.name === request.queue)) {
    throw new HttpError(400, `queue: no job in the store uses "${request.queue}"; to enqueue the first job of a queue, start the inspector with its queues`);
  }
  const [result] = await store.enqueueJobs({ jobs: [job] });
  if (!result) throw new Error('the store answered no result for the enqueue');
  const { id, state } = result.job;
  const message = result.created
    ? `job ${id} enqueued (${request.queue}/${request.kind})`
    : `job ${id} (${state}) already holds unique key "${job.uniqueKey}" in ${request.queue}: nothing enqueued`;
  return { message, created: result.created, job: jobDetail(result.job) };
}

/** The library's own refusals (a bad name, payload or option) as a 400 naming them. */
function checked<T>(build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof InvalidOptionError || error instanceof InvalidPayloadError) throw new HttpError(400, error.message);
    throw error;
  }
}

/** The JSON body: `queue` and `kind` strings, `payload` any JSON (default `{}`), and the
 *  options the form has, each checked by the library afterwards. */
function enqueueRequest(body: string, contentType: string): EnqueueRequest {
  if (!contentType.startsWith('application/json')) throw new HttpError(415, 'send the job as JSON: {"queue", "kind", "payload", …}');
  const fields = jsonObjectBody(body, '{"queue", "kind", "payload", …}');
  for (const name of Object.keys(fields)) {
    if (!(FIELDS as readonly string[]).includes(name)) throw new HttpError(400, `unknown field "${name}"; expected ${FIELDS.join(', ')}`);
  }
  for (const name of ['queue', 'kind'] as const) {
    if (typeof fields[name] !== 'string') throw new HttpError(400, `${name}: must be a string`);
  }
  const number = (name: 'runInMs' | 'priority' | 'maxAttempts') => {
    const value = fields[name];
    if (value !== undefined && typeof value !== 'number') throw new HttpError(400, `${name}: must be a number`);
    return value;
  };
  if (fields.uniqueKey !== undefined && typeof fields.uniqueKey !== 'string') throw new HttpError(400, 'uniqueKey: must be a string');
  const runIn = number('runInMs');
  const priority = number('priority');
  const maxAttempts = number('maxAttempts');
  return {
    queue: fields.queue as string,
    kind: fields.kind as string,
    payload: fields.payload === undefined ? {} : fields.payload,
    options: {
      ...(runIn === undefined ? {} : { runIn }),
      ...(priority === undefined ? {} : { priority }),
      ...(fields.uniqueKey === undefined ? {} : { uniqueKey: fields.uniqueKey as string }),
      ...(maxAttempts === undefined ? {} : { maxAttempts }),
    },
  };
}
