import type pg from 'pg';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { postgresStore } from '../../../src/adapters/postgres/index.js';
import { sqlSchema } from '../../../src/adapters/sql/sql-schema.js';
import type { Logger } from '../../../src/types.js';
import { describePostgres, dropSchema, freshSchema, testPool } from '../../support/postgres.js';

const job = { kind: 'k', payload: {}, maxAttempts: 1 };

describePostgres('the LISTEN connection', (url) => {
  const schema = freshSchema('jv_pg_listen');
  const listenQuery = `listen "${sqlSchema(schema).channel}"`;
  let pool: pg.Pool;

  beforeAll(() => {
    pool = testPool(url);
  });

  afterAll(async () => {
    await dropSchema(pool, schema);
    await pool.end();
  });

  /** Backends whose last statement was this store's LISTEN. */
  async function listeners(): Promise<number[]> {
    const { rows } = await pool.query('select pid from pg_stat_activity where query = $1', [listenQuery]);
    return rows.map((row: { pid: number }) => row.pid);
  }

  it('is re-established after the server drops it, and wake-ups resume', async () => {
    const warnings: string[] = [];
    const logger: Logger = { debug() {}, info() {}, warn: (_obj, msg) => warnings.push(msg ?? ''), error() {} };
    const store = postgresStore({ pool, schema, notifyDebounceMs: 0, logger });
    await store.migrate();
    const woken: string[] = [];
    const unsubscribe = await store.subscribe((queue) => woken.push(queue ?? '(any queue)'));
    const all = await listeners();
    expect(all).toHaveLength(1);
    const first = all[0]!;

    await pool.query('select pg_terminate_backend($1)', [first]);
    await vi.waitFor(
      async () => {
        const now = await listeners();
        expect(now).toHaveLength(1);
        expect(now[0]).not.toBe(first);
      },
      { timeout: 5_000, interval: 20 },
    );
    expect(warnings.some((msg) => msg.includes('dropped'))).toBe(true);
    // Listening again: any queue may have work that was announced while it was away.
    await vi.waitFor(() => expect(woken).toEqual(['(any queue)']), { timeout: 5_000, interval: 5 });

    await store.enqueueJobs({ jobs: [{ ...job, queue: 'after-reconnect' }] });
    await vi.waitFor(() => expect(woken).toEqual(['(any queue)', 'after-reconnect']), { timeout: 5_000, interval: 5 });

    await unsubscribe();
    await vi.waitFor(async () => expect(await listeners()).toEqual([]), { timeout: 5_000, interval: 20 });
    await store.close();
  });

  it('is one connection for all subscribers, closed after the last unsubscribes', async () => {
    const store = postgresStore({ pool, schema });
    const a = await store.subscribe(() => {});
    const b = await store.subscribe(() => {});
    expect(await listeners()).toHaveLength(1);
    await a();
    expect(await listeners()).toHaveLength(1);
    await b();
    await vi.waitFor(async () => expect(await listeners()).toEqual([]), { timeout: 5_000, interval: 20 });
    await store.close();
  });

  it('subscribe rejects when no connection can be had, and leaves nothing behind', async () => {
    const dead = testPool('postgres://postgres@127.0.0.1:1/test', { connectionTimeoutMillis: 1_000 });
    const store = postgresStore({ pool: dead, schema });
    await expect(store.subscribe(() => {})).rejects.toThrow();
    await store.close();
    await dead.end();
  });
});
