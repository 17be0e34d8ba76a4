import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pgliteStore } from '../../../src/adapters/pglite/index.js';
import { InvalidOptionError } from '../../../src/errors.js';

const job = { queue: 'q', kind: 'k', payload: {}, maxAttempts: 3 };
const schema = 'jv_pglite';

// One PGlite for the whole file, migrated once: starting one costs seconds and hundreds of MB.
// (The store conformance suite runs on PGlite from conformance.test.ts.)
let db: PGlite;

beforeAll(async () => {
  db = await PGlite.create();
  await pgliteStore({ db, schema }).migrate();
});

afterAll(async () => {
  await db.close();
});

describe('pgliteStore', () => {
  it('refuses a hostile schema name, and dataDir beside db, before anything runs', () => {
    expect(() => pgliteStore({ db, schema: 'x"; drop schema jv_pglite cascade; --' })).toThrow(InvalidOptionError);
    expect(() => pgliteStore({ db, dataDir: '/tmp/nowhere' })).toThrow(InvalidOptionError);
  });

  it('leaves the PGlite it was given open', async () => {
    const store = pgliteStore({ db, schema });
    await store.migrate();
    await store.close();
    expect(db.closed).toBe(false);
    expect((await db.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });

  it('enqueues inside a PGlite transaction: the job and its wake-up exist only once it commits', async () => {
    const store = pgliteStore({ db, schema, notifyDebounceMs: 0 });
    const woken: string[] = [];
    const unsubscribe = await store.subscribe((queue) => woken.push(queue ?? '(any queue)'));
    let rolledBack = '';
    await db.transaction(async (tx) => {
      rolledBack = (await store.enqueueJobs({ jobs: [{ ...job, queue: 'tx-rollback' }], client: tx }))[0]!.job.id;
      await tx.rollback();
    });
    const [committed] = await db.transaction((tx) => store.enqueueJobs({ jobs: [{ ...job, queue: 'tx-commit' }], client: tx }));
    expect(await store.getJob({ id: rolledBack })).toBeNull();
    expect(await store.getJob({ id: committed!.job.id })).toMatchObject({ queue: 'tx-commit', state: 'pending' });
    await vi.waitFor(() => expect(woken).toEqual(['tx-commit']), { timeout: 5_000, interval: 5 });
    await unsubscribe();
    await store.close();
  });

  it('sends one wake-up per queue for a bulk enqueue', async () => {
    const store = pgliteStore({ db, schema, notifyDebounceMs: 0 });
    const woken: string[] = [];
    const unsubscribe = await store.subscribe((queue) => woken.push(queue ?? '(any queue)'));
    await store.enqueueJobs({ jobs: Array.from({ length: 50 }, (_, i) => ({ ...job, queue: i % 2 ? 'bulk-a' : 'bulk-b' })) });
    await store.enqueueJobs({ jobs: [{ ...job, queue: 'bulk-end' }] });
    await vi.waitFor(() => expect(woken).toContain('bulk-end'), { timeout: 5_000, interval: 5 });
    expect(woken.sort()).toEqual(['bulk-a', 'bulk-b', 'bulk-end']);
    await unsubscribe();
    await store.close();
  });
});
