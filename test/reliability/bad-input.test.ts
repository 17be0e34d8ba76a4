/**
 * Bad input, in one place: each case is refused with a typed error that names what was
 * wrong, and nothing is written. Payloads, names and options run against the memory store
 * and the Postgres store (a schema of this file's own); database URLs and the CLI's worker
 * module against Postgres only.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { pgliteStore } from '../../src/adapters/pglite/index.js';
import { postgresStore } from '../../src/adapters/postgres/index.js';
import type { JobStore } from '../../src/adapters/store.js';
import {
  createSupervisor,
  DatabaseUnavailableError,
  defineQueue,
  InvalidOptionError,
  InvalidPayloadError,
  type Logger,
  type QueueOptions,
  type SupervisorOptions,
} from '../../src/index.js';
import { cli, requireBuiltCli } from '../support/cli.js';
import { createTestClock } from '../support/sim.js';
import { describePostgres, dropSchema, freshSchema, testPool } from '../support/postgres.js';

const INJECTIONS = [`x'; drop table jobs; --`, `x"; drop schema public cascade; --`, `x); delete from jobs where (1=1`];
const handlers = { send: async () => 'sent' };

/** A value of every kind JSON or jsonb cannot hold, with the words its error must use. */
function badPayloads(): Array<[what: string, payload: unknown, message: RegExp]> {
  const cycle: Record<string, unknown> = { a: 1 };
  cycle.self = cycle;
  const deepCycle: unknown[] = [];
  deepCycle.push({ back: deepCycle });
  return [
    ['a BigInt', { n: 10n }, /^payload\.n is a bigint, which JSON cannot hold$/],
    ['a cycle', cycle, /^payload\.self refers back to itself \(a cycle\)$/],
    ['a cycle through an array', deepCycle, /^payload\[0\]\.back refers back to itself/],
    ['a function', { f: () => 1 }, /^payload\.f is a function/],
    ['a symbol', [Symbol('s')], /^payload\[0\] is a symbol/],
    ['NaN', { x: Number.NaN }, /^payload\.x is NaN/],
    ['Infinity', { x: [1, Number.POSITIVE_INFINITY] }, /^payload\.x\[1\] is Infinity/],
    ['a Map', { m: new Map([['k', 1]]) }, /^payload\.m is a Map, which JSON would store as \{\}/],
    ['a Set', new Set([1]), /^payload is a Set/],
    ['a NUL character', { s: 'a\u0000b' }, /^payload\.s holds a NUL character/],
    ['a lone surrogate', { s: 'x\uD800' }, /^payload\.s holds a lone UTF-16 surrogate/],
    ['a key with a NUL', { 'k\u0000': 1 }, /^payload has a key that holds a NUL character/],
    ['a toJSON that throws', { d: { toJSON: () => { throw new Error('boom'); } } }, /^payload\.d: its toJSON threw: boom$/],
    ['a toJSON that yields a BigInt', { d: { toJSON: () => 5n } }, /^payload\.d is a bigint/],
  ];
}

/** Options that must each be refused, with the option their error names. */
const BAD_QUEUE_OPTIONS: Array<[Partial<QueueOptions<typeof handlers>>, string]> = [
  [{ concurrency: 0 }, 'queue "q" concurrency'],
  [{ concurrency: -1 }, 'queue "q" concurrency'],
  [{ concurrency: 1.5 }, 'queue "q" concurrency'],
  [{ concurrency: Number.NaN }, 'queue "q" concurrency'],
  [{ leaseMs: 1_000, heartbeatMs: 1_000 }, 'queue "q" heartbeatMs'],
  [{ leaseMs: 1_000, heartbeatMs: 5_000 }, 'queue "q" heartbeatMs'],
  [{ deadlineMs: 0 }, 'queue "q" deadlineMs'],
  [{ deadlineMs: -5 }, 'queue "q" deadlineMs'],
  [{ deadlineMs: 30 * 86_400_000 }, 'queue "q" deadlineMs'],
  [{ maxAttempts: 0 }, 'queue "q" maxAttempts'],
  [{ maxAttempts: -2 }, 'queue "q" maxAttempts'],
  [{ maxAttempts: 2_147_483_647 }, 'queue "q" maxAttempts'],
  [{ maxPayloadBytes: 0 }, 'queue "q" maxPayloadBytes'],
  [{ gate: `g'; drop table jobs; --` }, 'queue "q" gate'],
  [{ gate: 5 as never }, 'queue "q" gate'],
  [{ alertKey: 'k' as never }, 'queue "q" alertKey'],
  [{ handlers: 'send' as never }, 'queue "q" handlers'],
  [{ handlers: null as never }, 'queue "q" handlers'],
  [{ backoff: 1_000 as never }, 'queue "q" backoff'],
  [{ leaseMs: 0 }, 'queue "q" leaseMs'],
  [{ heartbeatMs: 0 }, 'queue "q" heartbeatMs'],
  [{ maxPayloadBytes: 1.5 }, 'queue "q" maxPayloadBytes'],
  [{ perKeyConcurrency: 0 }, 'queue "q" perKeyConcurrency'],
  [{ rateLimit: 5 as never }, 'queue "q" rateLimit'],
  [{ rateLimit: { max: 0, intervalMs: 1_000 } }, 'queue "q" rateLimit.max'],
  [{ rateLimit: { max: 1, intervalMs: 0 } }, 'queue "q" rateLimit.intervalMs'],
  [{ fairShare: 'yes' as never }, 'queue "q" fairShare'],
  [{ fairShare: { weight: 2 } as never }, 'queue "q" fairShare.weight'],
  [{ fairShare: { weights: { a: 0 } } }, 'queue "q" fairShare.weights["a"]'],
  [{ fairShare: { weights: { a: 1_001 } } }, 'queue "q" fairShare.weights["a"]'],
  [{ fairShare: { weights: { '': 1 } } }, 'queue "q" fairShare.weights key'],
  // Not a queue option: a typo, or the supervisor's, is refused rather than ignored.
  [{ deadline: 300 } as never, 'queue "q" deadline'],
  [{ onDead: () => {} } as never, 'queue "q" onDead'],
];

/** A logger whose methods throw when read (a Proxy, a getter that throws). */
const UNREADABLE_LOGGER = new Proxy({}, {
  get: (_, key) => {
    if (key === 'debug' || key === 'info' || key === 'warn' || key === 'error') throw new Error('no access');
    return undefined;
  },
}) as Logger;

const BAD_SUPERVISOR_OPTIONS: Array<[Partial<SupervisorOptions>, string]> = [
  [{ concurrency: 0 }, 'concurrency'],
  [{ concurrency: -3 }, 'concurrency'],
  [{ pollIntervalMs: 0 }, 'pollIntervalMs'],
  [{ reaperIntervalMs: -1 }, 'reaperIntervalMs'],
  [{ writeRetryMs: 2 ** 31 }, 'writeRetryMs'],
  [{ workerId: 'w\u00001' }, 'workerId'],
  [{ workerId: '' }, 'workerId'],
  [{ gates: { gpu: 0 } }, 'gates.gpu'],
  [{ queues: [] }, 'queues'],
  [{ queues: ['q'] as never }, 'queues[0]'],
  [{ store: 'x' as never }, 'store'],
  [{ onDead: 'x' as never }, 'onDead'],
  [{ alertKey: 'k' } as never, 'alertKey'],
  [{ deadlineMs: 300 } as never, 'deadlineMs'],
  [{ graceMs: 1_000 } as never, 'graceMs'],
  [{ pollIntervalMS: 10 } as never, 'pollIntervalMS'],
  [{ errorBackoffMs: 5_000, maxErrorBackoffMs: 1_000 }, 'maxErrorBackoffMs'],
  [{ maxErrorBackoffMs: 500 }, 'maxErrorBackoffMs'],
  [{ errorBackoffMs: 0 }, 'errorBackoffMs'],
  [{ logger: UNREADABLE_LOGGER }, 'logger'],
  [{ logger: { info: () => {} } as never }, 'logger'],
  [{ clock: {} as never }, 'clock'],
  [{ clock: { now: () => 0, setTimeout: () => 1 } as never }, 'clock'],
  [{ inspect: 'x' as never }, 'inspect'],
  [{ schedules: 'x' as never }, 'schedules'],
  [{ schedules: [5] as never }, 'schedules[0]'],
  [{ gates: [1] as never }, 'gates'],
  [{ prefetchWindowMs: -1 }, 'prefetchWindowMs'],
  [{ maxPrefetch: 1.5 }, 'maxPrefetch'],
  [{ alertThrottleMs: 0 }, 'alertThrottleMs'],
  [{ progressIntervalMs: 0 }, 'progressIntervalMs'],
];

function expectInvalidOption(attempt: () => unknown, option: string): void {
  let thrown: unknown;
  try {
    attempt();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(InvalidOptionError);
  expect(thrown).toMatchObject({ code: 'invalid_option', option });
}

async function expectNothingWritten(store: JobStore): Promise<void> {
  expect(await store.countJobs()).toEqual([]);
  expect(await store.listJobEvents({})).toEqual([]);
  expect(await store.listNewJobs({})).toEqual([]);
}

/** The cases every store must refuse before writing. */
function refusesBadInput(open: () => Promise<JobStore>): void {
  let store: JobStore;
  beforeAll(async () => {
    store = await open();
  });
  afterAll(async () => {
    await expectNothingWritten(store);
    await store.close();
  });

  it.each(badPayloads())('a payload with %s: InvalidPayloadError naming where, nothing written', async (_, payload, message) => {
    const queue = defineQueue('q', { handlers });
    const attempt = queue.enqueue(store, 'send', payload as never);
    await expect(attempt).rejects.toBeInstanceOf(InvalidPayloadError);
    await expect(attempt).rejects.toMatchObject({ code: 'invalid_payload', message: expect.stringMatching(message) });
    await expectNothingWritten(store);
  });

  it('a payload over the queue\'s maxPayloadBytes, and one bad job among good ones in a batch: nothing written', async () => {
    const queue = defineQueue('q', { handlers, maxPayloadBytes: 1_024 });
    await expect(queue.enqueue(store, 'send', { text: 'x'.repeat(2_000) } as never)).rejects.toMatchObject({
      code: 'invalid_payload',
      message: 'payload is 2011 bytes of JSON, over the limit of 1024',
    });
    const batch = [{ n: 1 }, { n: 2n }, { n: 3 }].map((payload) => ({ kind: 'send' as const, payload: payload as never }));
    await expect(queue.enqueueMany(store, batch)).rejects.toMatchObject({ message: 'payload.n is a bigint, which JSON cannot hold' });
    await expectNothingWritten(store);
  });

  it.each(INJECTIONS)('queue and kind names like %j: InvalidOptionError naming the name, nothing written', async (name) => {
    expectInvalidOption(() => defineQueue(name, { handlers }), 'queue name');
    expectInvalidOption(() => defineQueue('q', { handlers: { [name]: async () => 1 } }), 'queue "q" handler kind');
    const queue = defineQueue('q', { handlers });
    await expect(queue.enqueue(store, name as never, {} as never)).rejects.toMatchObject({ code: 'invalid_option', option: 'kind' });
    await expectNothingWritten(store);
  });

  it('a kind the queue has no handler for: InvalidOptionError naming it and the known ones, nothing written', async () => {
    const queue = defineQueue('q', { handlers: { send: async () => 1, bounce: async () => 2 } });
    const refused = { code: 'invalid_option', option: 'kind', message: 'kind: queue "q" has no handler for kind "fax" (it has send, bounce)' };
    await expect(queue.enqueue(store, 'fax' as never, {} as never)).rejects.toMatchObject(refused);
    await expect(queue.enqueueMany(store, [{ kind: 'send', payload: {} as never }, { kind: 'fax' as never, payload: {} as never }])).rejects.toMatchObject(refused);
    await expectNothingWritten(store);
    // A queue defined without handlers is one this process only enqueues to: any kind goes.
    const producer = defineQueue('q', { handlers: {} });
    const { job } = await producer.enqueue(store, 'fax' as never, {} as never);
    expect(job).toMatchObject({ queue: 'q', kind: 'fax' });
    await store.deleteJob({ id: job.id });
  });

  it('names that are empty, too long or not text', () => {
    for (const name of ['', 'a'.repeat(129), '-leading-dash', 'with space', 'ü', 7]) {
      expectInvalidOption(() => defineQueue(name as string, { handlers }), 'queue name');
    }
  });

  it.each(BAD_QUEUE_OPTIONS)('queue option %j: InvalidOptionError naming %s', (options, option) => {
    expectInvalidOption(() => defineQueue('q', { handlers, ...options }), option);
  });

  it.each(BAD_SUPERVISOR_OPTIONS)('supervisor option %j: InvalidOptionError naming %s', (options, option) => {
    const queue = defineQueue('q', { handlers });
    expectInvalidOption(() => createSupervisor({ store, queues: [queue], ...options }), option);
  });

  it('stop() with a grace period that is negative or longer than a timer can wait', async () => {
    for (const graceMs of [-1, Number.NaN, 2 ** 31]) {
      const supervisor = createSupervisor({ store, queues: [defineQueue('q', { handlers })] });
      await expect(supervisor.stop({ graceMs })).rejects.toMatchObject({ code: 'invalid_option', option: 'graceMs' });
      await supervisor.stop({ graceMs: 0 });
    }
  });

  it('enqueue options: priority, runAt, maxAttempts, uniqueKey', async () => {
    const queue = defineQueue('q', { handlers });
    const cases: Array<[object, string]> = [
      [{ priority: 1.5 }, 'priority'],
      [{ runAt: new Date('not a date') }, 'runAt'],
      [{ maxAttempts: 0 }, 'maxAttempts'],
      [{ uniqueKey: '' }, 'uniqueKey'],
      [{ uniqueKey: 'k\u0000' }, 'uniqueKey'],
      [{ uniqueKey: 'k'.repeat(1_001) }, 'uniqueKey'],
      [{ uniqueKey: 'k'.repeat(1_048_576) }, 'uniqueKey'],
      // 501 two-byte characters: 1,002 bytes.
      [{ concurrencyKey: 'é'.repeat(501) }, 'concurrencyKey'],
      [{ concurrencyKey: 'c'.repeat(2_700) }, 'concurrencyKey'],
      // Within what JavaScript holds, past what a store column holds: refused on every store
      // alike, not by the database alone (an outside check: memory took them, Postgres threw
      // a raw DatabaseError, and a snooze on a job at 2^31 - 1 attempts looped forever).
      [{ priority: 2 ** 40 }, 'priority'],
      [{ maxAttempts: 1e12 }, 'maxAttempts'],
      [{ maxAttempts: 2_147_483_647 }, 'maxAttempts'],
      [{ runAt: new Date(8.64e15) }, 'runAt'],
      [{ runAt: new Date('-000001-01-01T00:00:00Z') }, 'runAt'],
      [{ expiresAt: new Date(8.64e15) }, 'expiresAt'],
      // Times relative to the store's clock: whole milliseconds, at most a hundred years, not
      // beside the absolute time they replace.
      [{ runIn: -1 }, 'runIn'],
      [{ runIn: 1.5 }, 'runIn'],
      [{ runIn: Number.NaN }, 'runIn'],
      [{ runIn: 3_155_760_000_001 }, 'runIn'],
      [{ runIn: '60000' }, 'runIn'],
      [{ runIn: 1_000, runAt: new Date() }, 'runIn'],
      [{ expiresIn: 0 }, 'expiresIn'],
      [{ expiresIn: Infinity }, 'expiresIn'],
      [{ expiresIn: 60_000, expiresAt: new Date(Date.now() + 60_000) }, 'expiresIn'],
      // Keys that decide what the enqueue does with the jobs already there (docs/enqueueing.md).
      [{ onConflict: 'replace' }, 'onConflict'],
      [{ uniqueKey: 'u', onConflict: 'upsert' }, 'onConflict'],
      [{ debounce: { key: 'd' } }, 'debounce.delayMs'],
      [{ debounce: { key: 'd', delayMs: 5, extend: true } }, 'debounce.extend'],
      [{ debounce: { key: 'd', delayMs: 5 }, runAt: new Date() }, 'runAt'],
      // A tenant on a queue without fairShare would change nothing.
      [{ tenant: 'acme' }, 'tenant'],
    ];
    for (const [options, option] of cases) {
      await expect(queue.enqueue(store, 'send', {} as never, options)).rejects.toMatchObject({ code: 'invalid_option', option });
    }
    // The store's own enqueue checks what it can hold too, for callers that go around the queue.
    const raw = { queue: 'q', kind: 'send', payload: {}, maxAttempts: 1 };
    for (const [job, option] of [
      [{ ...raw, concurrencyKey: 'c'.repeat(3_000) }, 'concurrencyKey'],
      [{ ...raw, uniqueKey: 'u'.repeat(1_048_576) }, 'uniqueKey'],
      [{ ...raw, queue: 'q'.repeat(2_000) }, 'queue'],
      [{ ...raw, maxAttempts: 1e12 }, 'maxAttempts'],
      [{ ...raw, priority: 2 ** 40 }, 'priority'],
      [{ ...raw, runAt: new Date(8.64e15) }, 'runAt'],
      [{ ...raw, runIn: -5 }, 'runIn'],
      [{ ...raw, expiresIn: 2.5 }, 'expiresIn'],
    ] as const) {
      await expect(store.enqueueJobs({ jobs: [job] })).rejects.toMatchObject({ code: 'invalid_option', option });
    }
    const fair = defineQueue('fair', { handlers, fairShare: true });
    await expect(fair.enqueue(store, 'send', {} as never, { tenant: 't'.repeat(1_001) })).rejects.toMatchObject({ code: 'invalid_option', option: 'tenant' });
    await expect(queue.enqueue(store, 'send', {} as never, { concurrencyKey: 'c'.repeat(2_700) })).rejects.toThrow(
      'concurrencyKey: is 2700 bytes of UTF-8, over the limit of 1000 (the store indexes it)',
    );
    await expectNothingWritten(store);
  });
}

describe('bad input on the memory store', () => {
  refusesBadInput(async () => memoryStore());
});

describePostgres('bad input on the Postgres store', (url) => {
  let pool: pg.Pool;
  const schema = freshSchema('jv_bad_input');

  beforeAll(async () => {
    pool = testPool(url);
    await postgresStore({ pool, schema }).migrate();
  });

  afterAll(async () => {
    await dropSchema(pool, schema);
    await pool.end();
  });

  describe('payloads, names and options', () => {
    refusesBadInput(async () => postgresStore({ pool, schema }));
  });

  it('the store itself refuses a key too long to index, whoever writes it: one such row can never stop the claims', async () => {
    const insert = (column: 'unique_key' | 'concurrency_key', bytes: number) =>
      pool.query(
        `insert into "${schema}".jobs (queue, kind, payload, run_at, max_attempts, created_at, updated_at, ${column})
         values ('raw', 'k', '{}', now(), 1, now(), now(), $1)`,
        ['k'.repeat(bytes)],
      );
    await expect(insert('concurrency_key', 2_700)).rejects.toMatchObject({ code: '23514', constraint: 'jobs_concurrency_key_length' });
    await expect(insert('unique_key', 1_001)).rejects.toMatchObject({ code: '23514', constraint: 'jobs_unique_key_length' });
    await insert('concurrency_key', 1_000);
    const store = postgresStore({ pool, schema });
    try {
      expect(await store.claimJobs({ workerId: 'w1', leaseMs: 60_000, queues: [{ queue: 'raw', limit: 5 }] })).toHaveLength(1);
    } finally {
      // The schema is shared with the cases that expect nothing written, in any order.
      await pool.query(`delete from "${schema}".job_events where job_id in (select id from "${schema}".jobs where queue = 'raw')`);
      await pool.query(`delete from "${schema}".jobs where queue = 'raw'`);
    }
  });

  it.each(INJECTIONS)('a schema named %j is refused before any SQL runs', (name) => {
    expectInvalidOption(() => postgresStore({ pool, schema: name }), 'schema');
    expectInvalidOption(() => pgliteStore({ schema: name }), 'schema');
  });

  it('schemas that are reserved, too long or not identifiers', () => {
    for (const name of ['pg_catalog', 'a'.repeat(64), '1abc', 'with-dash', '']) {
      expectInvalidOption(() => postgresStore({ pool, schema: name }), 'schema');
    }
  });

  it('values are bound, never spliced: a unique key that reads like SQL is stored as it is', async () => {
    const store = postgresStore({ pool, schema });
    const queue = defineQueue('injection', { handlers });
    const key = `k'); drop table "${schema}".jobs; --`;
    const { job } = await queue.enqueue(store, 'send', { note: `'; drop table jobs; --` } as never, { uniqueKey: key });
    expect(await store.getJob({ id: job.id })).toMatchObject({ uniqueKey: key, payload: { note: `'; drop table jobs; --` } });
    await store.deleteJob({ id: job.id });
  });

  describe('database URLs', () => {
    let silent: Server;
    let silentPort: number;
    const accepted = new Set<Socket>();

    beforeAll(async () => {
      // Accepts connections and never answers: a hung server, or a port that is not Postgres.
      silent = createServer((socket) => void accepted.add(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      silentPort = (silent.address() as { port: number }).port;
    });

    afterAll(async () => {
      for (const socket of accepted) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });

    it.each(['not a url', '', 'http://db.example/jobs', 'postgres://h:99999/db', 'mysql://u@h/db'])(
      'a malformed connection string %j: InvalidOptionError at once, before connecting',
      (connectionString) => {
        expectInvalidOption(() => postgresStore({ connectionString }), 'connectionString');
      },
    );

    // The silent server's message names connectTimeoutMs: the store gave up by its own timeout,
    // not by the test's. How soon is not asserted on a shared machine's wall clock.
    it('an unreachable database: DatabaseUnavailableError naming it, password hidden, within connectTimeoutMs', async () => {
      const cases: Array<[url: string, reason: RegExp]> = [
        ['postgres://app:s3cret@127.0.0.1:1/jobs', /ECONNREFUSED/],
        [`postgres://app:s3cret@127.0.0.1:${silentPort}/jobs`, /no connection within 500 ms \(connectTimeoutMs\)/],
        [`${url.replace(/\/[^/]*$/, '')}/jv_no_such_database`, /database "jv_no_such_database" does not exist/],
      ];
      for (const [connectionString, reason] of cases) {
        const store = postgresStore({ connectionString, schema, connectTimeoutMs: 500 });
        const error = await store.migrate().then(() => undefined, (e: unknown) => e);
        expect(error).toBeInstanceOf(DatabaseUnavailableError);
        expect(error).toMatchObject({ code: 'database_unavailable', message: expect.stringMatching(reason) });
        expect((error as Error).message).not.toContain('s3cret');
        expect((error as Error).message).toMatch(/^cannot reach the database at postgres:\/\//);
        await store.close();
      }
    });

    it('connectTimeoutMs with your own pool is refused: set connectionTimeoutMillis on it', () => {
      expectInvalidOption(() => postgresStore({ pool, connectTimeoutMs: 1_000 }), 'connectTimeoutMs');
    });

    it('poolSize with your own pool, or outside 2 to 1000, is refused before connecting', () => {
      expectInvalidOption(() => postgresStore({ pool, poolSize: 5 }), 'poolSize');
      for (const poolSize of [1, 0, 2.5, 1001, Number.NaN, '4' as unknown as number]) {
        expectInvalidOption(() => postgresStore({ connectionString: url, poolSize }), 'poolSize');
      }
    });
  });

  describe('a worker module that throws on import', () => {
    requireBuiltCli();

    it('jobvisor worker: one line naming the module and its error, exit 1, nothing written (not even --migrate)', async () => {
      const target = freshSchema('jv_bad_module');
      const module = 'test/cli/fixtures/throws-on-import.mjs';
      const { code, stderr } = await cli(['worker', module, '--database-url', url, '--schema', target, '--migrate']);
      expect(code).toBe(1);
      expect(stderr.trim()).toBe(`jobvisor: worker module ${module} failed to load: SMTP_URL is not set`);
      const { rows } = await pool.query('select 1 from information_schema.schemata where schema_name = $1', [target]);
      expect(rows).toEqual([]);
    });
  });
});

describe('a backoff that returns no usable delay, or throws', () => {
  it('is logged with an error naming the queue, and the default backoff times the retry: the job is not wedged', async () => {
    const clock = createTestClock();
    const store = memoryStore({ clock });
    const handlers = { boom: async () => { throw new Error('boom'); } };
    const nan = defineQueue('nan', { handlers, backoff: () => Number.NaN });
    const throwing = defineQueue('throwing', {
      handlers,
      backoff: () => {
        throw new Error('backoff is broken');
      },
    });
    const jobs = [(await nan.enqueue(store, 'boom', {} as never)).job, (await throwing.enqueue(store, 'boom', {} as never)).job];
    const errors: unknown[] = [];
    const logger: Logger = { debug() {}, info() {}, warn() {}, error: (obj) => void errors.push((obj as { err?: unknown }).err) };
    const supervisor = createSupervisor({ store, queues: [nan, throwing], logger, clock });
    expect(await supervisor.drain()).toBe(2);
    expect(errors).toHaveLength(2);
    expect((errors as Error[]).map((e) => e.message).sort()).toEqual([
      'backoff is broken',
      'queue "nan" backoff: returned NaN for attempt 1; must return milliseconds from 0 to 3155760000000',
    ]);
    for (const job of jobs) {
      const row = (await store.getJob({ id: job.id }))!;
      expect(row).toMatchObject({ state: 'retrying', attempt: 1, error: { code: 'handler_error', message: 'boom' } });
      // The default backoff after a first failure: 1 s, the top half jittered.
      const delay = row.runAt.getTime() - clock.now();
      expect(delay).toBeGreaterThanOrEqual(500);
      expect(delay).toBeLessThanOrEqual(1_000);
    }
    await supervisor.stop({ graceMs: 0 });
  });
});
