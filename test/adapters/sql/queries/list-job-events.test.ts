import { expect, it } from 'vitest';
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

  it('a poll at the tail reads the pages written since its cursor, also after pruning freed the oldest pages and new rows filled them', async () => {
    const { pool, store, schema } = db;
    await pool.query(`truncate "${schema}".job_events`);
    await insertEvents(60_000, 'old');
    await pool.query(`vacuum analyze "${schema}".job_events`);
    // Pruning: the oldest half goes, vacuum frees its pages, new rows fill them again.
    const { rows: [cut] } = await pool.query(`select min(id) + 30000 as id from "${schema}".job_events`);
    await pool.query(`delete from "${schema}".job_events where id < $1`, [cut.id]);
    await pool.query(`vacuum "${schema}".job_events`);
    await insertEvents(30_000, 'new');
    await pool.query(`vacuum analyze "${schema}".job_events`);
    const { rows: [size] } = await pool.query(`select pg_relation_size('"${schema}".job_events') / 8192 as pages`);
    const { rows: [last] } = await pool.query(`select max(id) as id from "${schema}".job_events`);
    const { text } = buildStatement(EVENTS_AFTER, sqlSchema(schema));
    const client = await pool.connect();
    try {
      await client.query('begin');
      await client.query('set local enable_seqscan = off');
      const { rows } = await client.query(`explain (analyze, buffers, format json) ${text}`, [String(BigInt(last.id) - 500n), 500]);
      const plan = rows[0]['QUERY PLAN'][0].Plan;
      const buffers = plan['Shared Hit Blocks'] + plan['Shared Read Blocks'];
      expect(JSON.stringify(plan)).toContain('job_events_id_brin');
      // 500 rows fill about 6 pages; a range is 32. A scan of the table would be ~700.
      expect(Number(size.pages)).toBeGreaterThan(500);
      expect(buffers).toBeLessThan(120);
    } finally {
      await client.query('rollback');
      client.release();
    }
    const tail = await store.listJobEvents({ afterId: String(BigInt(last.id) - 3n), limit: 10 });
    expect(tail.map((e) => e.workerId)).toEqual(['new', 'new', 'new']);
  });
});
