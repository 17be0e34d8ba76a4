/** The inspector's read-only API: what each GET under /api/ answers. */
import type { JobStore, ScanJobsParams } from '../adapters/store.js';
import { jobMachine } from '../machines/job-machine.js';
import type { Queue } from '../queue.js';
import type { Supervisor } from '../supervisor/supervisor.js';
import { JOB_STATES, type JsonValue } from '../types.js';
import { HttpError } from './http.js';
import { durableSteps } from './durable-steps.js';
import { HeldJobs } from './held.js';
import { jobDetail, jobSummary } from './job-json.js';
import { jobMachinePath } from './job-path.js';
import { jobStory } from './job-story.js';
import { renderStorySvg } from './story-svg.js';
import { layoutMachine, renderMachineSvg } from './machine-svg.js';
import { isJobId, parseJobListQuery, type SearchIn } from './params.js';
import type { QueueStats } from './queue-stats.js';
import { parseThroughputWindow, type ThroughputStats } from './throughput.js';
import { WORKER_HEARTBEAT_MS } from '../supervisor/worker-heartbeat.js';

export interface ReadContext {
  store: JobStore;
  supervisor: Supervisor | undefined;
  stats: QueueStats;
  throughput: ThroughputStats;
  actionsEnabled: boolean;
  queues: readonly Queue[] | undefined;
}

function jobMachineGraph() {
  return layoutMachine(jobMachine).graph;
}

export function info(ctx: ReadContext) {
  return {
    actions: ctx.actionsEnabled,
    states: JOB_STATES,
    supervisor: ctx.supervisor ? { workerId: ctx.supervisor.workerId } : null,
    /** The queues the enqueue form knows, with their kinds and the limits their definitions
     *  set (a queue's page shows them); null: any queue the store's jobs use. */
    queues: ctx.queues ? ctx.queues.map((q) => ({ name: q.name, kinds: Object.keys(q.handlers), limits: queueLimits(q) })) : null,
  };
}

/** What a queue's definition limits, as its page shows them. */
function queueLimits(queue: Queue) {
  const { concurrency, perKeyConcurrency, rateLimit, gate, maxAttempts, deadlineMs, leaseMs, fairShare } = queue.settings;
  return {
    concurrency,
    perKeyConcurrency,
    rateLimit: rateLimit ?? null,
    gate: gate ?? null,
    maxAttempts,
    deadlineMs,
    leaseMs,
    fairShare: fairShare !== null,
  };
}

export async function listJobs(ctx: ReadContext, query: URLSearchParams) {
  const { filters, search, searchIn, beforeId, limit } = parseJobListQuery(query);
  // A key search names a job id or a unique key; both are looked up, each through an index.
  const byKey = searchIn === 'key' && search !== undefined;
  const byId = byKey && beforeId === undefined && isJobId(search) ? await ctx.store.getJob({ id: search }) : null;
  const page = await ctx.store.scanJobs({
    ...filters,
    ...(search === undefined ? {} : searchTerms(searchIn, search)),
    ...(beforeId === undefined ? {} : { beforeId }),
    limit,
  });
  const jobs = byId && !page.jobs.some((job) => job.id === byId.id) ? [byId, ...page.jobs] : page.jobs;
  // Running jobs on the page: which started and which wait in their worker (held.ts).
  const held = jobs.some((job) => job.state === 'running') ? new HeldJobs(await ctx.store.listWorkers()) : undefined;
  return { jobs: jobs.map((job) => jobSummary(job, held)), nextBefore: page.nextBeforeId };
}

function searchTerms(searchIn: SearchIn, search: string): Pick<ScanJobsParams, 'uniqueKey' | 'payloadContains' | 'errorContains'> {
  if (searchIn === 'key') return { uniqueKey: search };
  if (searchIn === 'error') return { errorContains: search };
  try {
    return { payloadContains: JSON.parse(search) as JsonValue };
  } catch (error) {
    throw new HttpError(400, `q: a payload search is JSON that the payload contains, such as {"user": 7}: ${(error as Error).message}`);
  }
}

export async function getJob(ctx: ReadContext, id: string) {
  const job = await ctx.store.getJob({ id });
  if (!job) throw new HttpError(404, `no job with id ${id}`);
  const events = await ctx.store.getJobEvents({ id });
  return { job: jobDetail(job), events, path: jobMachinePath(jobMachineGraph(), events), story: jobStory(events), durable: durableSteps(job) };
}

/** The user's view of the machine with this job's steps drawn on it. */
export async function jobStorySvg(ctx: ReadContext, id: string): Promise<string> {
  const events = await ctx.store.getJobEvents({ id });
  if (events.length === 0 && !(await ctx.store.getJob({ id }))) throw new HttpError(404, `no job with id ${id}`);
  return renderStorySvg(jobStory(events));
}

/** The job machine, with this job's path highlighted when an id is given. */
export async function jobMachineSvg(ctx: ReadContext, id: string | undefined): Promise<string> {
  if (id === undefined) return renderMachineSvg(jobMachine);
  const events = await ctx.store.getJobEvents({ id });
  if (events.length === 0 && !(await ctx.store.getJob({ id }))) throw new HttpError(404, `no job with id ${id}`);
  return renderMachineSvg(jobMachine, jobMachinePath(jobMachineGraph(), events));
}

export function queues(ctx: ReadContext) {
  return ctx.stats.read();
}

/** Throughput over time per queue: `?window=1h` (minutes, the default) or `24h` (hours). */
export function throughput(ctx: ReadContext, query: URLSearchParams) {
  for (const name of query.keys()) if (name !== 'window') throw new HttpError(400, `unknown query parameter: ${name}`);
  return ctx.throughput.read(parseThroughputWindow(query.get('window')));
}

/** Running jobs read for the workers page, at most; more are counted as "and more". */
const WORKER_JOBS_LIMIT = 200;
/** A worker not seen for this many heartbeats is shown as gone quiet. */
const QUIET_BEATS = 3;

/** Every supervisor on the store, from its heartbeat row, with the running jobs it holds. */
export async function workers(ctx: ReadContext) {
  const [rows, running] = await Promise.all([ctx.store.listWorkers(), ctx.store.scanJobs({ state: 'running', limit: WORKER_JOBS_LIMIT })]);
  const now = Date.now();
  const held = new HeldJobs(rows);
  return {
    now: new Date(now),
    heartbeatMs: WORKER_HEARTBEAT_MS,
    workers: rows.map((worker) => ({
      ...worker,
      quiet: now - worker.lastSeenAt.getTime() > QUIET_BEATS * WORKER_HEARTBEAT_MS,
      jobs: running.jobs.filter((job) => job.workerId === worker.workerId).map((job) => jobSummary(job, held)),
    })),
    /** Jobs held by no listed worker (its row gone: stopped or forgotten). */
    orphans: running.jobs.filter((job) => !rows.some((w) => w.workerId === job.workerId)).map((job) => jobSummary(job)),
    jobsMore: running.nextBeforeId !== null,
  };
}
