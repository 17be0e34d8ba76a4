/**
 * A supervisor's memory does not grow with the backlog: it claims only what it can run plus
 * a bounded prefetch. One supervisor drains 3,000 jobs out of a backlog of 10,000 and then of
 * 100,000 pending jobs (schemas of this file's own on the test server): both times it holds
 * at most concurrency + maxPrefetch jobs: what it holds does not grow with the backlog. Its
 * heap after GC and the event loop's delay are printed, not asserted (a heap or time bound
 * measures the machine and the garbage collector as much as the code): `npm run load`
 * checks both (RELIABILITY.md).
 */
import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type LoadMeasurement, measureLoad } from '../../scripts/load/measure-load.js';
import { describePostgres, dropSchema, freshSchema, testPool } from '../support/postgres.js';

const CONCURRENCY = 20;
const MAX_PREFETCH = 100;

describePostgres('load', (url) => {
  let pool: pg.Pool;
  const schemas: string[] = [];

  beforeAll(() => {
    pool = testPool(url);
  });

  afterAll(async () => {
    for (const schema of schemas) await dropSchema(pool, schema);
    await pool.end();
  });

  const drainFrom = (backlog: number): Promise<LoadMeasurement> => {
    const schema = freshSchema('jv_load');
    schemas.push(schema);
    return measureLoad({ pool, schema, backlog, drain: 3_000, concurrency: CONCURRENCY, maxPrefetch: MAX_PREFETCH, samples: 4 });
  };

  it('out of a 100,000-job backlog the supervisor holds no more jobs than out of a 10,000-job one', async () => {
    const small = await drainFrom(10_000);
    const large = await drainFrom(100_000);
    for (const r of [small, large]) {
      console.info(
        `[load] backlog ${r.backlog}: held at most ${r.maxHeld} (+${r.maxWriting} writing), heap after GC ${r.heapDuringMb.join(' / ')} MiB, ` +
          `event-loop delay max ${r.eventLoopDelayMaxMs.toFixed(1)} ms (own CPU ${r.longestBusyMs} ms)`,
      );
      expect(r.drained).toBeGreaterThanOrEqual(3_000);
      expect(r.maxHeld).toBeLessThanOrEqual(CONCURRENCY + MAX_PREFETCH);
    }
  }, 120_000);
});
