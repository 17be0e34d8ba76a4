import { expect, it } from 'vitest';
import { describePostgres, usePostgresStore } from '../../support/postgres.js';

/**
 * An enqueue writes no history row (issue 26): a job's creation is read from its row. Jobs
 * enqueued by an older build have a creation row: every read must give such a job the same
 * story as one without, once.
 */
describePostgres('creation rows: a history that holds some reads as one that holds none', (url) => {
  const db = usePostgresStore(url, 'jv_creation_rows');

  it('story, transitions counted, the feed\'s reads: the same for a job with a creation row and one without', async () => {
    const { pool, store, schema } = db;
    const since = new Date(Date.now() - 60_000);
    const [plain, older] = await store.enqueueJobs({ jobs: [{ queue: 'q', kind: 'k', payload: {}, maxAttempts: 3 }, { queue: 'q', kind: 'k', payload: {}, maxAttempts: 3 }] });
    const { rows: [written] } = await pool.query<{ n: number }>(
      `select count(*)::int as n from "${schema}".job_events where job_id = any($1::bigint[])`,
      [[plain!.job.id, older!.job.id]],
    );
    expect(written!.n).toBe(0);
    // As a build before issue 26 wrote it.
    await pool.query(
      `insert into "${schema}".job_events (job_id, from_state, to_state, attempt, worker_id, at)
       select id, null, 'pending', 0, null, created_at from "${schema}".jobs where id = $1`,
      [older!.job.id],
    );
    const claimed = await store.claimJobs({ workerId: 'w1', leaseMs: 30_000, queues: [{ queue: 'q', limit: 2 }] });
    expect(claimed).toHaveLength(2);
    await store.setStatesIfRunning({
      outcomes: claimed.map((job) => ({ id: job.id, leaseToken: job.leaseToken!, state: 'completed' as const, result: null })),
    });

    const story = async (id: string) =>
      (await store.getJobEvents({ id })).map((e) => `${e.fromState ?? '-'}>${e.toState}:${e.attempt}:${e.workerId ?? '-'}`);
    const expected = ['->pending:0:-', 'pending>running:1:w1', 'running>completed:1:w1'];
    expect(await story(plain!.job.id)).toEqual(expected);
    expect(await story(older!.job.id)).toEqual(expected);
    const [created] = await store.getJobEvents({ id: plain!.job.id });
    expect(created!.at).toEqual(plain!.job.createdAt);

    const counts = await store.countJobTransitions({ since, bucketMs: 3_600_000 });
    expect(Object.fromEntries(counts.filter((c) => c.queue === 'q').map((c) => [c.toState, c.count]))).toEqual({
      pending: 2,
      running: 2,
      completed: 2,
    });

    const ours = (jobId: string) => jobId === plain!.job.id || jobId === older!.job.id;
    const events = (await store.listJobEvents({ afterId: '0' })).filter((e) => ours(e.jobId));
    expect(events.filter((e) => e.fromState === null)).toEqual([]);
    expect(events).toHaveLength(4);
    expect((await store.listNewJobs({ afterId: '0' })).map((j) => j.id).filter(ours)).toEqual([plain!.job.id, older!.job.id]);
  });

  it('a job created waiting (a flow\'s) without a creation row reads as created waiting: the state its first transition left', async () => {
    const { pool, store, schema } = db;
    const [job] = await store.enqueueJobs({ jobs: [{ queue: 'w', kind: 'k', payload: {}, maxAttempts: 3 }] });
    // A flow job made by hand as waiting, then released, with no creation row.
    await pool.query(`update "${schema}".jobs set state = 'waiting' where id = $1`, [job!.job.id]);
    expect((await store.getJobEvents({ id: job!.job.id })).map((e) => e.toState)).toEqual(['waiting']);
    await pool.query(`update "${schema}".jobs set state = 'pending' where id = $1`, [job!.job.id]);
    await pool.query(
      `insert into "${schema}".job_events (job_id, from_state, to_state, attempt, worker_id, at) values ($1, 'waiting', 'pending', 0, null, now())`,
      [job!.job.id],
    );
    expect((await store.getJobEvents({ id: job!.job.id })).map((e) => `${e.fromState ?? '-'}>${e.toState}`)).toEqual([
      '->waiting',
      'waiting>pending',
    ]);
  });

  it('no way in writes a creation row: keyed enqueues, the SQL enqueue(), flows and a handler\'s children (migration 0032)', async () => {
    const { pool, store, schema } = db;
    const base = { kind: 'k', payload: {}, maxAttempts: 3 };
    const [keyed] = await store.enqueueJobs({ jobs: [{ ...base, queue: 'c-keyed', uniqueKey: 'u', onConflict: 'replace' }] });
    const { rows: [sql] } = await pool.query<{ job_id: string }>(`select job_id::text from "${schema}".enqueue('c-sql', 'k')`);
    const flow = await store.enqueueFlow({
      name: 'f',
      jobs: [
        { ...base, queue: 'c-flow', node: 'a', dependsOn: [] },
        { ...base, queue: 'c-flow', node: 'b', dependsOn: [{ name: 'a', onFailure: 'cancel', index: 0 }] },
      ],
    });
    const [parent] = await store.enqueueJobs({ jobs: [{ ...base, queue: 'c-parent' }] });
    const [held] = await store.claimJobs({ workerId: 'w1', leaseMs: 30_000, queues: [{ queue: 'c-parent', limit: 1 }] });
    expect(held!.id).toBe(parent!.job.id);
    await store.setStatesIfRunning({
      outcomes: [{ id: held!.id, leaseToken: held!.leaseToken!, state: 'waiting', children: [{ ...base, queue: 'c-child', key: 'one', onFailure: 'cancel' }] }],
    });
    const { rows: children } = await pool.query<{ id: string }>(`select id::text from "${schema}".jobs where queue = 'c-child'`);
    expect(children).toHaveLength(1);

    const ids = [keyed!.job.id, sql!.job_id, ...flow.jobs.map((j) => j.id), children[0]!.id];
    const { rows: [creations] } = await pool.query<{ n: number }>(
      `select count(*)::int as n from "${schema}".job_events where job_id = any($1::bigint[]) and from_state is null`,
      [ids],
    );
    expect(creations!.n).toBe(0);
    const first = async (id: string) => {
      const [event] = await store.getJobEvents({ id });
      return `${event!.fromState ?? '-'}>${event!.toState}:${event!.attempt}`;
    };
    expect(await Promise.all(ids.map(first))).toEqual(['->pending:0', '->pending:0', '->pending:0', '->waiting:0', '->pending:0']);
  });
});
