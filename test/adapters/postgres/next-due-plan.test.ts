import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { postgresStore } from '../../../src/adapters/postgres/index.js';
import { NEXT_DUE_IN } from '../../../src/adapters/sql/queries/durable-jobs.js';
import { sqlSchema } from '../../../src/adapters/sql/sql-schema.js';
import { buildStatement } from '../../../src/adapters/sql/statement.js';
import { describePostgres, dropSchema, freshSchema, settleStatistics, testPool } from '../../support/postgres.js';

/** The supervisor's question for its wake-up timer (`nextDueIn`) must not read the jobs that
 *  sleep or wait for a long time: 20,000 of them beside due and finished jobs, it reads
 *  jobs_later_idx (migration 0021) for the next interval alone, and answers by the store's clock. */
describePostgres('next due job: plan', (url) => {
  const schema = freshSchema('jv_next_due');
  let pool: pg.Pool;

  beforeAll(async () => {
    pool = testPool(url);
    const store = postgresStore({ pool, schema });
    await store.migrate();
    await store.close();
    await pool.query(`
      insert into "${schema}".jobs (queue, kind, payload, state, priority, run_at, attempt, max_attempts, created_at, updated_at, wait_signal)
      select 'q' || (i % 2), 'k', '{}',
        case when i % 4 = 0 then 'completed' when i % 4 = 1 then 'pending' else 'sleeping' end, 0,
        case when i % 4 = 2 then now() + make_interval(days => 30) when i % 4 = 3 then 'infinity'::timestamptz else now() - interval '1 hour' end,
        1, 3, now() - interval '1 hour', now(), case when i % 4 = 3 then 'approved' end
      from generate_series(1, 80000) i`);
    await pool.query(`
      insert into "${schema}".jobs (queue, kind, payload, state, priority, run_at, attempt, max_attempts, created_at, updated_at)
      values ('q1', 'k', '{}', 'sleeping', 0, now() + interval '2 minutes', 1, 3, now(), now()),
             ('q1', 'k', '{}', 'pending', 0, now() + interval '1 minute', 0, 3, now(), now())`);
    await settleStatistics(pool, schema, ['jobs']);
  });

  afterAll(async () => {
    await dropSchema(pool, schema);
    await pool.end();
  });

  it('reads jobs_later_idx, never the table or the claim index', async () => {
    const { text } = buildStatement(NEXT_DUE_IN, sqlSchema(schema));
    const { rows } = await pool.query(`explain (format json) ${text}`, [null, ['q0', 'q1'], 300_000, 0]);
    const plan = JSON.stringify(rows[0]['QUERY PLAN']);
    expect(plan).toContain('jobs_later_idx');
    expect(plan).not.toContain('Seq Scan');
    expect(plan).not.toContain('jobs_claim_idx');
  });

  it('answers the first of the window: a later runAt before a sleep; nothing beyond the window', async () => {
    const store = postgresStore({ pool, schema });
    try {
      const dueIn = await store.nextDueIn({ queues: ['q0', 'q1'], withinMs: 300_000 });
      expect(dueIn).toBeGreaterThan(0);
      expect(dueIn).toBeLessThanOrEqual(60_000);
      expect(await store.nextDueIn({ queues: ['q0'], withinMs: 300_000 })).toBeNull();
      expect(await store.nextDueIn({ queues: ['q1'], withinMs: 1_000 })).toBeNull();
    } finally {
      await store.close();
    }
  });
});
