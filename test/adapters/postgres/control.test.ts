/**
 * Control across workers on one Postgres database: supervisors on store instances of their
 * own (each its own pool and LISTEN connection, as separate processes have) and a cancel
 * from yet another instance, as the CLI sends it. Real time: every wait polls with a deadline.
 */
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';
import { postgresStore } from '../../../src/adapters/postgres/index.js';
import type { SqlJobStore } from '../../../src/adapters/sql/sql-store.js';
import { createSupervisor, defineQueue, type Job, type Supervisor } from '../../../src/index.js';
import { describePostgres, dropSchema, freshSchema, testPool } from '../../support/postgres.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const WAIT = { timeout: 10_000, interval: 20 };

describePostgres('control across workers on Postgres', (url) => {
  const schema = freshSchema('jv_pg_control');
  let admin: pg.Pool;
  let stores: SqlJobStore[] = [];
  let supervisors: Supervisor[] = [];

  beforeAll(async () => {
    admin = testPool(url);
    await postgresStore({ pool: admin, schema }).migrate();
  });

  afterEach(async () => {
    await Promise.all(supervisors.map((s) => s.stop({ graceMs: 0 })));
    await Promise.all(stores.map((s) => s.close()));
    stores = [];
    supervisors = [];
    await admin.query(`truncate "${schema}".jobs, "${schema}".job_events, "${schema}".job_signals`);
  });

  afterAll(async () => {
    await dropSchema(admin, schema);
    await admin.end();
  });

  /** A store instance with a pool of its own, as another process has. */
  function instance(): SqlJobStore {
    const store = postgresStore({ connectionString: url, schema, notifyDebounceMs: 0 });
    stores.push(store);
    return store;
  }

  /** A handler that runs until aborted, recording who ran what and who saw the abort. */
  function hanging(log: Array<[string, string, string]>, worker: string) {
    return ({ id, signal, progress }: Job) =>
      new Promise((_, reject) => {
        log.push(['start', worker, id]);
        progress(25, `held by ${worker}`);
        signal.addEventListener('abort', () => {
          log.push(['abort', worker, id]);
          reject(new Error('aborted'));
        });
      });
  }

  function worker(name: string, log: Array<[string, string, string]>, options: { leaseMs?: number } = {}) {
    const store = instance();
    const queue = defineQueue('control', { concurrency: 2, deadlineMs: null, leaseMs: options.leaseMs ?? 30_000, handlers: { hang: hanging(log, name) } });
    const supervisor = createSupervisor({ store, queues: [queue], workerId: name, logger: silent, pollIntervalMs: 50 });
    supervisors.push(supervisor);
    return { store, queue, supervisor };
  }

  it('a cancel from another instance reaches each supervisor holding a job; each writes cancelled', async () => {
    const log: Array<[string, string, string]> = [];
    const workers = ['w1', 'w2', 'w3'].map((name) => worker(name, log));
    const cli = instance();
    const { queue } = workers[0]!;
    const jobs = (await queue.enqueueMany(cli, Array.from({ length: 6 }, () => ({ kind: 'hang' as const, payload: {} })))).map((r) => r.job.id);
    await Promise.all(workers.map((w) => w.supervisor.start()));
    await vi.waitFor(() => expect(log.filter(([e]) => e === 'start')).toHaveLength(6), WAIT);
    const holders = new Map(log.map(([, w, id]) => [id, w]));
    expect(new Set(holders.values()).size).toBeGreaterThan(1);

    // Progress written by each holder is read from the other instance.
    await vi.waitFor(async () => {
      for (const id of jobs) expect((await cli.getJob({ id }))?.progress).toMatchObject({ percent: 25, message: `held by ${holders.get(id)}` });
    }, WAIT);

    for (const id of jobs) expect(await cli.cancelJob({ id })).toMatchObject({ cancelled: false, job: { state: 'running' } });
    await vi.waitFor(async () => {
      for (const id of jobs) expect((await cli.getJob({ id }))?.state).toBe('cancelled');
    }, WAIT);
    // Each job was aborted by the one supervisor that held it, which wrote the outcome.
    expect(log.filter(([e]) => e === 'abort').map(([, w, id]) => [id, w]).sort()).toEqual([...holders].sort());
    for (const id of jobs) {
      const last = (await cli.getJobEvents({ id })).at(-1);
      expect(last).toMatchObject({ fromState: 'running', toState: 'cancelled', workerId: holders.get(id), error: { code: 'cancelled' } });
    }
  });

  it('with its notifications lost, a supervisor hears the cancel at its next lease renewal', async () => {
    const log: Array<[string, string, string]> = [];
    const { store, queue, supervisor } = worker('deaf', log, { leaseMs: 1_500 });
    const subscribe = store.subscribe.bind(store);
    store.subscribe = (onWake) => subscribe(onWake);
    // Each renewal that answers "cancel requested", in the log beside the handler's events.
    const renewLeases = store.renewLeases.bind(store);
    store.renewLeases = async (params) => {
      const answers = await renewLeases(params);
      answers.forEach((answer, i) => answer === 'cancel' && log.push(['renewal says cancel', 'deaf', params.leases[i]!.id]));
      return answers;
    };
    const { job } = await queue.enqueue(store, 'hang', {});
    await supervisor.start();
    await vi.waitFor(() => expect(log).toHaveLength(1), WAIT);
    await instance().cancelJob({ id: job.id });
    await vi.waitFor(async () => expect((await store.getJob({ id: job.id }))?.state).toBe('cancelled'), WAIT);
    // Heard by a renewal, not by a notification: the renewal's answer came before the abort.
    expect(log.slice(0, 3)).toEqual([
      ['start', 'deaf', job.id],
      ['renewal says cancel', 'deaf', job.id],
      ['abort', 'deaf', job.id],
    ]);
  });

  it('supervisor.cancel() of a job running elsewhere answers true, and the holder ends it', async () => {
    const log: Array<[string, string, string]> = [];
    const holder = worker('holder', log);
    const other = worker('other', []);
    const { job } = await holder.queue.enqueue(holder.store, 'hang', {});
    await holder.supervisor.start();
    await vi.waitFor(() => expect(log).toHaveLength(1), WAIT);
    expect(await other.supervisor.cancel(job.id)).toBe(true);
    await vi.waitFor(async () => expect((await other.store.getJob({ id: job.id }))?.state).toBe('cancelled'), WAIT);
    expect(log.at(-1)).toEqual(['abort', 'holder', job.id]);
  });
});
