/**
 * Schedules on Postgres with a worker whose clock is 10 minutes off: ticks are computed and
 * written by the store's clock. The store's "now" (the database's, in production) is a
 * simulated clock passed into every statement, so each tick's time is known to the
 * millisecond; the worker's clock is another, skewed. Both move only when the test steps
 * them, and each step waits for the store calls it set off.
 */
import type pg from 'pg';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { postgresStore } from '../../src/adapters/postgres/index.js';
import { createSupervisor, defineQueue, defineSchedule } from '../../src/index.js';
import { describePostgres, dropSchema, freshSchema, testPool } from '../support/postgres.js';
import { createTestClock } from '../support/sim.js';
import { trackCalls } from '../support/store-proxy.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const MINUTE = 60_000;
/** The store's time at start: 300 ms past a second. */
const START = Date.UTC(2026, 10, 29, 12, 0, 0, 300);
const STEP_MS = 100;

describePostgres('schedules on Postgres by the store\'s clock', (url) => {
  const schema = freshSchema('jv_pg_schedules');
  let admin: pg.Pool;

  beforeAll(async () => {
    admin = testPool(url);
    await postgresStore({ pool: admin, schema }).migrate();
  });

  afterAll(async () => {
    await dropSchema(admin, schema);
    await admin.end();
  });

  for (const skew of [10 * MINUTE, -10 * MINUTE]) {
    it(`writes each tick, last_tick_at and runAt at the tick by the store's clock when the worker's is ${skew > 0 ? 'ahead' : 'behind'}`, async () => {
      await admin.query(`truncate "${schema}".jobs, "${schema}".job_events, "${schema}".schedules cascade`);
      const storeClock = createTestClock(START);
      const workerClock = createTestClock(START + skew);
      // Anything that read the process's wall clock would be off too.
      vi.spyOn(Date, 'now').mockImplementation(() => workerClock.now());
      const ticks = defineQueue('ticks', { handlers: { tick: async () => {} } });
      const idle = defineQueue('idle', { handlers: { none: async () => {} } });
      const { store, settle } = trackCalls(postgresStore({ pool: admin, schema, clock: storeClock }));
      // The ticks' queue is not run: its jobs stay as the scheduler wrote them.
      const supervisor = createSupervisor({
        store,
        clock: workerClock,
        queues: [idle],
        schedules: [defineSchedule({ name: 'every-second', cron: '* * * * * *', queue: ticks, kind: 'tick', payload: {} })],
        logger: silent,
      });
      const step = async (ms: number) => {
        storeClock.increment(ms);
        workerClock.increment(ms);
        await settle();
      };
      try {
        await supervisor.start();
        await settle();
        for (let t = 0; t < 3_000; t += STEP_MS) await step(STEP_MS);
      } finally {
        let stopped = false;
        const stopping = supervisor.stop({ graceMs: 0 }).then(() => (stopped = true));
        // The grace timer fires on the clock's next move, which is now.
        for (let i = 0; i < 20 && !stopped; i++) await step(0);
        await stopping;
        vi.restoreAllMocks();
      }
      const { rows } = await admin.query<{ run_at: Date; created_at: Date }>(`select run_at, created_at from "${schema}".jobs order by id`);
      // Neither early nor late: each written at its tick, which the store's clock reached on a step.
      const expected = ['2026-11-29T12:00:01.000Z', '2026-11-29T12:00:02.000Z', '2026-11-29T12:00:03.000Z'];
      expect(rows.map((row) => [row.run_at.toISOString(), row.created_at.toISOString()])).toEqual(expected.map((at) => [at, at]));
      const { rows: schedules } = await admin.query<{ last_tick_at: Date }>(`select last_tick_at from "${schema}".schedules where name = 'every-second'`);
      expect(schedules.map((s) => s.last_tick_at.toISOString())).toEqual([expected.at(-1)]);
    });
  }
});

