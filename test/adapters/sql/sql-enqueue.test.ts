/**
 * `<schema>.enqueue(...)`, the SQL function of migration 0007, on PostgreSQL and on PGlite:
 * the same row, history and NOTIFY as the library's enqueue, the same checks, dedupe by
 * unique key, and a job enqueued by a trigger inside the user's transaction that a worker
 * runs once that transaction commits (and never when it rolls back). With it, `send_signal`
 * (sql-send-signal.ts), on the same databases.
 */
import { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { pgliteStore } from '../../../src/adapters/pglite/index.js';
import { postgresStore } from '../../../src/adapters/postgres/index.js';
import type { SqlJobStore } from '../../../src/adapters/sql/sql-store.js';
import { buildEnqueueJob, createSupervisor, defineQueue, type Job } from '../../../src/index.js';
import { MAX_KEY_BYTES } from '../../../src/validation.js';
import { describePostgres, dropSchema, freshSchema, testPool } from '../../support/postgres.js';
import { describeSqlSendSignal } from './sql-send-signal.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const WAIT = { timeout: 15_000, interval: 20 };

type Query = <T = Record<string, unknown>>(text: string, values?: unknown[]) => Promise<T[]>;

interface Database {
  schema: string;
  store: SqlJobStore;
  query: Query;
  /** Runs `fn` in a transaction of the user's, then commits or rolls back. */
  transaction(end: 'commit' | 'rollback', fn: (query: Query) => Promise<void>): Promise<void>;
  /** Empties the tables between tests. */
  reset(): Promise<void>;
}

function describeSqlEnqueue(open: () => Database): void {
  let db: Database;
  const s = () => `"${db.schema}"`;
  /** `select * from <schema>.enqueue(<args>)`: its one row, the id as a string (PGlite reads
   *  bigint as a number). */
  const enqueue = async (args: string, values: unknown[] = []) => {
    const [row] = await db.query<{ job_id: string | number; created: boolean }>(`select * from ${s()}.enqueue(${args})`, values);
    return { job_id: String(row!.job_id), created: row!.created };
  };

  beforeAll(() => {
    db = open();
  });
  afterEach(() => db.reset());

  it('writes the row and history the library writes, and wakes the queue', async () => {
    const woken: string[] = [];
    const unsubscribe = await db.store.subscribe((queue) => woken.push(queue ?? '(every queue)'));
    try {
      const fromSql = await enqueue(`'emails', 'welcome', '{"to": "ana"}'`);
      expect(fromSql.created).toBe(true);
      const [fromLibrary] = await db.store.enqueueJobs({ jobs: [buildEnqueueJob('emails', 'welcome', { to: 'ana' }, {})] });
      const row = (await db.store.getJob({ id: fromSql.job_id }))!;
      const { id, createdAt, updatedAt, runAt, ...same } = fromLibrary!.job;
      expect(row).toMatchObject(same);
      expect(row.runAt).toEqual(row.createdAt);
      expect(await db.store.getJobEvents({ id: row.id })).toMatchObject([{ fromState: null, toState: 'pending', attempt: 0, workerId: null, error: null }]);
      await vi.waitFor(() => expect(woken).toContain('emails'), WAIT);
    } finally {
      await unsubscribe();
    }
  });

  it('replaces a live holder of the unique key with on_conflict (migration 0019), as onConflict does', async () => {
    const first = await enqueue(`'emails', 'digest', '{"n": 1}', unique_key => 'u'`);
    expect(await enqueue(`'emails', 'digest', '{"n": 2}', unique_key => 'u'`)).toEqual({ job_id: first.job_id, created: false });
    expect(await enqueue(`'emails', 'digest', '{"n": 3}', unique_key => 'u', on_conflict => 'replace'`)).toEqual({ job_id: first.job_id, created: false });
    expect(await db.store.getJob({ id: first.job_id })).toMatchObject({ payload: { n: 3 } });
    const [running] = await db.store.claimJobs({ workerId: 'w', leaseMs: 60_000, queues: [{ queue: 'emails', limit: 1 }] });
    const next = await enqueue(`'emails', 'digest', '{"n": 4}', unique_key => 'u', on_conflict => 'replace_running'`);
    expect(next.created).toBe(true);
    expect(await db.store.getJob({ id: running!.id })).toMatchObject({ state: 'cancelled', error: { code: 'replaced' } });
    await expect(enqueue(`'emails', 'digest', on_conflict => 'replace'`)).rejects.toThrow(/on_conflict replace needs a unique_key/);
    await expect(enqueue(`'emails', 'digest', unique_key => 'u', on_conflict => 'merge'`)).rejects.toThrow(/on_conflict must be/);
  });

  it('debounces by debounce_key: one job per burst, due debounce_in after the last call, with the last payload', async () => {
    const first = await enqueue(`'emails', 'digest', '{"n": 1}', debounce_key => 'd', debounce_in => '1 hour', debounce_max_wait => '2 hours'`);
    const second = await enqueue(`'emails', 'digest', '{"n": 2}', debounce_key => 'd', debounce_in => '1 hour', debounce_max_wait => '2 hours'`);
    expect(first.created).toBe(true);
    expect(second).toEqual({ job_id: first.job_id, created: false });
    const job = (await db.store.getJob({ id: first.job_id }))!;
    expect(job.payload).toEqual({ n: 2 });
    expect(job.runAt.getTime() - job.createdAt.getTime()).toBeGreaterThanOrEqual(3_600_000);
    await expect(enqueue(`'emails', 'digest', debounce_key => 'd'`)).rejects.toThrow(/debounce_in must be/);
    await expect(enqueue(`'emails', 'digest', debounce_key => 'd', debounce_in => '1 hour', run_in => '1 hour'`)).rejects.toThrow(/cannot be given with debounce_key/);
    await expect(enqueue(`'emails', 'digest', debounce_key => 'd', debounce_in => '1 hour', debounce_max_wait => '1 minute'`))
      .rejects.toThrow(/debounce_max_wait must be at least/);
  });

  it('ranks a job for a fair queue with tenant (migration 0020): the fair claim takes tenants round-robin', async () => {
    for (const n of [1, 2, 3]) await enqueue(`'reports', 'render', $1::jsonb, tenant => 'big'`, [JSON.stringify({ t: 'big', n })]);
    await enqueue(`'reports', 'render', '{"t": "small"}', tenant => 'small', tenant_weight => 1`);
    const claimed = await db.store.claimJobs({ workerId: 'w', leaseMs: 60_000, queues: [{ queue: 'reports', limit: 2, fairShare: true }] });
    expect(claimed.map((job) => (job.payload as { t: string }).t)).toEqual(['big', 'small']);
    await expect(enqueue(`'reports', 'render', tenant => 'x', tenant_weight => 0`)).rejects.toThrow(/tenant_weight must be above 0/);
  });

  it('takes every option by name, as enqueue does', async () => {
    const { job_id } = await enqueue(
      `'emails', 'digest', payload => '[1, 2]', run_at => $1, priority => -5, unique_key => 'digest:12', max_attempts => 7,
       concurrency_key => 'acme', expires_at => $2`,
      ['2030-01-01T09:00:00Z', '2030-01-02T09:00:00Z'],
    );
    expect(await db.store.getJob({ id: job_id })).toMatchObject({
      payload: [1, 2],
      runAt: new Date('2030-01-01T09:00:00Z'),
      priority: -5,
      uniqueKey: 'digest:12',
      maxAttempts: 7,
      concurrencyKey: 'acme',
      expiresAt: new Date('2030-01-02T09:00:00Z'),
    });
  });

  it('returns the live job that holds the unique key; once that job is done, the key is free', async () => {
    const first = await enqueue(`'emails', 'digest', unique_key => 'digest:12'`);
    expect(await enqueue(`'emails', 'digest', '{"again": true}', unique_key => 'digest:12'`)).toEqual({ job_id: first.job_id, created: false });
    // The library's enqueue sees the same holder.
    const [viaLibrary] = await db.store.enqueueJobs({ jobs: [buildEnqueueJob('emails', 'digest', {}, { uniqueKey: 'digest:12' })] });
    expect(viaLibrary).toMatchObject({ created: false, job: { id: first.job_id } });
    const [claimed] = await db.store.claimJobs({ workerId: 'w', leaseMs: 30_000, queues: [{ queue: 'emails', limit: 1 }] });
    await db.store.setStatesIfRunning({ outcomes: [{ id: claimed!.id, leaseToken: claimed!.leaseToken, state: 'completed', result: null }] });
    const next = await enqueue(`'emails', 'digest', unique_key => 'digest:12'`);
    expect(next.created).toBe(true);
    expect(next.job_id).not.toBe(first.job_id);
  });

  it.each([
    [`'e mails', 'welcome'`, /^enqueue: queue must be 1-128 characters of letters, digits, "_", ".", ":" or "-", starting with a letter or digit; got "e mails"$/],
    [`null, 'welcome'`, /^enqueue: queue must be .*; got null$/],
    [`'emails', '-welcome'`, /^enqueue: kind must be .*; got "-welcome"$/],
    [`'emails', repeat('k', 129)`, /^enqueue: kind must be /],
    [`'emails', 'welcome', '{"big": "${'x'.repeat(100)}"}', max_payload_bytes => 64`, /^enqueue: payload is 1\d\d bytes of JSON, over the limit of 64$/],
    // Bytes, not characters: 51 characters of JSON text, 91 bytes of UTF-8.
    [`'emails', 'welcome', '{"big": "${'é'.repeat(40)}"}', max_payload_bytes => 64`, /^enqueue: payload is 91 bytes of JSON, over the limit of 64$/],
    [`'emails', 'welcome', priority => null`, /^enqueue: priority must be an integer, got null$/],
    [`'emails', 'welcome', max_attempts => 0`, /^enqueue: max_attempts must be a positive integer, got 0$/],
    [`'emails', 'welcome', unique_key => ''`, /^enqueue: unique_key must be a non-empty string$/],
    [`'emails', 'welcome', unique_key => repeat('é', 501)`, /^enqueue: unique_key is 1002 bytes of UTF-8, over the limit of 1000 \(the store indexes it\)$/],
    [`'emails', 'welcome', concurrency_key => ''`, /^enqueue: concurrency_key must be a non-empty string$/],
    [`'emails', 'welcome', concurrency_key => repeat('k', 1001)`, /^enqueue: concurrency_key is 1001 bytes of UTF-8, over the limit of 1000 /],
    [`'emails', 'welcome', run_at => '2030-01-01', expires_at => '2029-12-31'`, /^enqueue: expires_at must be after run_at/],
    // Times the library refuses, which a worker's reader could not take (years 1 to 9999).
    [`'emails', 'welcome', run_at => '-infinity'`, /^enqueue: run_at gives run_at -infinity, outside the years 1 to 9999$/],
    [`'emails', 'welcome', run_at => 'infinity'`, /^enqueue: run_at gives run_at infinity, outside the years 1 to 9999$/],
    [`'emails', 'welcome', run_at => '10000-01-01Z'`, /^enqueue: run_at gives run_at 10000-01-01 .*, outside the years 1 to 9999$/],
    [`'emails', 'welcome', run_at => '0001-12-31 23:59:59Z BC'`, /^enqueue: run_at gives run_at 0001-12-31 .* BC, outside the years 1 to 9999$/],
    [`'emails', 'welcome', expires_at => 'infinity'`, /^enqueue: expires_at gives expires_at infinity, outside the years 1 to 9999$/],
    [`'emails', 'welcome', expires_at => '-infinity'`, /^enqueue: expires_at gives expires_at -infinity, outside the years 1 to 9999$/],
    [`'emails', 'welcome', run_in => interval '9000 years'`, /^enqueue: run_in gives run_at .*, outside the years 1 to 9999$/],
    // expires_at against the run_at the function resolved, by the database's clock.
    [`'emails', 'welcome', expires_at => now() - interval '45 minutes'`, /^enqueue: expires_at must be after run_at \(.*, from now\(\)\), got .* \(from expires_at\)$/],
    [`'emails', 'welcome', run_in => interval '1 hour', expires_in => interval '30 minutes'`, /^enqueue: expires_at must be after run_at \(.*, from run_in\), got .* \(from expires_in\)$/],
    [`'emails', 'welcome', run_at => now(), run_in => interval '1 hour'`, /^enqueue: give run_at or run_in, not both$/],
    [`'emails', 'welcome', expires_at => now() + interval '1 day', expires_in => interval '1 hour'`, /^enqueue: give expires_at or expires_in, not both$/],
    [`'emails', 'welcome', run_in => interval '-1 second'`, /^enqueue: run_in must not be negative, got /],
    [`'emails', 'welcome', expires_in => interval '0'`, /^enqueue: expires_in must be positive, got /],
  ])('refuses enqueue(%s) with invalid_parameter_value naming it; nothing written', async (args, message) => {
    await expect(enqueue(args)).rejects.toMatchObject({ code: '22023', message: expect.stringMatching(message) });
    expect(await db.store.countJobs()).toEqual([]);
  });

  it('takes run_in and expires_in relative to the database clock', async () => {
    const { job_id } = await enqueue(`'emails', 'digest', run_in => interval '1 hour', expires_in => interval '90 minutes'`);
    const job = (await db.store.getJob({ id: job_id }))!;
    // created_at is the same now() the function resolved both from.
    expect(job.runAt.getTime() - job.createdAt.getTime()).toBe(3_600_000);
    expect(job.expiresAt!.getTime() - job.createdAt.getTime()).toBe(5_400_000);
    // By position, as before the two arguments came.
    const positional = await enqueue(`'emails', 'digest', '{"n": 1}', '2030-01-01Z', 3, null, 4`);
    expect(await db.store.getJob({ id: positional.job_id })).toMatchObject({ payload: { n: 1 }, runAt: new Date('2030-01-01Z'), priority: 3, maxAttempts: 4 });
  });

  it('stores {} for a null payload, as for an omitted one (and as the library does for undefined)', async () => {
    const { job_id } = await enqueue(`'emails', 'welcome', null`);
    expect((await db.store.getJob({ id: job_id }))!.payload).toEqual({});
    const json = await enqueue(`'emails', 'welcome', 'null'::jsonb`);
    expect((await db.store.getJob({ id: json.job_id }))!.payload).toBeNull();
  });

  it('takes a queue the store has not seen yet, and records it, as the library\'s enqueue does', async () => {
    const name = `new-queue-${Math.random().toString(36).slice(2, 8)}`;
    expect((await db.store.listQueues()).map((q) => q.name)).not.toContain(name);
    const { job_id, created } = await enqueue('$1, $2', [name, 'first']);
    expect(created).toBe(true);
    expect(await db.store.getJob({ id: job_id })).toMatchObject({ queue: name, state: 'pending' });
    expect((await db.store.listQueues()).map((q) => q.name)).toContain(name);
  });

  it('accepts the names and keys the library accepts, and only those', async () => {
    for (const name of ['a', 'a'.repeat(128), 'a'.repeat(129), 'A9_.:-z', '-a', '_a', 'a b', 'ü', 'a/b']) {
      const library = (() => {
        try {
          buildEnqueueJob(name, name, {}, {});
          return 'accepted';
        } catch {
          return 'refused';
        }
      })();
      const sql = await enqueue('$1, $2', [name, name]).then(
        () => 'accepted',
        () => 'refused',
      );
      expect(sql, name).toBe(library);
    }
    // The library's limit, in bytes of UTF-8: two-byte characters up to it fit, one byte more does not.
    const half = MAX_KEY_BYTES / 2;
    expect((await enqueue(`'q', 'k', unique_key => repeat('é', ${half}), concurrency_key => repeat('k', ${MAX_KEY_BYTES})`)).created).toBe(true);
    await expect(enqueue(`'q', 'k', unique_key => repeat('é', ${half}) || 'k'`)).rejects.toMatchObject({ code: '22023' });
    await expect(enqueue(`'q', 'k', concurrency_key => repeat('k', ${MAX_KEY_BYTES + 1})`)).rejects.toMatchObject({ code: '22023' });
  });

  it("runs a job a trigger enqueued inside the user's transaction, once it commits; a rollback leaves none", async () => {
    await db.query(`create table ${s()}.orders (id serial primary key, email text not null)`);
    await db.query(`
      create function ${s()}.order_placed() returns trigger language plpgsql as $$
      begin
        perform ${s()}.enqueue('emails', 'confirm', jsonb_build_object('orderId', new.id, 'email', new.email));
        return new;
      end $$`);
    await db.query(`create trigger order_placed after insert on ${s()}.orders for each row execute function ${s()}.order_placed()`);
    const emails = defineQueue('emails', {
      handlers: { confirm: async ({ payload }: Job<{ orderId: number; email: string }>) => ({ confirmed: payload.orderId, to: payload.email }) },
    });
    const supervisor = createSupervisor({ store: db.store, queues: [emails], logger: silent });
    await supervisor.start();
    try {
      await db.transaction('rollback', async (query) => {
        await query(`insert into ${s()}.orders (email) values ('nobody@example.com')`);
        expect(await query(`select count(*)::int as n from ${s()}.jobs`)).toEqual([{ n: 1 }]);
      });
      let orderId = 0;
      await db.transaction('commit', async (query) => {
        const [order] = await query<{ id: number }>(`insert into ${s()}.orders (email) values ('ana@example.com') returning id`);
        orderId = order!.id;
      });
      await vi.waitFor(async () => {
        expect(await db.store.listJobs({ queue: 'emails' })).toMatchObject([
          { kind: 'confirm', state: 'completed', payload: { orderId }, result: { confirmed: orderId, to: 'ana@example.com' } },
        ]);
      }, WAIT);
    } finally {
      await supervisor.stop({ graceMs: 0 });
      await db.query(`drop table ${s()}.orders`);
      await db.query(`drop function ${s()}.order_placed()`);
    }
  });

  // Its sibling from migration 0017, on the same database.
  describe('send_signal', () => describeSqlSendSignal(open));
}

describePostgres('SQL enqueue on PostgreSQL', (url) => {
  const schema = freshSchema('jv_sql_enqueue');
  let pool: pg.Pool;
  let store: SqlJobStore;

  beforeAll(async () => {
    pool = testPool(url);
    store = postgresStore({ pool, schema, notifyDebounceMs: 0 });
    await store.migrate();
  });
  afterAll(async () => {
    await store.close();
    await dropSchema(pool, schema);
    await pool.end();
  });

  describeSqlEnqueue(() => ({
    schema,
    store,
    query: async (text, values) => (await pool.query(text, values)).rows,
    async transaction(end, fn) {
      const client = await pool.connect();
      try {
        await client.query('begin');
        await fn(async (text, values) => (await client.query(text, values)).rows);
        await client.query(end);
      } finally {
        client.release();
      }
    },
    reset: async () => {
      await pool.query(`truncate "${schema}".jobs, "${schema}".job_events cascade`);
    },
  }));
});

describe('SQL enqueue on PGlite', () => {
  const schema = 'jv_sql_enqueue';
  // One PGlite for the file: starting one costs seconds and hundreds of MB.
  let pglite: PGlite;
  let store: SqlJobStore;

  beforeAll(async () => {
    pglite = await PGlite.create();
    store = pgliteStore({ db: pglite, schema, notifyDebounceMs: 0 });
    await store.migrate();
  });
  afterAll(async () => {
    await store.close();
    await pglite.close();
  });

  describeSqlEnqueue(() => ({
    schema,
    store,
    query: async <T,>(text: string, values?: unknown[]) => (await pglite.query<T>(text, values)).rows,
    async transaction(end, fn) {
      await pglite.transaction(async (tx) => {
        await fn(async <T,>(text: string, values?: unknown[]) => (await tx.query<T>(text, values)).rows);
        if (end === 'rollback') await tx.rollback();
      });
    },
    reset: async () => {
      await pglite.exec(`truncate "${schema}".jobs, "${schema}".job_events cascade`);
    },
  }));
});
