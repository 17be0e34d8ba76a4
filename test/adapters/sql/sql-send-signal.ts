/**
 * `<schema>.send_signal(job_id, name, payload)`, the SQL function of migration 0017 beside
 * `<schema>.enqueue`: the library's sendSignal from psql, a trigger or any language. Called
 * from sql-enqueue.test.ts on PostgreSQL and PGlite (one database each for both functions).
 */
import { beforeAll, expect, it, vi } from 'vitest';
import { NEVER } from '../../../src/adapters/store.js';
import type { SqlJobStore } from '../../../src/adapters/sql/sql-store.js';
import type { ClaimedJob } from '../../../src/types.js';
import { assertName } from '../../../src/validation.js';

type Query = <T = Record<string, unknown>>(text: string, values?: unknown[]) => Promise<T[]>;

export interface SignalDatabase {
  schema: string;
  store: SqlJobStore;
  query: Query;
  transaction(end: 'commit' | 'rollback', fn: (query: Query) => Promise<void>): Promise<void>;
}

const WAIT = { timeout: 15_000, interval: 20 };

export function describeSqlSendSignal(open: () => SignalDatabase): void {
  let db: SignalDatabase;
  const s = () => `"${db.schema}"`;
  const send = async (args: string, values: unknown[] = [], query: Query = db.query) => {
    const [row] = await query<{ woke: boolean }>(`select ${s()}.send_signal(${args}) as woke`, values);
    return row!.woke;
  };

  beforeAll(() => {
    db = open();
  });

  async function enqueued(): Promise<{ id: string }> {
    const [result] = await db.store.enqueueJobs({ jobs: [{ queue: 'orders', kind: 'ship', payload: {}, maxAttempts: 3 }] });
    return result!.job;
  }

  /** A job claimed and waiting (sleeping) for the signal `name`. */
  async function waiting(name: string): Promise<ClaimedJob> {
    await enqueued();
    const [claimed] = await db.store.claimJobs({ workerId: 'w1', leaseMs: 60_000, queues: [{ queue: 'orders', limit: 1 }] });
    expect(await db.store.suspendIfRunning({ id: claimed!.id, leaseToken: claimed!.leaseToken, kind: 'signal', name, signal: name, wake: { at: NEVER } })).toEqual({
      answer: 'sleeping',
    });
    return claimed!;
  }

  it('send_signal wakes a job waiting for the name, as sendSignal does, and NOTIFYs its queue', async () => {
    const job = await waiting('shipped');
    const woken: string[] = [];
    const unsubscribe = await db.store.subscribe((queue) => woken.push(queue ?? '(every queue)'));
    try {
      expect(await send(`$1, 'shipped', '{"carrier": "dhl"}'`, [job.id])).toBe(true);
      expect(await db.store.getJob({ id: job.id })).toMatchObject({ state: 'pending', waitingForSignal: null });
      expect((await db.store.getJobEvents({ id: job.id })).at(-1)).toMatchObject({ fromState: 'sleeping', toState: 'pending', error: { code: 'signal' } });
      await vi.waitFor(() => expect(woken).toContain('orders'), WAIT);
    } finally {
      await unsubscribe();
    }
    const [again] = await db.store.claimJobs({ workerId: 'w2', leaseMs: 60_000, queues: [{ queue: 'orders', limit: 1 }] });
    expect(await db.store.suspendIfRunning({ id: again!.id, leaseToken: again!.leaseToken, kind: 'signal', name: 'shipped', signal: 'shipped', wake: { at: NEVER } })).toEqual({
      answer: 'received',
      payload: { carrier: 'dhl' },
    });
  });

  it('send_signal to a job not waiting keeps it (false); its payload defaults to {}', async () => {
    const job = await enqueued();
    expect(await send(`job_id => $1, name => 'shipped'`, [job.id])).toBe(false);
    const [claimed] = await db.store.claimJobs({ workerId: 'w1', leaseMs: 60_000, queues: [{ queue: 'orders', limit: 1 }] });
    expect(await db.store.suspendIfRunning({ id: claimed!.id, leaseToken: claimed!.leaseToken, kind: 'signal', name: 'shipped', signal: 'shipped', wake: { at: NEVER } })).toEqual({
      answer: 'received',
      payload: {},
    });
  });

  it("send_signal in the caller's transaction: a rollback delivers nothing", async () => {
    const job = await waiting('approved');
    await db.transaction('rollback', async (query) => {
      expect(await send(`$1, 'approved'`, [job.id], query)).toBe(true);
    });
    expect(await db.store.getJob({ id: job.id })).toMatchObject({ state: 'sleeping', waitingForSignal: 'approved' });
    expect(await db.query(`select count(*)::int as n from ${s()}.job_signals`)).toEqual([{ n: 0 }]);
    await db.transaction('commit', async (query) => {
      expect(await send(`$1, 'approved'`, [job.id], query)).toBe(true);
    });
    expect((await db.store.getJob({ id: job.id }))?.state).toBe('pending');
  });

  it('send_signal refuses an unknown job (P0002), an ended one (55000), and bad input (22023), writing nothing', async () => {
    await expect(send(`987654321, 'approved'`)).rejects.toMatchObject({ code: 'P0002' });
    const job = await enqueued();
    await db.store.cancelJob({ id: job.id });
    await expect(send(`$1, 'approved'`, [job.id])).rejects.toMatchObject({ code: '55000', message: expect.stringContaining('cancelled') });
    const live = await waiting('approved');
    for (const name of ['approved', 'a'.repeat(128), 'a'.repeat(129), 'A9_.:-z', '-a', 'a b', 'ü', '']) {
      const library = (() => {
        try {
          assertName('name', name);
          return 'accepted';
        } catch {
          return 'refused';
        }
      })();
      const sql = await send(`$1, $2`, [live.id, name]).then(
        () => 'accepted',
        (error: { code?: string }) => (error.code === '22023' ? 'refused' : `failed ${error.code}`),
      );
      expect(sql, name).toBe(library);
    }
    await expect(send(`$1, null`, [live.id])).rejects.toMatchObject({ code: '22023' });
    await expect(send(`$1, 'big', '"123456789"', max_payload_bytes => 10`, [live.id])).rejects.toMatchObject({
      code: '22023',
      message: 'send_signal: payload is 11 bytes of JSON, over the limit of 10',
    });
    await expect(send(`$1, 'big', '{}', max_payload_bytes => 0`, [live.id])).rejects.toMatchObject({ code: '22023' });
    expect(await db.query(`select name from ${s()}.job_signals order by id`)).toEqual([
      { name: 'approved' },
      { name: 'a'.repeat(128) },
      { name: 'A9_.:-z' },
    ]);
  });
}
