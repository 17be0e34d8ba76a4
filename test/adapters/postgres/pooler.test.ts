/**
 * The Postgres store behind a real PgBouncer (test/support/pgbouncer.ts), three server
 * connections shared by every client. In transaction mode with `pooler: 'transaction'`:
 * migrations, a burst of concurrent enqueues run once each by a supervisor with nothing left
 * held, a flow, the CLI, and wake-ups through `listenConnectionString` (a direct connection)
 * long before the poll. With the default `pooler: 'session'` the same PgBouncer is refused
 * with a TransactionPoolerError before any statement, and a session-mode one is not.
 * Real time across connections: every wait polls with a deadline.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { postgresStore, type PostgresStoreOptions } from '../../../src/adapters/postgres/index.js';
import type { SqlJobStore } from '../../../src/adapters/sql/sql-store.js';
import {
  createSupervisor,
  defineFlow,
  defineQueue,
  enqueueFlow,
  flowJob,
  InvalidOptionError,
  type Job,
  type Supervisor,
  TransactionPoolerError,
} from '../../../src/index.js';
import { cli, cliJson, requireBuiltCli } from '../../support/cli.js';
import { describePgbouncer, type Pgbouncer, startPgbouncer } from '../../support/pgbouncer.js';
import { dropSchema, freshSchema, testPool } from '../../support/postgres.js';

requireBuiltCli();

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const WAIT = { timeout: 20_000, interval: 50 };
/** Server connections PgBouncer opens: fewer than the store's pool, so clients share them. */
const SERVER_CONNECTIONS = 3;

describe('postgresStore pooler options', () => {
  it('refuses a pooler mode it does not know, and a listen URL that is not postgres://', () => {
    const url = 'postgres://postgres@127.0.0.1:1/none';
    expect(() => postgresStore({ connectionString: url, pooler: 'statement' as never })).toThrow(InvalidOptionError);
    expect(() => postgresStore({ connectionString: url, pooler: 'statement' as never })).toThrow(/pooler.*'session' or 'transaction'/);
    expect(() => postgresStore({ connectionString: url, listenConnectionString: 'http://db' })).toThrow(/listenConnectionString/);
  });
});

describePgbouncer('the Postgres store behind PgBouncer', (upstream) => {
  const schema = freshSchema('jv_pgbouncer');
  let direct: pg.Pool;
  let bouncer: Pgbouncer;
  const stores: SqlJobStore[] = [];
  const supervisors: Supervisor[] = [];
  /** What each of two stores migrating at once through the pooler applied. */
  let migrations: number[][];

  beforeAll(async () => {
    direct = testPool(upstream);
    bouncer = await startPgbouncer(upstream, { poolMode: 'transaction', poolSize: SERVER_CONNECTIONS });
    migrations = await Promise.all([pooled().migrate(), pooled().migrate()]);
  });

  afterAll(async () => {
    await Promise.all(supervisors.map((s) => s.stop({ graceMs: 0 })));
    await Promise.all(stores.map((s) => s.close()));
    await dropSchema(direct, schema);
    await direct.end();
    await bouncer?.stop();
  });

  function store(options: Partial<PostgresStoreOptions> = {}): SqlJobStore {
    const made = postgresStore({ connectionString: bouncer.url, schema, poolSize: 10, notifyDebounceMs: 0, ...options });
    stores.push(made);
    return made;
  }

  /** Through the pooler in transaction mode, with the direct listener. */
  const pooled = (options: Partial<PostgresStoreOptions> = {}) => store({ pooler: 'transaction', listenConnectionString: upstream, ...options });

  function supervise(made: SqlJobStore, queues: Parameters<typeof createSupervisor>[0]['queues'], pollIntervalMs = 50): Supervisor {
    const supervisor = createSupervisor({ store: made, queues, logger: silent, pollIntervalMs });
    supervisors.push(supervisor);
    return supervisor;
  }

  describe('in transaction mode, with pooler: transaction', { shuffle: false }, () => {
    it('migrates from two stores at once', async () => {
      expect(migrations.filter((applied) => applied.length > 0)).toHaveLength(1);
      expect(await pooled().checkSchema()).toEqual({ newer: [] });
    });

    it('enqueues 220 jobs at once; a supervisor runs each exactly once and leaves none held', async () => {
      const runs = new Map<string, number>();
      const queue = defineQueue('burst', {
        concurrency: 8,
        handlers: {
          work: async ({ id }: Job<{ i: number }>) => {
            runs.set(id, (runs.get(id) ?? 0) + 1);
          },
        },
      });
      const enqueuing = pooled();
      const enqueued = await Promise.all(Array.from({ length: 220 }, (_, i) => queue.enqueue(enqueuing, 'work', { i })));
      const ids = enqueued.map((r) => r.job.id);
      expect(new Set(ids).size).toBe(220);
      const worker = pooled();
      await supervise(worker, [queue]).start();
      await vi.waitFor(async () => {
        const { rows } = await direct.query(`select count(*)::int as n from "${schema}".jobs where queue = 'burst' and state = 'completed'`);
        expect(rows[0].n).toBe(220);
      }, WAIT);
      expect([...runs.keys()].sort()).toEqual([...ids].sort());
      expect([...runs.values()].every((n) => n === 1)).toBe(true);
      const { rows: held } = await direct.query(
        `select id from "${schema}".jobs where queue = 'burst' and (state <> 'completed' or lease_expires_at is not null)`,
      );
      expect(held).toEqual([]);
      const { rows: twice } = await direct.query(
        `select job_id from "${schema}".job_events e join "${schema}".jobs j on j.id = e.job_id
         where j.queue = 'burst' and e.to_state = 'running' group by job_id having count(*) > 1`,
      );
      expect(twice).toEqual([]);
    });

    it('runs a flow to its end', async () => {
      const steps = defineQueue('flow-steps', {
        handlers: {
          add: async (job: Job<{ n: number }>) => {
            const parents = await job.parents<Record<string, { sum: number }>>();
            return { sum: job.payload.n + Object.values(parents).reduce((total, p) => total + p.result!.sum, 0) };
          },
        },
      });
      const diamond = defineFlow('diamond', {
        a: flowJob(steps, 'add', { n: 1 }),
        b: flowJob(steps, 'add', { n: 10 }, { dependsOn: ['a'] }),
        c: flowJob(steps, 'add', { n: 100 }, { dependsOn: ['a'] }),
        d: flowJob(steps, 'add', { n: 1000 }, { dependsOn: ['b', 'c'] }),
      });
      const made = pooled();
      const { jobs } = await enqueueFlow(made, diamond);
      await supervise(made, [steps]).start();
      await vi.waitFor(async () => expect((await made.getJob({ id: jobs.d.id }))?.state).toBe('completed'), WAIT);
      expect((await made.getJob({ id: jobs.d.id }))?.result).toEqual({ sum: 1000 + 11 + 101 });
    });

    it('wakes an idle worker through the direct listener, long before its minute-long poll', async () => {
      const ran: number[] = [];
      const queue = defineQueue('woken', { handlers: { ping: async () => void ran.push(Date.now()) } });
      const worker = pooled();
      expect(worker.capabilities.notifications).toBe(true);
      let claims = 0;
      const claimJobs = worker.claimJobs.bind(worker);
      worker.claimJobs = async (params) => {
        const claimed = await claimJobs(params);
        claims++;
        return claimed;
      };
      await supervise(worker, [queue], 60_000).start();
      // Its first claim (at start) found nothing; only a wake-up makes it claim again within the minute.
      await vi.waitFor(() => expect(claims).toBe(1), WAIT);
      const enqueuedAt = Date.now();
      await queue.enqueue(pooled({ listenConnectionString: undefined }), 'ping', {});
      await vi.waitFor(() => expect(ran).toHaveLength(1), { timeout: 10_000, interval: 20 });
      expect(ran[0]! - enqueuedAt).toBeLessThan(5_000);
    });

    it('without listenConnectionString it does not listen, and says workers poll', () => {
      const warnings: string[] = [];
      const made = pooled({ listenConnectionString: undefined, logger: { ...silent, warn: (_: unknown, message: string) => void warnings.push(message) } });
      expect(made.capabilities.notifications).toBe(false);
      expect(warnings).toEqual([expect.stringMatching(/pooler 'transaction' without listenConnectionString.*polling \(pollIntervalMs\)/)]);
    });

    it('serves the CLI with --pooler transaction', async () => {
      const db = ['--database-url', bouncer.url, '--schema', schema, '--pooler', 'transaction', '--listen-database-url', upstream];
      expect(await cliJson(['migrate', ...db])).toEqual({ schema, applied: [] });
      const { job } = (await cliJson(['enqueue', 'cli-jobs', 'noop', '{"x":1}', '--new-queue', ...db])) as { job: { id: string } };
      expect((await cliJson(['job', job.id, ...db])) as unknown).toMatchObject({ job: { id: job.id, state: 'pending' } });
      expect(await cliJson(['jobs', '--queue', 'cli-jobs', ...db])).toMatchObject({ jobs: [{ id: job.id }] });
      expect(await cliJson(['stats', ...db])).toMatchObject({ queues: { 'cli-jobs': { pending: 1 } } });
      expect(await cliJson(['queue', 'pause', 'cli-jobs', ...db])).toMatchObject({ queue: { name: 'cli-jobs' } });
      expect(await cliJson(['cancel', job.id, ...db])).toMatchObject({ cancelled: true });
      const listed = (await cliJson(['queue', 'list', ...db])) as { queues: Array<{ name: string; pausedAt: string | null }> };
      expect(listed.queues.find((q) => q.name === 'cli-jobs')?.pausedAt).not.toBeNull();
    });
  });

  describe('in transaction mode, with the default pooler: session', () => {
    it('refuses before any statement, naming the option to set', async () => {
      const made = store();
      const refusal = await made.checkSchema().catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(TransactionPoolerError);
      expect(refusal).toMatchObject({ code: 'transaction_pooler', database: bouncer.url });
      expect((refusal as Error).message).toMatch(/transaction-mode pooler.*set `pooler: 'transaction'`.*listenConnectionString/);
      const queue = defineQueue('refused', { handlers: { work: async () => {} } });
      await expect(queue.enqueue(made, 'work', {})).rejects.toBeInstanceOf(TransactionPoolerError);
      await expect(supervise(store(), [queue]).start()).rejects.toBeInstanceOf(TransactionPoolerError);
      // Subscribed first (the inspector does), it does not LISTEN where nothing would be heard.
      await expect(store().subscribe(() => {})).rejects.toBeInstanceOf(TransactionPoolerError);
      const { rows } = await direct.query(`select count(*)::int as n from "${schema}".jobs where queue = 'refused'`);
      expect(rows[0].n).toBe(0);
    });

    it('the CLI exits 4 with the flag to set', async () => {
      const { code, stderr } = await cli(['stats', '--database-url', bouncer.url, '--schema', schema]);
      expect(code).toBe(4);
      expect(stderr).toMatch(/^jobvisor: the database at .* looks like a transaction-mode pooler .*--pooler transaction.*--listen-database-url/);
    });
  });

  describe('in session mode, with the default pooler: session', () => {
    let sessions: Pgbouncer;
    let made: SqlJobStore | undefined;
    let supervisor: Supervisor | undefined;
    beforeAll(async () => {
      // Room for the pool's two connections, the listener and the check's second connection.
      sessions = await startPgbouncer(upstream, { poolMode: 'session', poolSize: 5 });
    });
    afterAll(async () => {
      // Before its PgBouncer goes: a supervisor stopping without a database retries its writes.
      await supervisor?.stop({ graceMs: 0 });
      await made?.close();
      await sessions?.stop();
    });

    it('passes the check and runs jobs, woken through LISTEN on its own pool', async () => {
      made = postgresStore({ connectionString: sessions.url, schema, poolSize: 2, notifyDebounceMs: 0 });
      await made.migrate();
      const ran: string[] = [];
      const queue = defineQueue('session-mode', { handlers: { work: async ({ id }: Job) => void ran.push(id) } });
      supervisor = createSupervisor({ store: made, queues: [queue], logger: silent, pollIntervalMs: 60_000 });
      await supervisor.start();
      const { job } = await queue.enqueue(made, 'work', {});
      await vi.waitFor(() => expect(ran).toEqual([job.id]), { timeout: 10_000, interval: 20 });
    });
  });
});
