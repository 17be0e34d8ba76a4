import { expect, it } from 'vitest';
import { postgresStore } from '../../../../src/adapters/postgres/index.js';
import { EVENTS_AFTER } from '../../../../src/adapters/sql/queries/list-job-events.js';
import { sqlSchema } from '../../../../src/adapters/sql/sql-schema.js';
import { buildStatement } from '../../../../src/adapters/sql/statement.js';
import { describePostgres, usePostgresStore } from '../../../support/postgres.js';

/** The live feed's reads through job_events_id_brin (migration 0031): the history has no
 *  primary key, so these hold only if the BRIN bounds the read. */
describePostgres('listJobEvents on PostgreSQL: the tail of a history without a primary key', (url) => {
  const db = usePostgresStore(url, 'jv_list_events');

  const insertEvents = (count: number, tag: string) =>
    db.pool.query(
      `insert into "${db.schema}".job_events (job_id, from_state, to_state, attempt, worker_id, at)
       select i, 'running', 'completed', 1, $2, now() from generate_series(1, $1) i`,
      [count, tag],
    );

  it('the newest events are found past a gap wider than the first look (the newest ids deleted)', async () => {
    const { pool, store, schema } = db;
    await pool.query(`truncate "${schema}".job_events`);
    await insertEvents(10, 'kept');
    await insertEvents(5_000, 'gone');
    await pool.query(`delete from "${schema}".job_events where worker_id = 'gone'`);
    const newest = await store.listJobEvents({ limit: 4 });
    expect(newest.map((e) => e.workerId)).toEqual(['kept', 'kept', 'kept', 'kept']);
    const all = await store.listJobEvents({ limit: 100 });
    expect(all).toHaveLength(10);
    // Oldest first, ending at the newest: the same order the feed's polls give.
    expect(all.slice(-4).map((e) => e.id)).toEqual(newest.map((e) => e.id));
    expect(BigInt(newest[0]!.id) < BigInt(newest[3]!.id)).toBe(true);
  });

  /** Shared buffers the feed's poll at the tail reads: 500 events after `afterId`. */
  async function tailBuffers(afterId: bigint): Promise<number> {
    const { text } = buildStatement(EVENTS_AFTER, sqlSchema(db.schema));
    const client = await db.pool.connect();
    try {
      await client.query('begin');
      await client.query('set local enable_seqscan = off');
      const { rows } = await client.query(`explain (analyze, buffers, format json) ${text}`, [String(afterId), 500]);
      const plan = rows[0]['QUERY PLAN'][0].Plan;
      expect(JSON.stringify(plan)).toContain('job_events_id_brin');
      return plan['Shared Hit Blocks'] + plan['Shared Read Blocks'];
    } finally {
      await client.query('rollback');
      client.release();
    }
  }

  const lastId = async () =>
    BigInt((await db.pool.query(`select max(id)::text as id from "${db.schema}".job_events`)).rows[0].id);

  it('a poll at the tail reads what was written since its cursor: the read summarises the new ranges first; after pruning freed and refilled the oldest pages too', async () => {
    const { pool, schema } = db;
    await pool.query(`truncate "${schema}".job_events`);
    // Autovacuum would summarise the ranges on its own, some time later: not in this test.
    await pool.query(`alter table "${schema}".job_events set (autovacuum_enabled = false)`);
    await insertEvents(60_000, 'old');
    const { rows: [size] } = await pool.query(`select pg_relation_size('"${schema}".job_events') / 8192 as pages`);
    expect(Number(size.pages)).toBeGreaterThan(500);
    // Not summarised: every range is read whole.
    expect(await tailBuffers((await lastId()) - 500n)).toBeGreaterThan(500);
    // A poll as the feed makes it: a store of its own each time, since the summary is made at
    // most once a second per store.
    const poll = async () => {
      const reader = postgresStore({ pool, schema });
      try {
        await reader.listJobEvents({ afterId: String((await lastId()) - 1n) });
      } finally {
        await reader.close();
      }
    };
    await poll();
    // 500 rows fill about 6 pages; a range is 32.
    expect(await tailBuffers((await lastId()) - 500n)).toBeLessThan(120);
    // Pruning: the oldest half goes, vacuum frees its pages (unless another session's snapshot
    // holds them back, as other test files' may: then the new rows go to new pages at the end),
    // new rows fill them again.
    await pool.query(`delete from "${schema}".job_events where id < $1`, [String((await lastId()) - 30_000n)]);
    await pool.query(`vacuum "${schema}".job_events`);
    await insertEvents(30_000, 'new');
    await poll();
    expect(await tailBuffers((await lastId()) - 500n)).toBeLessThan(120);
    const tail = await db.store.listJobEvents({ afterId: String((await lastId()) - 3n), limit: 10 });
    expect(tail.map((e) => e.workerId)).toEqual(['new', 'new', 'new']);
  });

  it('reads without summarising, at once, while a vacuum holds the table', async () => {
    const { pool, schema } = db;
    await insertEvents(100, 'held');
    const vacuum = await pool.connect();
    const reader = postgresStore({ pool, schema });
    try {
      await vacuum.query('begin');
      await vacuum.query(`lock table "${schema}".job_events in share update exclusive mode`);
      // The lock is held until `finally`: a read that waited for it would never answer. The
      // summary gives up after its 20 ms lock_timeout and the read goes on.
      const events = await reader.listJobEvents({ limit: 5 });
      expect(events.map((e) => e.workerId)).toEqual(['held', 'held', 'held', 'held', 'held']);
      const { rows } = await pool.query(`select "${schema}".summarize_job_events() as n`);
      expect(rows[0].n).toBe(-1);
    } finally {
      await vacuum.query('rollback');
      vacuum.release();
      await reader.close();
    }
  });

  it('a role that may read the history but does not own it reads without summarising', async () => {
    const { pool, schema } = db;
    const role = `${schema}_reader`;
    await insertEvents(10, 'read');
    await pool.query(`create role "${role}"`);
    const client = await pool.connect();
    try {
      await pool.query(`grant usage on schema "${schema}" to "${role}"`);
      await pool.query(`grant select on all tables in schema "${schema}" to "${role}"`);
      await pool.query(`grant usage, select on all sequences in schema "${schema}" to "${role}"`);
      await pool.query(`grant execute on function "${schema}".summarize_job_events() to "${role}"`);
      await client.query(`set role "${role}"`);
      expect((await client.query(`select "${schema}".summarize_job_events() as n`)).rows[0].n).toBe(-1);
      const { rows } = await client.query(`select count(*)::int as n from "${schema}".job_events where worker_id = 'read'`);
      expect(rows[0].n).toBe(10);
    } finally {
      await client.query('reset role');
      client.release();
      await pool.query(`drop owned by "${role}"`);
      await pool.query(`drop role "${role}"`);
    }
  });
});
