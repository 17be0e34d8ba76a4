/**
 * One clock for the fleet (RELIABILITY.md, the clock model), proved with real worker
 * processes on real Postgres whose wall clock is wrong: shifted ±10 minutes from the start,
 * or stepped while they hold jobs (test/fixtures/wall-clock-shift.ts, preloaded). Every time
 * a worker writes must be the database's, and every duration it measures (leases, expiry)
 * must be monotonic, so the skewed or stepped worker retries, snoozes, releases, expires and
 * keeps or gives up its leases exactly as one whose clock is right.
 *
 * Facts come from the database: a trigger of the test's own copies every write to a job row
 * (state, run_at, lease, updated_at: the writing statement's now()) into `job_writes`, so a
 * write is judged by what it stored, however soon the row changed again. Real time is
 * unavoidable across processes: every wait polls with a deadline, none sleeps blindly, and no
 * assertion is about how long something took.
 */
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { LineProcessOptions } from '../../scripts/line-process.js';
import { postgresStore } from '../../src/adapters/postgres/index.js';
import type { SqlJobStore } from '../../src/adapters/sql/sql-store.js';
import type { WorkerConfig } from '../fixtures/worker-process.js';
import { describePostgres, dropSchema, freshSchema, testPool } from '../support/postgres.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { executionsOf, overlapping, until, WorkerProcess } from '../support/worker-processes.js';

const SHIFT = fileURLToPath(new URL('../fixtures/wall-clock-shift.ts', import.meta.url));
const TEN_MINUTES = 600_000;
/** The fixed backoff and the snooze of the skew test. */
const DELAY_MS = 2_000;
/** How far ahead, by the database, the skew test's expiring jobs expire. */
const EXPIRES_IN_MS = 4_000;
/** How much earlier than `expiresAt` the end of an expiring job may be written: the claim's
 *  round trip (expiry is counted from when the claim was sent), generously. */
const ROUND_TRIP_MS = 1_000;
/** The lease of the step tests: short, so that they run in seconds. */
const LEASE_MS = 3_000;
const HELD = 5;
/** Bounds a hang, never a measure of speed: processes start slowly on a loaded machine. */
const WAIT_MS = 30_000;

/** A worker process whose wall clock is `offsetMs` off, stepped by `stepMs` on SIGUSR2. */
function clockOptions(offsetMs: number, stepMs?: number): LineProcessOptions {
  return {
    imports: [SHIFT],
    env: {
      JOBVISOR_TEST_CLOCK_OFFSET_MS: String(offsetMs),
      ...(stepMs === undefined ? {} : { JOBVISOR_TEST_CLOCK_STEP_MS: String(stepMs) }),
    },
  };
}

/** One write to a job row, as the trigger copied it; `delayMs`: run_at − updated_at. */
interface JobWrite {
  seq: number;
  id: string;
  state: string;
  attempt: number;
  maxAttempts: number;
  workerId: string | null;
  leaseToken: string | null;
  leaseExpiresAt: Date | null;
  updatedAt: Date;
  delayMs: number;
  errorCode: string | null;
}

describePostgres('a worker whose wall clock is off or stepped', (url) => {
  let pool: pg.Pool;
  let run: { schema: string; store: SqlJobStore; workers: WorkerProcess[]; proxies: TcpProxy[] } | undefined;

  beforeAll(() => {
    pool = testPool(url);
  });

  afterAll(async () => {
    await pool.end();
  });

  afterEach(async () => {
    if (!run) return;
    // A failed test may leave workers running: none may outlive it.
    for (const w of run.workers) w.signal('SIGKILL');
    await Promise.all(run.workers.map((w) => w.exited));
    await Promise.all(run.proxies.map((p) => p.close()));
    await run.store.close();
    await dropSchema(pool, run.schema);
    run = undefined;
  });

  /** A migrated schema of the test's own whose job writes are recorded, and the means to run
   *  workers on it. */
  async function setUp(prefix: string) {
    const schema = freshSchema(prefix);
    const store = postgresStore({ pool, schema });
    const workers: WorkerProcess[] = [];
    const proxies: TcpProxy[] = [];
    run = { schema, store, workers, proxies };
    await store.migrate();
    await pool.query(`
      create table "${schema}".job_writes (
        seq bigint generated always as identity primary key,
        id bigint not null, state text not null, attempt int not null, max_attempts int not null,
        worker_id text, lease_token uuid, lease_expires_at timestamptz,
        run_at timestamptz not null, updated_at timestamptz not null, error_code text);
      create function "${schema}".record_job_write() returns trigger language plpgsql as $$
      begin
        insert into "${schema}".job_writes (id, state, attempt, max_attempts, worker_id, lease_token,
          lease_expires_at, run_at, updated_at, error_code)
        values (new.id, new.state, new.attempt, new.max_attempts, new.worker_id, new.lease_token,
          new.lease_expires_at, new.run_at, new.updated_at, new.error->>'code');
        return null;
      end $$;
      create trigger record_job_write after update on "${schema}".jobs
        for each row execute function "${schema}".record_job_write();`);

    const startWorker = (config: Partial<WorkerConfig> & Pick<WorkerConfig, 'workerId' | 'queue'>, options?: LineProcessOptions) => {
      const worker = new WorkerProcess(
        {
          url,
          schema,
          concurrency: HELD,
          leaseMs: LEASE_MS,
          pollIntervalMs: 50,
          reaperIntervalMs: 30_000,
          handler: 'hang',
          workMs: 2,
          ...config,
        },
        options,
      );
      workers.push(worker);
      return worker;
    };
    /** Resolves once every one has started its supervisor; each must say its wall clock is
     *  as far off as it was told (±5 s: the preload works, and nothing else moved it). */
    const ready = async (...ws: Array<[WorkerProcess, number]>) => {
      await until(() => ws.forEach(([w]) => w.assertReady()), ws.map(([w]) => w), WAIT_MS);
      for (const [w, offsetMs] of ws) {
        const line = w.lines.find((l) => l.event === 'ready')!;
        expect(Math.abs(line.wallMinusMonotonicMs - offsetMs), `${w.id}'s wall clock is ${offsetMs} ms off`).toBeLessThan(5_000);
      }
    };
    const writesOf = async (id: string): Promise<JobWrite[]> => {
      const { rows } = await pool.query<JobWrite>(
        `select seq::int, id::text, state, attempt, max_attempts as "maxAttempts", worker_id as "workerId",
           lease_token::text as "leaseToken", lease_expires_at as "leaseExpiresAt", updated_at as "updatedAt",
           (extract(epoch from run_at - updated_at) * 1000)::float8 as "delayMs", error_code as "errorCode"
         from "${schema}".job_writes where id = $1 order by seq`,
        [id],
      );
      return rows;
    };
    const rowsOf = async (ids: readonly string[]) => {
      const { rows } = await pool.query<{ id: string; state: string; attempt: number; lease_token: string | null; lease_expires_at: Date | null; worker_id: string | null }>(
        `select id::text, state, attempt, lease_token::text, lease_expires_at, worker_id from "${schema}".jobs where id = any($1::bigint[]) order by id`,
        [ids],
      );
      return rows;
    };
    const databaseNow = async (): Promise<Date> => (await pool.query<{ now: Date }>('select now()')).rows[0]!.now;
    return { store, startWorker, ready, writesOf, rowsOf, databaseNow, proxies };
  }

  it('skewed ±10 minutes: backoff, snooze and release are due by the database, expiresAt comes at its database time', async () => {
    const { store, startWorker, ready, writesOf, databaseNow } = await setUp('jv_clock_skew');
    const fleet = [
      { offsetMs: TEN_MINUTES, name: 'ahead' },
      { offsetMs: -TEN_MINUTES, name: 'behind' },
      { offsetMs: 0, name: 'right' },
    ].map(({ offsetMs, name }) => ({
      offsetMs,
      // The worker whose clock is right runs as in production: no preload.
      worker: startWorker(
        { workerId: name, queue: `clock_${name}`, concurrency: 4, leaseMs: 30_000, backoffMs: DELAY_MS, snoozeMs: DELAY_MS, stopGraceMs: 0 },
        offsetMs === 0 ? {} : clockOptions(offsetMs),
      ),
    }));
    const workers = fleet.map((f) => f.worker);
    await ready(...fleet.map((f): [WorkerProcess, number] => [f.worker, f.offsetMs]));

    // Each queue: a job that fails its first attempt, one that snoozes it, one that hangs
    // until its expiresAt (a few seconds ahead by the database) and one that hangs until the
    // worker stops.
    const expiresAt = new Date((await databaseNow()).getTime() + EXPIRES_IN_MS);
    const jobs = await Promise.all(
      workers.map(async (w) => {
        const queue = w.config.queue;
        const [fail, snooze, expiring, release] = (
          await store.enqueueJobs({
            jobs: [
              { queue, kind: 'fail', payload: { n: 0 }, maxAttempts: 2 },
              { queue, kind: 'snooze', payload: { n: 1 }, maxAttempts: 2 },
              { queue, kind: 'run', payload: { n: 2 }, maxAttempts: 2, expiresAt },
              { queue, kind: 'run', payload: { n: 3 }, maxAttempts: 2 },
            ],
          })
        ).map((r) => r.job.id) as [string, string, string, string];
        return { worker: w, fail, snooze, expiring, release };
      }),
    );

    // The failure's retry and the snooze: run_at is exactly the delay after the statement's
    // own now() (before the fix: the worker's clock plus the delay, 10 minutes off).
    const delayed = (id: string, state: string) =>
      until(async () => expect((await writesOf(id)).some((w) => w.attempt === 1 && w.state === state), `job ${id} ${state}`).toBe(true), workers, WAIT_MS).then(
        async () => (await writesOf(id)).find((w) => w.attempt === 1 && w.state === state)!,
      );
    const delays = await Promise.all(
      jobs.map(async ({ worker, fail, snooze }) => ({ worker: worker.id, retry: await delayed(fail, 'retrying'), snooze: await delayed(snooze, 'pending') })),
    );
    expect(delays.map((d) => ({ worker: d.worker, retryMs: d.retry.delayMs, snoozeMs: d.snooze.delayMs }))).toEqual(
      jobs.map(({ worker }) => ({ worker: worker.id, retryMs: DELAY_MS, snoozeMs: DELAY_MS })),
    );
    // Each runs again once due, by the database, and completes.
    for (const { worker, retry, snooze } of delays) {
      for (const first of [retry, snooze]) {
        const what = `${worker}: job ${first.id} (${first.state} after its first attempt)`;
        await until(async () => expect((await writesOf(first.id)).at(-1), `${what}: completed on attempt 2`).toMatchObject({ state: 'completed', attempt: 2 }), workers, WAIT_MS);
        const again = (await writesOf(first.id)).find((w) => w.attempt === 2 && w.state === 'running')!;
        expect(again.updatedAt.getTime(), `${what}: claimed again only when due`).toBeGreaterThanOrEqual(first.updatedAt.getTime() + DELAY_MS);
      }
    }

    // The expiring job started (a worker ahead ended it at its claim before the fix) and was
    // ended at its expiresAt by the database: not early (ahead, before the fix: at once), not
    // 10 minutes late (behind, before the fix: the wait below timed out).
    for (const { worker, expiring } of jobs) {
      const what = `${worker.id}: job ${expiring} (expiresAt ${expiresAt.toISOString()})`;
      await until(async () => expect((await writesOf(expiring)).at(-1)?.state, `${what}: ended`).not.toBe('running'), workers, EXPIRES_IN_MS + WAIT_MS);
      const writes = await writesOf(expiring);
      expect(
        writes.map((w) => [w.state, w.attempt, w.errorCode]),
        `${what}: claimed, renewed while it ran, then dead`,
      ).toEqual([...writes.slice(0, -1).map(() => ['running', 1, null]), ['dead', 1, 'expired']]);
      expect(writes.at(-1)!.updatedAt.getTime(), `${what}: ended no earlier than its expiresAt less a round trip`).toBeGreaterThanOrEqual(
        expiresAt.getTime() - ROUND_TRIP_MS,
      );
      expect(executionsOf([worker]).filter((e) => e.job === expiring), `${what}: its handler ran until aborted`).toEqual([
        expect.objectContaining({ attempt: 1, end: expect.any(Number) }),
      ]);
    }

    // A stop with no grace while a handler hangs: the release is due at once, by the
    // database (before the fix: at the worker's now, 10 minutes off).
    for (const { worker, release } of jobs) {
      await until(() => expect(executionsOf([worker]).some((e) => e.job === release)).toBe(true), workers, WAIT_MS);
    }
    const stopped = await Promise.all(workers.map((w) => w.stop()));
    for (const { worker, release } of jobs) {
      const last = (await writesOf(release)).at(-1);
      expect(last, `${worker.id}: job ${release} released`).toMatchObject({ state: 'retrying', attempt: 1, maxAttempts: 3, errorCode: 'worker_shutdown', delayMs: 0 });
    }
    for (const { counters, worker } of stopped) {
      // retrying: the failure and the release.
      expect(counters, worker).toMatchObject({ claimed: 6, completed: 2, retrying: 2, snoozed: 1, dead: 1, lost: 0, rescued: 0 });
    }
  }, 120_000);

  it('stepped 10 minutes ahead while holding jobs, the database healthy: every lease kept, nothing lost or run again', async () => {
    const { store, startWorker, ready, writesOf, rowsOf, databaseNow } = await setUp('jv_clock_step');
    // Its own reaper is fast: a lease it threw away (before the fix) came back to it to run again.
    const worker = startWorker({ workerId: 'stepped', queue: 'clock_step', reaperIntervalMs: 200, maxPrefetch: 0, stopGraceMs: 0 }, clockOptions(0, TEN_MINUTES));
    await ready([worker, 0]);
    const ids = (
      await store.enqueueJobs({ jobs: Array.from({ length: HELD }, (_, n) => ({ queue: 'clock_step', kind: 'run', payload: { n }, maxAttempts: 3 })) })
    ).map((r) => r.job.id);
    await until(() => expect(executionsOf([worker])).toHaveLength(HELD), [worker], WAIT_MS);
    const before = await rowsOf(ids);
    expect(before.map((r) => r.state)).toEqual(ids.map(() => 'running'));

    worker.signal('SIGUSR2');
    await until(() => expect(worker.lines).toContainEqual({ event: 'clock-step', offsetMs: TEN_MINUTES }), [worker], WAIT_MS);
    const steppedBy = await databaseNow();

    // Renewed, under the same lease, more than a whole lease after the step (before the fix:
    // the first heartbeat after it gave every lease up, and the job ran again). Each job's
    // writes since the step, told in short: only renewals of its first attempt's lease.
    const storySinceStep = async (id: string, token: string | null) => {
      const writes = (await writesOf(id)).filter((w) => w.updatedAt.getTime() > steppedBy.getTime());
      const told = writes.map((w) => `${w.state}#${w.attempt}${w.leaseToken === null || w.leaseToken === token ? '' : ' under a new lease'}${w.state !== 'running' && w.errorCode ? ` (${w.errorCode})` : ''}`);
      return { story: told.filter((line, i) => line !== told[i - 1]), lastAt: writes.at(-1)?.updatedAt.getTime() ?? 0 };
    };
    for (const { id, lease_token: token } of before) {
      await until(
        async () => expect((await storySinceStep(id, token)).lastAt, `job ${id}: written a lease after the step`).toBeGreaterThan(steppedBy.getTime() + LEASE_MS),
        [worker],
        LEASE_MS + WAIT_MS,
      );
      expect((await storySinceStep(id, token)).story, `job ${id}: its writes since the step`).toEqual(['running#1']);
    }
    const after = await rowsOf(ids);
    expect(after.map((r) => [r.id, r.state, r.attempt, r.lease_token])).toEqual(before.map((r) => [r.id, 'running', 1, r.lease_token]));
    after.forEach((r, i) => expect(r.lease_expires_at!.getTime(), `job ${r.id}: lease pushed on`).toBeGreaterThan(before[i]!.lease_expires_at!.getTime()));
    // Every handler still on its first run.
    expect(executionsOf([worker]).map((e) => [e.job, e.attempt, e.end])).toEqual(ids.map((id) => [id, 1, undefined]));

    const { counters } = await worker.stop();
    expect(counters).toMatchObject({ claimed: HELD, lost: 0, rescued: 0 });
  }, 120_000);

  it('stepped 10 minutes back while cut off from the database: its handlers stop at its lease, before another worker runs the jobs', async () => {
    const { store, startWorker, ready, rowsOf, proxies } = await setUp('jv_clock_partition');
    const target = new URL(url);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    proxies.push(proxy);
    const viaProxy = new URL(url);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);

    const a = startWorker({ workerId: 'a', queue: 'clock_cut', url: viaProxy.toString(), maxPrefetch: 0 }, clockOptions(0, -TEN_MINUTES));
    await ready([a, 0]);
    const ids = (
      await store.enqueueJobs({ jobs: Array.from({ length: HELD }, (_, n) => ({ queue: 'clock_cut', kind: 'run', payload: { n }, maxAttempts: 3 })) })
    ).map((r) => r.job.id);
    await until(() => expect(executionsOf([a])).toHaveLength(HELD), [a], WAIT_MS);

    // A second worker, its clock right and its reaper fast, ready before the cut so that it
    // rescues the jobs as soon as their leases lapse by the database, and runs them.
    const b = startWorker({ workerId: 'b', queue: 'clock_cut', handler: 'work', reaperIntervalMs: 100 });
    await ready([b, 0]);

    // Cut off, then its clock goes back 10 minutes: by its wall clock (before the fix) its
    // leases would hold for 10 more minutes.
    proxy.blackHole();
    a.signal('SIGUSR2');
    await until(() => expect(a.lines).toContainEqual({ event: 'clock-step', offsetMs: -TEN_MINUTES }), [a], WAIT_MS);
    await until(async () => expect((await rowsOf(ids)).map((r) => [r.state, r.attempt, r.worker_id])).toEqual(ids.map(() => ['completed', 2, 'b'])), [a, b], LEASE_MS + WAIT_MS);

    // The partition heals: what A still held is refused by its fence (before the fix, only
    // now did its handlers stop, long after B had run the jobs).
    proxy.heal();
    await until(() => expect(executionsOf([a]).filter((e) => e.end !== undefined)).toHaveLength(HELD), [a, b], WAIT_MS);
    const executions = executionsOf([a, b]);
    expect(executions.map((e) => `${e.job}#${e.attempt}@${e.worker}`).sort()).toEqual(ids.flatMap((id) => [`${id}#1@a`, `${id}#2@b`]).sort());
    // For the record only (no assertion on durations): how A's ends stood to B's starts.
    const startOnB = new Map(executions.filter((e) => e.worker === 'b').map((e) => [e.job, e.start]));
    const aEndedAfterBStarted = executions.filter((e) => e.worker === 'a').map((e) => `job ${e.job}: ${Math.round(e.end! - startOnB.get(e.job)!)} ms`);
    expect(overlapping(executions, [a, b]), `A's handlers ended, after B's started: ${aEndedAfterBStarted.join(', ')}`).toEqual([]);

    for (const id of ids) {
      const events = await store.getJobEvents({ id });
      expect(events.map((e) => [e.fromState, e.toState, e.attempt, e.workerId, e.error?.code ?? null])).toEqual([
        [null, 'pending', 0, null, null],
        ['pending', 'running', 1, 'a', null],
        ['running', 'retrying', 1, 'a', 'lease_expired'],
        ['retrying', 'running', 2, 'b', null],
        ['running', 'completed', 2, 'b', null],
      ]);
    }
    const [stoppedA, stoppedB] = await Promise.all([a.stop(), b.stop()]);
    expect(stoppedA.counters).toMatchObject({ claimed: HELD, lost: HELD, completed: 0 });
    expect(stoppedB.counters).toMatchObject({ claimed: HELD, rescued: HELD, completed: HELD });
  }, 120_000);
});
