/**
 * Worker processes (test/fixtures/worker-process.ts) as the multi-process tests drive them:
 * start, wait for, stop, and check from what each handler reported that no job ran twice at
 * the same time. Times are `performance.timeOrigin + performance.now()`, comparable across
 * processes on one machine and moved by no change of the system time. Real time is
 * unavoidable across processes: every wait polls with a deadline, none sleeps blindly.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type pg from 'pg';
import { LineProcess, type LineProcessOptions } from '../../scripts/line-process.js';
import type { WorkerConfig, WorkerLine } from '../fixtures/worker-process.js';

const WORKER_SCRIPT = fileURLToPath(new URL('../fixtures/worker-process.ts', import.meta.url));

/** One worker process; `exitSeenAt` by the test's clock, when its exit was seen (the process
 *  was gone by then). */
export class WorkerProcess extends LineProcess<WorkerConfig, WorkerLine> {
  exitSeenAt: number | undefined;

  constructor(config: WorkerConfig, options: LineProcessOptions = {}) {
    super(WORKER_SCRIPT, config, options);
    void this.exited.then(() => {
      this.exitSeenAt = now();
    });
  }

  get id(): string {
    return this.config.workerId;
  }

  /** Throws until the process has said `ready`. */
  assertReady(): void {
    this.assertAlive();
    if (!this.lines.some((line) => line.event === 'ready')) throw new Error(`worker ${this.id} is not ready yet`);
  }

  assertAlive(): void {
    if (this.exit) throw new Error(`worker ${this.id} exited (${JSON.stringify(this.exit)}):\n${this.stderr}`);
  }

  /** SIGTERM, then the exit; the process must stop cleanly and report its counters. */
  async stop(): Promise<Extract<WorkerLine, { event: 'stopped' }>> {
    this.signal('SIGTERM');
    const exit = await this.exited;
    expect(exit, this.stderr).toEqual({ code: 0, signal: null });
    const stopped = this.lines.find((line) => line.event === 'stopped');
    if (!stopped) throw new Error(`worker ${this.id} exited without reporting its counters`);
    return stopped;
  }
}

/** One run of a handler, from its `start` to its `end` line. */
export interface Execution {
  job: string;
  attempt: number;
  worker: string;
  start: number;
  /** undefined: the process died while the handler ran. */
  end: number | undefined;
}

export function executionsOf(workers: readonly WorkerProcess[]): Execution[] {
  const runs = new Map<string, Execution>();
  for (const w of workers) {
    for (const line of w.lines) {
      if (line.event !== 'start' && line.event !== 'end') continue;
      const key = `${line.job}/${line.attempt}/${line.worker}`;
      if (line.event === 'start') {
        expect(runs.has(key), `${key} started twice`).toBe(false);
        runs.set(key, { job: line.job, attempt: line.attempt, worker: line.worker, start: line.at, end: undefined });
      } else {
        const run = runs.get(key);
        expect(run?.end, `${key} ended without starting, or twice`).toBe(undefined);
        run!.end = line.at;
      }
    }
  }
  return [...runs.values()];
}

/** Pairs of executions of one job that overlap in time. A run whose process died lasts
 *  until that death was seen; one whose process lives, for ever. */
export function overlapping(executions: readonly Execution[], workers: readonly WorkerProcess[]): string[] {
  const diedAt = new Map(workers.map((w) => [w.id, w.exitSeenAt ?? Infinity]));
  const byJob = new Map<string, Execution[]>();
  for (const e of executions) byJob.set(e.job, [...(byJob.get(e.job) ?? []), e]);
  const found: string[] = [];
  for (const [job, runs] of byJob) {
    const sorted = runs
      .map((r) => ({ ...r, end: r.end ?? diedAt.get(r.worker)! }))
      .sort((a, b) => a.start - b.start);
    let latest = sorted[0]!;
    for (const run of sorted.slice(1)) {
      if (run.start < latest.end) found.push(`job ${job}: ${latest.worker}#${latest.attempt} and ${run.worker}#${run.attempt}`);
      if (run.end > latest.end) latest = run;
    }
  }
  return found;
}

/** The clock of the worker lines' `at`. */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

/** Polls `check` until it passes or `timeoutMs` is over; a worker that died ends the wait at once. */
export async function until(check: () => unknown, alive: readonly WorkerProcess[], timeoutMs: number): Promise<void> {
  const deadline = now() + timeoutMs;
  for (;;) {
    for (const w of alive) w.assertAlive();
    try {
      await check();
      return;
    } catch (error) {
      if (now() > deadline) throw error;
    }
    await sleep(20);
  }
}

/** The running jobs a worker holds, with their lease ends as text: to the microsecond. */
export async function heldLeases(pool: pg.Pool, schema: string, workerId: string): Promise<{ id: string; leaseExpiresAt: string }[]> {
  const { rows } = await pool.query<{ id: string; lease_expires_at: string }>(
    `select id::text, lease_expires_at::text from "${schema}".jobs where state = 'running' and worker_id = $1`,
    [workerId],
  );
  return rows.map((row) => ({ id: row.id, leaseExpiresAt: row.lease_expires_at }));
}

/**
 * Whether a job's lease_expired rescue is stamped after the given lease end, compared in
 * the database: a Date keeps milliseconds, and a reaper can run within the lease's last one.
 */
export async function rescuedAfter(pool: pg.Pool, schema: string, jobId: string, leaseExpiresAt: string): Promise<boolean[]> {
  const { rows } = await pool.query<{ after: boolean }>(
    `select at > $2::timestamptz as after from "${schema}".job_events
     where job_id = $1 and to_state = 'retrying' and error->>'code' = 'lease_expired'`,
    [jobId, leaseExpiresAt],
  );
  return rows.map((row) => row.after);
}
