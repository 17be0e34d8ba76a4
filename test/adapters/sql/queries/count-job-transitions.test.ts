import { expect, it } from 'vitest';
import { postgresStore } from '../../../../src/adapters/postgres/index.js';
import { createTestClock } from '../../../../src/testing/index.js';
import { describePostgres, usePostgresStore } from '../../../support/postgres.js';

/**
 * Creations are counted from the jobs, walked back by id (count-job-transitions.ts). A job's
 * created_at is its transaction's start, its id drawn at insert: a long statement (a bulk
 * enqueue) takes ids above jobs created after it began. Two stores on one schema, each with
 * its own clock, make that order without waiting for one.
 */
describePostgres('countJobTransitions: creations when ids do not follow created_at', (url) => {
  const db = usePostgresStore(url, 'jv_count_created');

  it('a job created later with a lower id is counted; one created before the window is not', async () => {
    const T = Date.UTC(2026, 11, 7, 12, 0, 0);
    const late = postgresStore({ pool: db.pool, schema: db.schema, clock: createTestClock(T) });
    const early = postgresStore({ pool: db.pool, schema: db.schema, clock: createTestClock(T - 5_000) });
    try {
      const job = (queue: string) => ({ queue, kind: 'k', payload: {}, maxAttempts: 3 });
      // As a single enqueue committed while a bulk one, begun 5 s earlier, still ran.
      const [single] = await late.enqueueJobs({ jobs: [job('single')] });
      const bulk = await early.enqueueJobs({ jobs: [job('bulk'), job('bulk')] });
      expect(bulk.every((b) => BigInt(b.job.id) > BigInt(single!.job.id))).toBe(true);
      const created = async (since: number) =>
        (await late.countJobTransitions({ since: new Date(since), bucketMs: 60_000 }))
          .filter((c) => c.toState === 'pending')
          .map((c) => `${c.queue}:${c.count}`);
      expect(await created(T)).toEqual(['single:1']);
      expect(await created(T - 5_000)).toEqual(['bulk:2', 'single:1']);
    } finally {
      await late.close();
      await early.close();
    }
  });
});
