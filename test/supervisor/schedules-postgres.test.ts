/**
 * Schedules on Postgres with a worker whose wall clock is 10 minutes off: ticks are computed
 * and written by the database's clock. Real time (an every-second schedule); every wait polls
 * with a deadline.
 */
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';
import { postgresStore } from '../../src/adapters/postgres/index.js';
import { createSupervisor, defineQueue, defineSchedule, type Supervisor } from '../../src/index.js';
import { describePostgres, dropSchema, freshSchema, testPool } from '../support/postgres.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const MINUTE = 60_000;

describePostgres('schedules on Postgres by the database clock', (url) => {
  const schema = freshSchema('jv_pg_schedules');
  let admin: pg.Pool;
  let supervisor: Supervisor | undefined;

  beforeAll(async () => {
    admin = testPool(url);
    await postgresStore({ pool: admin, schema }).migrate();
  });

  afterEach(async () => {
    await supervisor?.stop({ graceMs: 0 });
    supervisor = undefined;
    vi.restoreAllMocks();
    await admin.query(`truncate "${schema}".jobs, "${schema}".job_events, "${schema}".job_signals, "${schema}".schedules`);
  });

  afterAll(async () => {
    await dropSchema(admin, schema);
    await admin.end();
  });

  for (const skew of [10 * MINUTE, -10 * MINUTE]) {
    it(`writes last_tick_at and runAt by the database's clock when the worker's is ${skew > 0 ? 'ahead' : 'behind'}`, async () => {
      const realNow = Date.now.bind(Date);
      vi.spyOn(Date, 'now').mockImplementation(() => realNow() + skew);
      const ticks = defineQueue('ticks', { handlers: { tick: async () => {} } });
      const idle = defineQueue('idle', { handlers: { none: async () => {} } });
      const store = postgresStore({ pool: admin, schema });
      // The ticks' queue is not run: its jobs stay as the scheduler wrote them.
      supervisor = createSupervisor({
        store,
        queues: [idle],
        schedules: [defineSchedule({ name: 'every-second', cron: '* * * * * *', queue: ticks, kind: 'tick', payload: {} })],
        logger: silent,
      });
      await supervisor.start();
      const rows = await vi.waitFor(
        async () => {
          const { rows } = await admin.query<{ run_at: Date; created_at: Date; db_now: Date }>(
            `select run_at, created_at, now() as db_now from "${schema}".jobs order by id`,
          );
          expect(rows.length).toBeGreaterThanOrEqual(2);
          return rows;
        },
        { timeout: 10_000, interval: 50 },
      );
      const {
        rows: [schedule],
      } = await admin.query<{ last_tick_at: Date; db_now: Date }>(
        `select last_tick_at, now() as db_now from "${schema}".schedules where name = 'every-second'`,
      );
      for (const row of rows) {
        // A tick is enqueued when it is due by the database's clock, within the round trip.
        expect(Math.abs(row.created_at.getTime() - row.run_at.getTime())).toBeLessThan(5_000);
        expect(row.run_at.getMilliseconds()).toBe(0);
      }
      expect(Math.abs(schedule!.db_now.getTime() - schedule!.last_tick_at.getTime())).toBeLessThan(5_000);
    });
  }
});
