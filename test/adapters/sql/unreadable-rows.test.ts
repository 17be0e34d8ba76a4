/**
 * Rows the library's checks never saw (written by SQL by hand, or by an older version whose
 * `enqueue` function took any time) holding a time no job can have: `-infinity`, `infinity`,
 * a year past 9999 or before 1. On PostgreSQL and PGlite, through the public API: a claim
 * batch with such a row runs its other jobs and ends that one alone (`dead`, `invalid_row`);
 * every read still answers, showing the nearest time a job can have; so do `jobvisor job` and
 * the inspector's queues. And times the library does accept, years 1 to 9999, read back as
 * written (PGlite's own parser reads the years 1 to 99 as 1950 to 2049).
 */
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pgliteStore } from '../../../src/adapters/pglite/index.js';
import { postgresStore } from '../../../src/adapters/postgres/index.js';
import type { SqlJobStore } from '../../../src/adapters/sql/sql-store.js';
import { createSupervisor, defineQueue } from '../../../src/index.js';
import { startInspector } from '../../../src/inspector/index.js';
import { cli, requireBuiltCli } from '../../support/cli.js';
import { describePostgres, dropSchema, freshSchema, testPool } from '../../support/postgres.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const EARLIEST = new Date('0001-01-01T00:00:00.000Z');
const LATEST = new Date('9999-12-31T23:59:59.999Z');

interface Database {
  schema: string;
  store: SqlJobStore;
  query(text: string, values?: unknown[]): Promise<unknown>;
  reset(): Promise<void>;
  /** The CLI's arguments to reach this database, when the test can run it (PostgreSQL). */
  cliArgs?: string[];
}

/** Each bad value, the column it goes in, what the job's record shows, and the reason. */
const UNREADABLE = [
  { column: 'run_at', value: '-infinity', shown: { runAt: EARLIEST }, reason: 'run_at is -infinity, not a time in the years 1 to 9999' },
  { column: 'run_at', value: '0001-01-01 00:00:00+00 BC', shown: { runAt: EARLIEST }, reason: /^run_at is .*, not a time in the years 1 to 9999$/ },
  { column: 'expires_at', value: 'infinity', shown: { expiresAt: LATEST }, reason: 'expires_at is infinity, not a time in the years 1 to 9999' },
  { column: 'expires_at', value: '10000-01-01 00:00:00+00', shown: { expiresAt: LATEST }, reason: 'expires_at is +010000-01-01T00:00:00.000Z, not a time in the years 1 to 9999' },
] as const;

function describeUnreadableRows(open: () => Database): void {
  let db: Database;
  const jobs = () => `"${db.schema}".jobs`;
  const queue = defineQueue('places', { concurrency: 8, handlers: { collect: async ({ payload }) => ({ done: payload }) } });

  beforeAll(() => {
    db = open();
  });
  afterEach(() => db.reset());

  /** A job of the queue whose `column` then holds `value`, written past every check. */
  async function unreadableJob(column: string, value: string): Promise<string> {
    const { job } = await queue.enqueue(db.store, 'collect', { n: 'bad' }, { priority: 1 });
    await db.query(`update ${jobs()} set ${column} = $1::timestamptz where id = $2`, [value, job.id]);
    return job.id;
  }

  it.each(UNREADABLE)('a claim batch with $column = $value runs the other jobs; that one alone is dead with the reason', async ({ column, value, reason }) => {
    const good = await queue.enqueueMany(db.store, [1, 2, 3].map((n) => ({ kind: 'collect' as const, payload: { n } })));
    const bad = await unreadableJob(column, value);
    const supervisor = createSupervisor({ store: db.store, queues: [queue], logger: silent });
    // One claim takes all four (concurrency 8), the bad one first (priority 1).
    expect(await supervisor.drain()).toBe(3);
    for (const { job } of good) expect(await db.store.getJob({ id: job.id })).toMatchObject({ state: 'completed', result: { done: job.payload } });
    const dead = (await db.store.getJob({ id: bad }))!;
    expect(dead).toMatchObject({ state: 'dead', attempt: 1, error: { code: 'invalid_row', message: expect.stringContaining('the row cannot be run as a job: ') } });
    expect(dead.error!.message.slice('the row cannot be run as a job: '.length)).toMatch(reason);
    expect((await db.store.getJobEvents({ id: bad })).map((e) => [e.fromState, e.toState, e.error?.code ?? null])).toEqual([
      [null, 'pending', null],
      ['pending', 'running', null],
      ['running', 'dead', 'invalid_row'],
    ]);
  });

  it.each(UNREADABLE)('every read answers for a row with $column = $value, showing the nearest time a job can have', async ({ column, value, shown }) => {
    const id = await unreadableJob(column, value);
    expect(await db.store.getJob({ id })).toMatchObject({ id, state: 'pending', ...shown });
    expect(await db.store.listJobs({ queue: 'places' })).toMatchObject([{ id, ...shown }]);
    expect((await db.store.scanJobs({ state: 'pending' })).jobs).toMatchObject([{ id, ...shown }]);
    const [backlog] = await db.store.getQueueBacklogs({});
    expect(backlog).toMatchObject({ queue: 'places', counts: { pending: 1 } });
    expect(backlog!.oldestRunAt).toEqual(column === 'run_at' ? EARLIEST : expect.any(Date));
    // The inspector's queues, read from the same rows.
    const inspector = await startInspector({ store: db.store, port: 0 });
    try {
      const answer = await fetch(new URL('/api/queues', inspector.url));
      expect(answer.status).toBe(200);
      expect(((await answer.json()) as { queues: unknown }).queues).toMatchObject([{ queue: 'places', counts: { pending: 1 } }]);
    } finally {
      await inspector.close();
    }
  });

  it('jobvisor job shows such a row, with the nearest time a job can have', async (context) => {
    if (!db.cliArgs) return context.skip();
    const id = await unreadableJob('run_at', '-infinity');
    const { code, stdout } = await cli(['job', id, '--json', ...db.cliArgs]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ job: { id, runAt: EARLIEST.toISOString() } });
    expect((await cli(['job', id, ...db.cliArgs])).code).toBe(0);
  });

  it('reads back what the library accepts, to the millisecond: the first and last instants of years 1 to 9999, and years below 100', async () => {
    const times = ['0001-01-01T00:00:00.000Z', '0050-06-15T12:34:56.789Z', '0099-12-31T23:59:59.999Z', '9999-12-31T23:59:59.998Z'];
    const stored = await queue.enqueueMany(
      db.store,
      times.map((t) => ({ kind: 'collect' as const, payload: {}, runAt: new Date(t), expiresAt: new Date(Date.parse(t) + 1) })),
    );
    for (const [i, { job }] of stored.entries()) {
      expect((await db.store.getJob({ id: job.id }))!.runAt.toISOString()).toBe(times[i]);
      expect(job.runAt.toISOString()).toBe(times[i]);
    }
  });
}

describePostgres('rows no job can have, on PostgreSQL', (url) => {
  requireBuiltCli();
  const schema = freshSchema('jv_unreadable');
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

  describeUnreadableRows(() => ({
    schema,
    store,
    query: (text, values) => pool.query(text, values),
    reset: async () => {
      await pool.query(`truncate "${schema}".jobs, "${schema}".job_events, "${schema}".job_signals`);
    },
    cliArgs: ['--database-url', url, '--schema', schema],
  }));
});

describe('rows no job can have, on PGlite', () => {
  const schema = 'jv_unreadable';
  let pglite: PGlite;
  let store: SqlJobStore;

  beforeAll(async () => {
    pglite = await PGlite.create();
    store = pgliteStore({ db: pglite, schema });
    await store.migrate();
  });
  afterAll(async () => {
    await store.close();
    await pglite.close();
  });

  describeUnreadableRows(() => ({
    schema,
    store,
    query: (text, values) => pglite.query(text, values),
    reset: async () => {
      await pglite.exec(`truncate "${schema}".jobs, "${schema}".job_events, "${schema}".job_signals`);
    },
  }));
});

describePostgres('a pool whose parsers leave timestamptz as text', (url) => {
  const schema = freshSchema('jv_text_times');
  let pool: pg.Pool;
  let store: SqlJobStore;

  beforeAll(async () => {
    // What `pg.types.setTypeParser(1184, (text) => text)` does to every pool of a process.
    pool = testPool(url, {
      types: { getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === 1184 ? (text: string) => text : pg.types.getTypeParser(oid, format))) as pg.CustomTypesConfig['getTypeParser'] },
    });
    store = postgresStore({ pool, schema });
    await store.migrate();
  });
  afterAll(async () => {
    await store.close();
    await dropSchema(pool, schema);
    await pool.end();
  });

  it("still reads a job's times as Dates, and its jobs run", async () => {
    const queue = defineQueue('places', { handlers: { collect: async () => 'done' } });
    const runAt = new Date('2030-01-02T03:04:05.678Z');
    const { job } = await queue.enqueue(store, 'collect', {}, { runAt, expiresAt: new Date('2031-01-01T00:00:00Z') });
    expect(job).toMatchObject({ runAt, expiresAt: new Date('2031-01-01T00:00:00Z'), createdAt: expect.any(Date) });
    await pool.query(`update "${schema}".jobs set run_at = now() where id = $1`, [job.id]);
    expect(await createSupervisor({ store, queues: [queue], logger: silent }).drain()).toBe(1);
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'completed', result: 'done', finishedAt: expect.any(Date) });
    expect((await store.getJobEvents({ id: job.id })).map((e) => e.at)).toEqual([expect.any(Date), expect.any(Date), expect.any(Date)]);
  });
});
