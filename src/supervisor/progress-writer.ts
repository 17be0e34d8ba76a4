/**
 * Progress reports of running jobs, throttled per job and batched across jobs: the first
 * report of a job is written at once (with the others of the same tick, in one statement);
 * later ones at most once per `intervalMs`, the last value winning. What is still waiting
 * when the attempt ends goes in with its outcome (`pending`), so the final report is never
 * lost to the throttle.
 */
import type { JobStore, Lease, ProgressReport, ProgressUpdate } from '../adapters/store.js';
import { InvalidOptionError } from '../errors.js';
import type { Logger } from '../types.js';
import { toStorableString } from '../validation.js';
import { createBatcher } from './batcher.js';
import { type TimerClock, startTimer } from './timer.js';

/** Longer messages are cut: progress is a status line, not a log. */
export const MAX_PROGRESS_MESSAGE = 1_000;

interface Entry {
  lease: Lease;
  /** When this job's last write was sent, by the supervisor's clock. */
  lastWriteAt: number;
  /** A report not yet written. */
  waiting: ProgressReport | undefined;
}

export class ProgressWriter {
  readonly #write: (update: ProgressUpdate) => Promise<boolean>;
  readonly #entries = new Map<string, Entry>();
  #cancelTimer: (() => void) | undefined;
  #timerDue = Infinity;

  constructor(
    store: JobStore,
    private readonly clock: TimerClock,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {
    this.#write = createBatcher((updates: ProgressUpdate[]) => store.setProgressIfRunning({ updates }));
  }

  /** A handler's `job.progress(percent, message)`. Throws on a percent outside 0..100. */
  report(lease: Lease, percent: number, message: string | undefined): void {
    const report = checkedReport(percent, message);
    const now = this.clock.now();
    const entry = this.#entries.get(lease.id);
    if (entry && now - entry.lastWriteAt < this.intervalMs) {
      entry.waiting = report;
      this.#schedule(entry.lastWriteAt + this.intervalMs);
      return;
    }
    this.#entries.set(lease.id, { lease, lastWriteAt: now, waiting: undefined });
    this.#send(lease, report);
  }

  /** The job's report not yet written, to go with its outcome; undefined when none waits. */
  pending(jobId: string): ProgressReport | undefined {
    return this.#entries.get(jobId)?.waiting;
  }

  /** The attempt is over: nothing more of it is written. */
  forget(jobId: string): void {
    this.#entries.delete(jobId);
  }

  #send(lease: Lease, report: ProgressReport): void {
    this.#write({ ...lease, ...report }).then(
      (applied) => {
        if (!applied) this.logger.debug({ jobId: lease.id }, 'progress not written: the attempt no longer holds the job');
      },
      (error: unknown) => this.logger.warn({ err: error, jobId: lease.id }, 'progress write failed; a later report may get through'),
    );
  }

  /** One timer for all jobs, set for the earliest waiting report. */
  #schedule(due: number): void {
    if (due >= this.#timerDue) return;
    this.#cancelTimer?.();
    this.#timerDue = due;
    this.#cancelTimer = startTimer(this.clock, due, () => {
      this.#cancelTimer = undefined;
      this.#timerDue = Infinity;
      this.#schedule(this.#flushDue());
    });
  }

  /** Writes each report whose window is over; answers when the next one's is. */
  #flushDue(): number {
    const now = this.clock.now();
    let next = Infinity;
    for (const entry of this.#entries.values()) {
      if (!entry.waiting) continue;
      if (now - entry.lastWriteAt < this.intervalMs) {
        next = Math.min(next, entry.lastWriteAt + this.intervalMs);
        continue;
      }
      this.#send(entry.lease, entry.waiting);
      entry.waiting = undefined;
      entry.lastWriteAt = now;
    }
    return next;
  }

  /** Stops the timer; reports still waiting are dropped (their attempts are over). */
  close(): void {
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    this.#timerDue = Infinity;
    this.#entries.clear();
  }
}

function checkedReport(percent: number, message: string | undefined): ProgressReport {
  if (typeof percent !== 'number' || !(percent >= 0 && percent <= 100)) {
    throw new InvalidOptionError('progress percent', `must be a number from 0 to 100, got ${String(percent)}`);
  }
  if (message !== undefined && typeof message !== 'string') {
    throw new InvalidOptionError('progress message', `must be a string, got ${typeof message}`);
  }
  return { percent, message: message === undefined ? null : toStorableString(message.slice(0, MAX_PROGRESS_MESSAGE)) };
}
