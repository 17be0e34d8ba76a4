/**
 * Where an idle worker's enqueue → start goes, per sample: when the process heard the
 * enqueue's notification, when the worker sent its claim, when the claim's answer came. With
 * the handler's start (the latency scenario's own mark) that splits each sample into
 *   enqueue → notified │ notified → claim sent (the worker's Node side) │ the claim's round trip
 *   │ answer → handler start (Node again).
 * Both systems are marked the same way, on `pg` itself: the first 'notification' a client
 * emits, and the first query after it whose statement is the system's claim (jobvisor's
 * `claim_jobs` or `claim_fair_jobs`, graphile-worker's `get_job…`). pg-boss polls and sends no
 * notification: its samples carry no marks and its result no split.
 */
import { pgCopies, statementKey } from './query-counter.js';

export interface PathMarks {
  notified?: number;
  claimSent?: number;
  claimAnswered?: number;
}

let marks: PathMarks = {};

/** Starts a sample: the marks from here on are its own. */
export function newSample(): PathMarks {
  marks = {};
  return marks;
}

/** Whether a query's first argument is the system's claim. */
function isClaim(arg: unknown): boolean {
  const key = statementKey(arg);
  if (key === 'claim_jobs' || key === 'claim_fair_jobs') return true;
  const name = typeof arg === 'object' && arg !== null && 'name' in arg ? (arg as { name?: unknown }).name : undefined;
  return typeof name === 'string' && name.startsWith('get_job');
}

/** Wraps every copy of `pg` the systems load (the repo root's and bench/'s). */
export function markLatencyPath(jobvisorRoot: string): void {
  for (const pg of pgCopies(jobvisorRoot)) {
    const proto = pg.Client.prototype;
    const { query, emit } = proto;
    proto.query = function (this: unknown, ...args: unknown[]) {
      // The first claim after the notification: one sent before it (a poll) is not the sample's.
      const claim = marks.notified !== undefined && marks.claimSent === undefined && isClaim(args[0]);
      if (claim) marks.claimSent = performance.now();
      const result = query.apply(this, args);
      // Only the promise form: both systems' claims use it. The sample's marks object is
      // captured, so an answer after the sample ended marks nothing of the next one.
      if (claim && result instanceof Promise) {
        const own = marks;
        result.then(
          () => (own.claimAnswered ??= performance.now()),
          () => {},
        );
      }
      return result;
    };
    proto.emit = function (this: unknown, event: string, ...args: unknown[]) {
      if (event === 'notification') marks.notified ??= performance.now();
      return emit.call(this, event, ...args);
    };
  }
}

/** The four parts of one sample, in ms. */
function parts(s: { t0: number; start: number; marks: Required<PathMarks> }): number[] {
  return [s.marks.notified - s.t0, s.marks.claimSent - s.marks.notified, s.marks.claimAnswered - s.marks.claimSent, s.start - s.marks.claimAnswered];
}

/** The parts' names, in order: each part's metrics are `<name>P50Ms` and `<name>TailMs`. */
export const PATH_PARTS = ['notified', 'wakeToClaim', 'claimRoundTrip', 'answerToStart'] as const;

/**
 * The samples' split: each part's median in ms (`…P50Ms`), and each part's mean over the
 * slowest 2% of samples (`…TailMs`: what made the tail slow). Empty when a sample lacks a mark.
 */
export function pathSplit(samples: ReadonlyArray<{ t0: number; start: number; marks: PathMarks }>): Record<string, number> {
  const full = samples.filter(
    (s): s is { t0: number; start: number; marks: Required<PathMarks> } =>
      s.marks.notified !== undefined && s.marks.claimSent !== undefined && s.marks.claimAnswered !== undefined,
  );
  if (full.length === 0 || full.length < samples.length) return {};
  const split = full.map(parts);
  const slowest = [...full].sort((a, b) => b.start - b.t0 - (a.start - a.t0)).slice(0, Math.max(1, Math.round(full.length * 0.02))).map(parts);
  const metrics: Record<string, number> = {};
  PATH_PARTS.forEach((name, i) => {
    const sorted = split.map((p) => p[i]!).sort((a, b) => a - b);
    metrics[`${name}P50Ms`] = sorted[Math.floor((sorted.length - 1) / 2)]!;
    metrics[`${name}TailMs`] = slowest.reduce((sum, p) => sum + p[i]!, 0) / slowest.length;
  });
  return metrics;
}
