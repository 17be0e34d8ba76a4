/**
 * The inspector's reads over the memory store's maps: the same answers as the SQL statements
 * in queries/scan-jobs.ts, get-queue-backlogs.ts, get-queue-depths.ts, group-dead-jobs.ts and count-job-transitions.ts. They return
 * the store's own objects; the store copies them on the way out.
 */
import type { JobEvent, JobRecord } from '../../types.js';
import { jsonContains } from './json-contains.js';
import type {
  BacklogState,
  CountJobTransitionsParams,
  DeadJobGroup,
  DeadJobGroups,
  ErrorMatch,
  GroupDeadJobsParams,
  QueueBacklog,
  QueueDepth,
  ScanJobsParams,
  TransitionCount,
} from '../store.js';
import { zeroBacklogCounts } from '../store.js';

export const DEFAULT_SCAN_LIMIT = 50;
export const DEFAULT_MAX_SCAN = 10_000;
export const DEFAULT_MAX_COUNT = 10_000;
export const DEFAULT_MAX_EVENTS = 100_000;


/** `newestFirst` in id order, newest first. Examines at most `maxScan` jobs older than
 *  `beforeId`, as the SQL store does where no index serves the filters. */
export function scanJobs(newestFirst: Iterable<JobRecord>, params: ScanJobsParams): { jobs: JobRecord[]; nextBeforeId: string | null } {
  const limit = Math.max(1, params.limit ?? DEFAULT_SCAN_LIMIT);
  const maxScan = Math.max(1, params.maxScan ?? DEFAULT_MAX_SCAN);
  const before = params.beforeId === undefined ? Infinity : Number(params.beforeId);
  const jobs: JobRecord[] = [];
  let examined = 0;
  let lastExamined: string | null = null;
  for (const job of newestFirst) {
    if (!(Number(job.id) < before)) continue;
    if (examined === maxScan) return { jobs, nextBeforeId: lastExamined };
    examined += 1;
    lastExamined = job.id;
    if (!matches(job, params)) continue;
    jobs.push(job);
    if (jobs.length === limit) return { jobs, nextBeforeId: job.id };
  }
  return { jobs, nextBeforeId: null };
}

function matches(job: JobRecord, params: ScanJobsParams): boolean {
  return (
    (params.queue === undefined || job.queue === params.queue) &&
    (params.state === undefined || job.state === params.state) &&
    (params.kind === undefined || job.kind === params.kind) &&
    (params.uniqueKey === undefined || job.uniqueKey === params.uniqueKey) &&
    (params.payloadContains === undefined || jsonContains(job.payload, params.payloadContains)) &&
    (params.errorContains === undefined || (job.error?.message ?? '').toLowerCase().includes(params.errorContains.toLowerCase()))
  );
}

/** Whether the job's error has this code and message (groupDeadJobs' grouping). */
export function errorMatches(job: JobRecord, error: ErrorMatch): boolean {
  return (job.error?.code ?? null) === error.code && (job.error?.message ?? null) === error.message;
}

/** `newestFirst` in id order, newest first: the queue's newest `maxScan` dead jobs by error. */
export function groupDeadJobs(newestFirst: Iterable<JobRecord>, params: GroupDeadJobsParams): DeadJobGroups {
  const maxScan = Math.max(1, params.maxScan ?? DEFAULT_MAX_SCAN);
  const groups = new Map<string, DeadJobGroup>();
  let read = 0;
  for (const job of newestFirst) {
    if (job.queue !== params.queue || job.state !== 'dead') continue;
    if ((read += 1) > maxScan) break;
    const code = job.error?.code ?? null;
    const message = job.error?.message ?? null;
    const diedAt = job.finishedAt ?? job.updatedAt;
    const key = JSON.stringify([code, message]);
    const group = groups.get(key);
    if (!group) groups.set(key, { code, message, count: 1, firstAt: diedAt, lastAt: diedAt, newestJobId: job.id });
    else {
      group.count += 1;
      if (diedAt < group.firstAt) group.firstAt = diedAt;
      if (diedAt > group.lastAt) group.lastAt = diedAt;
    }
  }
  const sorted = [...groups.values()].sort((a, b) => b.count - a.count || Number(b.newestJobId) - Number(a.newestJobId));
  return { groups: sorted.slice(0, Math.max(1, params.limit ?? DEFAULT_SCAN_LIMIT)), examined: Math.min(read, maxScan), partial: read > maxScan };
}

export function queueBacklogs(jobs: Iterable<JobRecord>, now: Date, maxCount = DEFAULT_MAX_COUNT): QueueBacklog[] {
  const byQueue = new Map<string, QueueBacklog>();
  for (const job of jobs) {
    if (job.state === 'completed') continue;
    let backlog = byQueue.get(job.queue);
    if (!backlog) {
      const counts = zeroBacklogCounts();
      backlog = { queue: job.queue, counts, oldestRunAt: null, later: { scheduled: 0, snoozed: 0 } };
      byQueue.set(job.queue, backlog);
    }
    backlog.counts[job.state] = Math.min(maxCount, backlog.counts[job.state] + 1);
    if (job.state === 'pending' && job.runAt > now) {
      const kind = job.attempt === 0 ? 'scheduled' : 'snoozed';
      backlog.later[kind] = Math.min(maxCount, backlog.later[kind] + 1);
    }
    const waiting = job.state === 'pending' || job.state === 'retrying';
    if (waiting && (backlog.oldestRunAt === null || job.runAt < backlog.oldestRunAt)) backlog.oldestRunAt = job.runAt;
  }
  return [...byQueue.values()].sort((a, b) => compareStrings(a.queue, b.queue));
}

/** Exact counts per queue and state, and the age at `now` of each queue's oldest due job. */
export function queueDepths(jobs: Iterable<JobRecord>, now: Date): QueueDepth[] {
  const byQueue = new Map<string, QueueDepth>();
  for (const job of jobs) {
    if (job.state === 'completed') continue;
    let depth = byQueue.get(job.queue);
    if (!depth) {
      const counts = zeroBacklogCounts();
      depth = { queue: job.queue, counts, oldestDueAgeSeconds: 0 };
      byQueue.set(job.queue, depth);
    }
    depth.counts[job.state] += 1;
    const due = (job.state === 'pending' || job.state === 'retrying') && job.runAt <= now;
    if (due) depth.oldestDueAgeSeconds = Math.max(depth.oldestDueAgeSeconds, (now.getTime() - job.runAt.getTime()) / 1000);
  }
  return [...byQueue.values()].sort((a, b) => compareStrings(a.queue, b.queue));
}

/** `events` oldest first, each with its job's queue. */
export function countTransitions(
  events: Iterable<{ queue: string; event: JobEvent }>,
  params: CountJobTransitionsParams,
): TransitionCount[] {
  const since = params.since.getTime();
  let budget = params.maxEvents ?? DEFAULT_MAX_EVENTS;
  const counts = new Map<string, TransitionCount>();
  for (const { queue, event } of events) {
    const at = event.at.getTime();
    if (at < since) continue;
    if (budget-- <= 0) break;
    const bucket = Math.floor((at - since) / params.bucketMs);
    const key = `${queue}\0${event.toState}\0${bucket}`;
    const entry = counts.get(key) ?? { queue, toState: event.toState, bucket, count: 0 };
    entry.count += 1;
    counts.set(key, entry);
  }
  return [...counts.values()].sort(
    (a, b) => compareStrings(a.queue, b.queue) || compareStrings(a.toState, b.toState) || a.bucket - b.bucket,
  );
}

/** Byte order, as the SQL stores sort with COLLATE "C". */
function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
