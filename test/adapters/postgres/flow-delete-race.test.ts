/**
 * A job enqueued to wait for a stored job while that job is being deleted, on Postgres (two
 * connections, each interleaving forced with a held row lock), both ways round: an enqueue
 * that waits for the parent's lock sees the parent gone once the delete commits, and refuses
 * with JobNotFoundError (migration 0012); a delete that waits for the lock of an enqueue
 * naming the job as a parent sees the new waiting job once the enqueue commits, and keeps the
 * parent. Either way nothing is left waiting for a job that is gone.
 */
import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { postgresStore } from '../../../src/adapters/postgres/index.js';
import type { SqlJobStore } from '../../../src/adapters/sql/sql-store.js';
import { JobNotFoundError } from '../../../src/errors.js';
import { describePostgres, dropSchema, freshSchema, testPool } from '../../support/postgres.js';

describePostgres('flows on Postgres: an enqueue racing the delete of its parent', (url) => {
  const schema = freshSchema('jv_pg_flow_race');
  let pool: pg.Pool;
  let store: SqlJobStore;

  beforeAll(async () => {
    pool = testPool(url);
    store = postgresStore({ pool, schema });
    await store.migrate();
  });

  afterAll(async () => {
    await store.close();
    await dropSchema(pool, schema);
    await pool.end();
  });

  /** Resolves once another session waits for a lock `holder` holds. (By pid, not by the
   *  waiting statement's text: pg_stat_activity keeps only its first 1,024 bytes, and a
   *  statement's select list can fill them.) */
  async function waitingForLock(holder: pg.PoolClient): Promise<void> {
    const { pid } = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!;
    const deadline = Date.now() + 15_000;
    for (;;) {
      const { rows } = await pool.query<{ n: number }>(
        'select count(*)::int as n from pg_stat_activity where $1::int = any(pg_blocking_pids(pid))',
        [pid],
      );
      if (rows[0]!.n > 0) return;
      if (Date.now() > deadline) throw new Error(`no session waited for a lock of backend ${pid}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  it('refuses the enqueue once the parent it waited to lock is deleted, and writes nothing', async () => {
    const [parent] = await store.enqueueJobs({ jobs: [{ queue: 'q', kind: 'k', payload: {}, maxAttempts: 1 }] });
    const id = parent!.job.id;
    const before = await store.countJobs();

    // The delete holds the parent's row lock (as deleteJob's statement does while it runs).
    const deleter = await pool.connect();
    try {
      await deleter.query('begin');
      await deleter.query(`select id from "${schema}".jobs where id = $1 for update`, [id]);
      const enqueue = store.enqueueFlow({
        name: 'after',
        jobs: [{ queue: 'q', kind: 'k', payload: {}, maxAttempts: 1, node: 'child', dependsOn: [{ jobId: id, name: id, onFailure: 'cancel' }] }],
      });
      const settled = enqueue.then(
        () => 'resolved',
        (error: unknown) => error,
      );
      // The enqueue has passed its first look at the parent and waits for the parent's lock.
      await waitingForLock(deleter);
      await deleter.query(`delete from "${schema}".jobs where id = $1`, [id]);
      await deleter.query('commit');
      expect(await settled).toBeInstanceOf(JobNotFoundError);
    } finally {
      await deleter.query('rollback');
      deleter.release();
    }
    const after = await store.countJobs();
    expect(after.reduce((n, c) => n + c.count, 0)).toBe(before.reduce((n, c) => n + c.count, 0) - 1);
    const { rows: edges } = await pool.query(`select job_id from "${schema}".job_deps where dep_id = $1`, [id]);
    expect(edges).toEqual([]);
  });

  it('keeps the parent when the delete waited for an enqueue that names it, and deletes it once the child has left waiting', async () => {
    const [parent] = await store.enqueueJobs({ jobs: [{ queue: 'q', kind: 'k', payload: {}, maxAttempts: 1 }] });
    const id = parent!.job.id;
    const enqueuer = await pool.connect();
    let child: string;
    try {
      // The enqueue, in its caller's transaction, holds the parent's lock until it commits.
      await enqueuer.query('begin');
      const flow = await store.enqueueFlow({
        name: 'after',
        jobs: [{ queue: 'q', kind: 'k', payload: {}, maxAttempts: 1, node: 'child', dependsOn: [{ jobId: id, name: id, onFailure: 'cancel' }] }],
        client: enqueuer,
      });
      child = flow.jobs[0]!.id;
      const deleting = store.deleteJob({ id });
      await waitingForLock(enqueuer);
      await enqueuer.query('commit');
      expect(await deleting).toMatchObject({ deleted: false, job: { id, state: 'pending' } });
    } finally {
      await enqueuer.query('rollback');
      enqueuer.release();
    }
    expect(await store.getJob({ id: child })).toMatchObject({ state: 'waiting' });
    await store.cancelJob({ id: child });
    expect(await store.deleteJob({ id })).toMatchObject({ deleted: true });
  });
});
