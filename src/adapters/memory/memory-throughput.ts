/**
 * Throughput over time over the memory store's history: the same answer as the SQL statement
 * in queries/get-throughput.ts (which documents what is counted). And the throughput summary
 * the inspector saves (queries/throughput-summary.ts on SQL).
 */
import type { JobEvent } from '../../types.js';
import { binRunTimes } from '../run-time-bins.js';
import {
  type GetThroughputParams,
  type GetThroughputSummaryParams,
  type QueueActivity,
  type SaveThroughputSummaryParams,
  type SavedThroughputBucket,
  THROUGHPUT_SUMMARY_PRUNE_BATCH,
  type ThroughputBucket,
} from '../store.js';
import { DEFAULT_MAX_EVENTS } from './memory-reads.js';

interface Tally {
  queue: string;
  bucket: number;
  completed: number;
  retried: number;
  dead: number;
  durations: number[];
  events: number;
}

/** `events` oldest first (by id), each with its job's queue. */
export function throughput(events: Iterable<{ queue: string; event: JobEvent }>, params: GetThroughputParams): ThroughputBucket[] {
  const since = params.since.getTime();
  const until = params.until?.getTime() ?? Infinity;
  let budget = params.maxEvents ?? DEFAULT_MAX_EVENTS;
  /** Job id → attempt → when it last entered running (before or in the window). */
  const starts = new Map<string, Map<number, number>>();
  const tallies = new Map<string, Tally>();
  for (const { queue, event } of events) {
    const at = event.at.getTime();
    const counted = event.fromState === 'running' || event.toState === 'retrying' || event.toState === 'dead';
    if (at >= since && at < until && counted) {
      if (budget-- <= 0) break;
      const bucket = Math.floor((at - since) / params.bucketMs);
      const key = `${queue}\0${bucket}`;
      let tally = tallies.get(key);
      if (!tally) {
        tally = { queue, bucket, completed: 0, retried: 0, dead: 0, durations: [], events: 0 };
        tallies.set(key, tally);
      }
      tally.events += 1;
      if (event.toState === 'completed') tally.completed += 1;
      if (event.toState === 'retrying') tally.retried += 1;
      if (event.toState === 'dead') tally.dead += 1;
      const start = event.fromState === 'running' ? starts.get(event.jobId)?.get(event.attempt) : undefined;
      // A run time is never negative: an end stamped before its start is two clocks' skew.
      if (start !== undefined) tally.durations.push(Math.max(0, at - start));
    }
    if (event.toState === 'running') {
      let byAttempt = starts.get(event.jobId);
      if (!byAttempt) starts.set(event.jobId, (byAttempt = new Map()));
      byAttempt.set(event.attempt, at);
    }
  }
  return [...tallies.values()]
    .sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : a.bucket - b.bucket))
    .map(({ queue, bucket, completed, retried, dead, durations, events }) => {
      const sorted = durations.sort((a, b) => a - b);
      const [p50Ms, p95Ms] = [percentile(sorted, 0.5), percentile(sorted, 0.95)];
      return { queue, bucket, completed, retried, dead, attempts: sorted.length, p50Ms, p95Ms, runTimes: binRunTimes(sorted), events };
    });
}

/** Nearest rank, as SQL's percentile_disc: the first value whose rank reaches p of the count. */
function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
}

/** The throughput summary (the SQL stores' table of migration 0025): per bucket width, per
 *  bucket start, each queue's activity as it was saved. */
export class MemoryThroughputSummary {
  readonly #saved = new Map<number, Map<number, QueueActivity[]>>();

  get(params: GetThroughputSummaryParams): SavedThroughputBucket[] {
    const [since, until] = [params.since.getTime(), params.until.getTime()];
    return [...(this.#saved.get(params.bucketMs) ?? [])]
      .filter(([start]) => start >= since && start < until)
      .sort(([a], [b]) => a - b)
      .map(([start, queues]) => ({ start: new Date(start), queues: structuredClone(queues) }));
  }

  /** As the SQL statement: the oldest batch before `pruneBefore` goes, then each bucket from
   *  `pruneBefore` on not saved yet is saved. */
  save(params: SaveThroughputSummaryParams): void {
    const pruneBefore = params.pruneBefore.getTime();
    let saved = this.#saved.get(params.bucketMs);
    if (!saved) this.#saved.set(params.bucketMs, (saved = new Map()));
    const old = [...saved.keys()].filter((start) => start < pruneBefore).sort((a, b) => a - b);
    for (const start of old.slice(0, THROUGHPUT_SUMMARY_PRUNE_BATCH)) saved.delete(start);
    for (const bucket of params.buckets) {
      const start = bucket.start.getTime();
      if (start >= pruneBefore && !saved.has(start)) saved.set(start, structuredClone(bucket.queues));
    }
  }
}
