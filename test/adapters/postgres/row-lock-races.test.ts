/**
 * Races that only a real server with many connections has, made deterministic: another
 * transaction holds a row or key lock, open, while this store's statement runs; the test
 * waits until that statement is blocked by it (pg_blocking_pids), or sees it finish without
 * waiting, then commits. No sleeps, no second process.
 */
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { postgresStore, type SqlJobStore } from '../../../src/adapters/postgres/index.js';
import { describePostgres, dropSchema, freshSchema, testPool } from '../../support/postgres.js';

describePostgres('row-lock races on PostgreSQL', (url) => {
  const schema = freshSchema('jv_races');
  let pool: pg.Pool;
  let store: SqlJobStore;
  /** The other transaction's connection. */
  let other: pg.Client;
  let otherPid: number;

  beforeAll(async () => {
    pool = testPool(url);
    store = postgresStore({ pool, schema });
    await store.migrate();
    other = new pg.Client({ connectionString: url });
    await other.connect();
    otherPid = (await other.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  });

  afterAll(async () => {
    await other.end();
    await dropSchema(pool, schema);
    await store.close();
    await pool.end();
  });

  beforeEach(async () => {
    await pool.query(`delete from "${schema}".jobs`);
    await pool.query(`delete from "${schema}".queue_starts`);
  });

  async function enqueue(count: number, concurrencyKey?: string): Promise<string[]> {
    const jobs = Array.from({ length: count }, () => ({ queue: 'q', kind: 'k', payload: {}, maxAttempts: 3, ...(concurrencyKey && { concurrencyKey }) }));
    return (await store.enqueueJobs({ jobs })).map((r) => r.job.id);
  }

  /** Settles with `blocked` once a statement of this store waits for the other transaction,
   *  or with the statement's own answer if it ends first. */
  async function blockedOr<T>(statement: Promise<T>): Promise<{ answer: T } | 'blocked'> {
    let done = false;
    const answered = statement.then((answer) => {
      done = true;
      return { answer };
    });
    const blocked = (async () => {
      while (!done) {
        const { rows } = await pool.query('select 1 from pg_stat_activity where $1 = any(pg_blocking_pids(pid))', [otherPid]);
        if (rows.length > 0) return 'blocked' as const;
      }
      return answered;
    })();
    return Promise.race([answered, blocked]);
  }

  async function row(id: string) {
    const { rows } = await pool.query(`select state, lease_token::text as token, attempt, result from "${schema}".jobs where id = $1`, [id]);
    return rows[0] as { state: string; token: string | null; attempt: number; result: unknown };
  }

  it('refuses a zombie\'s outcome that waited on the row lock while the job was leased again', async () => {
    const [id] = await enqueue(1);
    const [first] = await store.claimJobs({ workerId: 'zombie', leaseMs: 60_000, queues: [{ queue: 'q', limit: 1 }] });
    // The job leased again (as a rescue and a new claim would) in a transaction still open:
    // the zombie's statement reads the row as running under its own token, then waits.
    await other.query('begin');
    const { rows } = await other.query(
      `update "${schema}".jobs set lease_token = gen_random_uuid(), attempt = attempt + 1, worker_id = 'w2',
         lease_expires_at = now() + interval '1 minute' where id = $1 returning lease_token::text as token`,
      [id],
    );
    const write = store.setStatesIfRunning({ outcomes: [{ id: id!, leaseToken: first!.leaseToken!, state: 'completed', result: { by: 'zombie' } }] });
    try {
      expect(await blockedOr(write)).toBe('blocked');
    } finally {
      await other.query('commit');
    }
    expect(await write).toEqual([false]);
    expect(await row(id!)).toEqual({ state: 'running', token: rows[0].token, attempt: 2, result: null });
  });

  it('refuses a zombie\'s step checkpoint that waited on the row lock while the job was leased again', async () => {
    const [id] = await enqueue(1);
    const [first] = await store.claimJobs({ workerId: 'zombie', leaseMs: 60_000, queues: [{ queue: 'q', limit: 1 }] });
    await other.query('begin');
    await other.query(`update "${schema}".jobs set lease_token = gen_random_uuid(), attempt = attempt + 1 where id = $1`, [id]);
    // The checkpoint inserts into job_steps and only reads the job's row: FOR SHARE makes it
    // wait for the update that ends its lease, and then find the lease gone.
    const checkpoint = store.checkpointSteps({ steps: [{ id: id!, leaseToken: first!.leaseToken!, name: 'charge', result: 1 }] });
    try {
      expect(await blockedOr(checkpoint)).toBe('blocked');
    } finally {
      await other.query('commit');
    }
    expect(await checkpoint).toEqual([false]);
    const { rows } = await pool.query(`select count(*)::int as n from "${schema}".job_steps where job_id = $1`, [id]);
    expect(rows[0].n).toBe(0);
  });

  it('refuses a zombie\'s renewal that waited on the row lock while the job was leased again', async () => {
    const [id] = await enqueue(1);
    const [first] = await store.claimJobs({ workerId: 'zombie', leaseMs: 60_000, queues: [{ queue: 'q', limit: 1 }] });
    const lease = { id: id!, leaseToken: first!.leaseToken! };
    await other.query('begin');
    await other.query(`update "${schema}".jobs set lease_token = gen_random_uuid(), attempt = attempt + 1 where id = $1`, [id]);
    const renew = store.renewLeases({ leases: [lease], leaseMs: 60_000 });
    try {
      expect(await blockedOr(renew)).toBe('blocked');
    } finally {
      await other.query('commit');
    }
    expect(await renew).toEqual(['lost']);
  });

  it('passes over a row another claim holds locked (SKIP LOCKED), without waiting for it', async () => {
    const [a, b] = await enqueue(2);
    await other.query('begin');
    await other.query(`select id from "${schema}".jobs where id = $1 for update`, [a]);
    const claim = store.claimJobs({ workerId: 'w1', leaseMs: 60_000, queues: [{ queue: 'q', limit: 2 }] });
    let answer: Awaited<ReturnType<typeof blockedOr>>;
    try {
      answer = await blockedOr(claim);
    } finally {
      await other.query('rollback');
    }
    expect(answer, 'the claim waited for the locked row').not.toBe('blocked');
    expect((await claim).map((j) => j.id)).toEqual([b]);
    expect((await row(a!)).state).toBe('pending');
  });

  it('takes no job of a key another claim is taking now, even when this snapshot shows none running', async () => {
    const [a, b] = await enqueue(2, 'tenant-1');
    // Another worker's claim of job a, between its key-slot lock and its commit.
    await other.query('begin');
    expect((await other.query(`select "${schema}".claim_key_slots('q', 'tenant-1', 1) as free`)).rows).toEqual([{ free: 1 }]);
    await other.query(`update "${schema}".jobs set state = 'running', attempt = 1, lease_token = gen_random_uuid(),
      lease_expires_at = now() + interval '1 minute' where id = $1`, [a]);
    let claimed: string[];
    try {
      claimed = (await store.claimJobs({ workerId: 'w1', leaseMs: 60_000, queues: [{ queue: 'q', limit: 2, perKeyLimit: 1 }] })).map((j) => j.id);
    } finally {
      await other.query('commit');
    }
    expect(claimed).toEqual([]);
    expect([(await row(a!)).state, (await row(b!)).state]).toEqual(['running', 'pending']);
    // Once that claim committed, the key is full by this store's own count.
    expect(await store.claimJobs({ workerId: 'w1', leaseMs: 60_000, queues: [{ queue: 'q', limit: 2, perKeyLimit: 1 }] })).toEqual([]);
  });

  it('starts nothing of a rate-limited queue while another claim holds its window, whose starts this snapshot cannot see', async () => {
    const rateLimit = { max: 1, intervalMs: 60_000 };
    await enqueue(2);
    // Another worker's claim: its window's allowance taken (the queue's rate lock), its start
    // logged, not committed yet.
    await other.query('begin');
    expect((await other.query(`select "${schema}".claim_rate_allowance('q', 1, 60000, now()) as allowed`)).rows).toEqual([{ allowed: 1 }]);
    await other.query(`insert into "${schema}".queue_starts (queue, at) values ('q', now())`);
    let claimed: number;
    try {
      claimed = (await store.claimJobs({ workerId: 'w1', leaseMs: 60_000, queues: [{ queue: 'q', limit: 2, rateLimit }] })).length;
    } finally {
      await other.query('commit');
    }
    expect(claimed).toBe(0);
    // Committed, that start fills the window by this store's own count.
    expect(await store.claimJobs({ workerId: 'w1', leaseMs: 60_000, queues: [{ queue: 'q', limit: 2, rateLimit }] })).toEqual([]);
  });
});
