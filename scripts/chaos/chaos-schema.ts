/** The chaos run's queue, its jobs, and the table where handlers record their executions. */
import type pg from 'pg';
import type { JobStore } from '../../src/index.js';

export const CHAOS_QUEUE = 'chaos';

/** What a completed job's row holds: who completed it, under which lease. */
export interface ChaosResult {
  worker: string;
  token: string;
}

/** Attempts for a normal job: far more than the faults of one run can cost one job. */
export const WORK_ATTEMPTS = 10;
/** Attempts for a poison job, which fails every one and must end dead. */
export const POISON_ATTEMPTS = 3;

export async function createExecutionsTable(pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`
    create table "${schema}".executions (
      id bigint generated always as identity primary key,
      job_id bigint not null,
      attempt integer not null,
      worker text not null,
      lease_token uuid not null,
      started_ms float8 not null,
      ended_ms float8
    );
    create index on "${schema}".executions (job_id);`);
}

/** Jobs `from` to `to - 1` (their payload's `n`); every `poisonEvery`-th is a poison job. */
export async function enqueueChaosJobs(store: JobStore, from: number, to: number, poisonEvery: number): Promise<void> {
  const BATCH = 1_000;
  for (let start = from; start < to; start += BATCH) {
    const jobs = [];
    for (let n = start; n < Math.min(to, start + BATCH); n++) {
      const poison = n % poisonEvery === poisonEvery - 1;
      jobs.push({
        queue: CHAOS_QUEUE,
        kind: poison ? 'poison' : 'work',
        payload: { n },
        maxAttempts: poison ? POISON_ATTEMPTS : WORK_ATTEMPTS,
      });
    }
    await store.enqueueJobs({ jobs });
  }
}

export function poisonCount(jobs: number, poisonEvery: number): number {
  return Math.floor(jobs / poisonEvery);
}
