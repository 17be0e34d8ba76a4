/**
 * Results and errors stay with the job: a completed job's result on its row, a failed
 * attempt's error with its stack on the row and in the history, on the memory store and on
 * the SQL store (PGlite).
 */
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { pgliteStore } from '../../src/adapters/pglite/index.js';
import type { JobStore } from '../../src/adapters/store.js';
import { createSupervisor, defineQueue, PermanentJobError, type Job } from '../../src/index.js';
import type { Clock } from '../../src/types.js';
import { createTestClock } from '../support/sim.js';

let db: PGlite;
beforeAll(async () => {
  db = await PGlite.create();
  await pgliteStore({ db, schema: 'jv_results' }).migrate();
});
afterAll(async () => {
  await db.close();
});

const stores: Array<[string, (clock: Clock) => JobStore]> = [
  ['memory', (clock) => memoryStore({ clock })],
  ['pglite', (clock) => pgliteStore({ db, schema: 'jv_results', clock })],
];

describe.each(stores)('results and errors kept with the job: %s store', (_name, create) => {
  it('stores the result of a completed job, and each failure with its stack on the row and in the history', async () => {
    const clock = createTestClock();
    const store = create(clock);
    class UpstreamError extends Error {
      override name = 'UpstreamError';
    }
    const queue = defineQueue('results', {
      maxAttempts: 3,
      backoff: () => 0,
      handlers: {
        sum: async ({ payload }: Job<{ a: number; b: number }>) => ({ sum: payload.a + payload.b, at: new Date(0) }),
        flaky: async ({ attempt }: Job) => {
          if (attempt === 1) throw new UpstreamError('upstream 503');
          throw new PermanentJobError('place is gone');
        },
      },
    });
    const supervisor = createSupervisor({ store, queues: [queue], clock });
    const { job: sum } = await queue.enqueue(store, 'sum', { a: 2, b: 3 });
    const { job: flaky } = await queue.enqueue(store, 'flaky', {});
    expect(await supervisor.drain()).toBe(3);

    // JSON as stored: a Date comes back as its string.
    expect(await store.getJob({ id: sum.id })).toMatchObject({ state: 'completed', result: { sum: 5, at: '1970-01-01T00:00:00.000Z' }, error: null });
    const row = await store.getJob({ id: flaky.id });
    expect(row).toMatchObject({ state: 'dead', result: null, error: { code: 'permanent_error', name: 'PermanentJobError', message: 'place is gone' } });
    expect(row!.error!.stack).toMatch(/^PermanentJobError: place is gone\n\s+at /);
    const failures = (await store.getJobEvents({ id: flaky.id })).filter((e) => e.error);
    expect(failures.map((e) => [e.toState, e.error!.code, e.error!.name])).toEqual([
      ['retrying', 'handler_error', 'UpstreamError'],
      ['dead', 'permanent_error', 'PermanentJobError'],
    ]);
    expect(failures[0]!.error!.stack).toMatch(/^UpstreamError: upstream 503\n\s+at .*results\.test\.ts/);
    await supervisor.stop();
  });
});
