/**
 * Retention on a seeded PostgreSQL store (issue 27): a prune that finds nothing, and a prune
 * of every finished job, batch by batch, with live jobs running beside it. Seeds N completed
 * jobs finished two days ago (three history rows each) and N/50 pending ones (queues q0-q4),
 * then a CHECKPOINT; at each batch size:
 *  - the most WAL one batch (one transaction) wrote: a prune stopped after each batch, whose
 *    time also sets how long the live load's baseline is recorded (below);
 *  - on a fresh seed, the empty prune (cutoff three days ago): p50 and p99 of `samples` calls;
 *  - then a live load on the same schema: a supervisor (the public API) serving queue `live`,
 *    which the seed does not use, at concurrency LIVE_CONCURRENCY with a no-op handler, and an
 *    open-loop enqueuer in this process (open-loop.ts, as the steady scenario's) enqueueing one
 *    job a call at `--live-rate` jobs/s. After LIVE_WARMUP_MS, twice the stopped prune's
 *    time with no prune, then the full prune: its time, and its WAL per pruned job (the live
 *    load's WAL included; its WAL alone over as long is printed under the table).
 * A live job's latency is its handler's start less the moment its enqueue call was made (both
 * performance.now() in this process), for the jobs enqueued while the full prune ran, and for
 * those enqueued in a window as long just before it ("without"); p50, p99 and max. The run
 * checks that the prune deleted no live job and that the live worker ran no seeded one.
 * WAL is the server's LSN moving (pg_current_wal_lsn): on a shared server, other sessions'
 * WAL counts too, so the figures are upper bounds.
 *
 *   npx tsx bench/src/prune.ts [--jobs 100000] [--batch-sizes 1000,10000] [--samples 40]
 *     [--live-rate 100] [--jobvisor-root DIR] [--url postgres://…]
 *
 *   --live-rate      jobs/s the live load enqueues (default 100)
 *   --jobvisor-root  the checkout whose src/ is measured (default this bench's)
 *
 * Prints a Markdown table and a note per batch size; the section of BENCHMARKS.md that quotes
 * them, results/prune.md (which the report includes as it is), is written by hand.
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type * as JobvisorApi from '../../src/index.js';
import { loadJobvisor } from './jobvisor-root.js';
import { openLoop } from './open-loop.js';
import { percentile } from './stats.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '100000' },
    'batch-sizes': { type: 'string', default: '1000,10000' },
    samples: { type: 'string', default: '40' },
    'live-rate': { type: 'string', default: '100' },
    'jobvisor-root': { type: 'string', default: fileURLToPath(new URL('../..', import.meta.url)) },
    url: { type: 'string', default: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test' },
  },
});
const jobs = Number(values.jobs);
const batchSizes = values['batch-sizes'].split(',').map(Number);
const samples = Number(values.samples);
const liveRate = Number(values['live-rate']);
const DAY = 86_400_000;
const LIVE_QUEUE = 'live';
const LIVE_CONCURRENCY = 10;
/** The live load's enqueue calls at once: the pool of the store it enqueues through. */
const LIVE_IN_FLIGHT = 10;
const LIVE_WARMUP_MS = 2_000;
const { api, postgresStore } = await loadJobvisor(values['jobvisor-root']);

async function seed(pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`drop schema if exists "${schema}" cascade`);
  const store = postgresStore({ pool, schema });
  await store.migrate();
  await store.close();
  await pool.query(
    `insert into "${schema}".jobs (queue, kind, payload, state, run_at, attempt, max_attempts, created_at, updated_at, finished_at)
     select 'q' || (i % 5), 'k', '{"n": 1}', 'completed', now() - interval '2 days', 1, 3,
       now() - interval '2 days', now() - interval '2 days', now() - interval '2 days'
     from generate_series(1, $1) i`,
    [jobs],
  );
  await pool.query(
    `insert into "${schema}".jobs (queue, kind, payload, state, run_at, attempt, max_attempts, created_at, updated_at)
     select 'q' || (i % 5), 'k', '{"n": 1}', 'pending', now(), 0, 3, now(), now() from generate_series(1, $1 / 50) i`,
    [jobs],
  );
  await pool.query(`
    insert into "${schema}".job_events (job_id, from_state, to_state, attempt, worker_id, at)
    select j.id, x.from_state, x.to_state, x.attempt, x.worker_id, j.created_at
    from "${schema}".jobs j
    cross join lateral (values (null, 'pending', 0, null), ('pending', 'running', 1, 'w1'), ('running', 'completed', 1, 'w1')) x(from_state, to_state, attempt, worker_id)
    where j.state = 'completed'`);
  await pool.query(`vacuum analyze "${schema}".jobs, "${schema}".job_events`);
  // The seed's pages written to disk now: left to the kernel's writeback (about 500 MB at 1M
  // jobs), they were flushed some 30 s later in one go, a stall of 600-800 ms for every
  // commit in the live load's window without the prune.
  await pool.query('checkpoint');
}

async function lsn(pool: pg.Pool): Promise<string> {
  return (await pool.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0]!.lsn;
}

async function walSince(pool: pg.Pool, from: string): Promise<number> {
  return Number((await pool.query<{ n: string }>('select pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn) as n', [from])).rows[0]!.n);
}

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** The live load, started at once: a supervisor on its own pool serving LIVE_QUEUE, and the
 *  open-loop enqueuer on another; `stop()` waits until every job enqueued has started. */
async function startLive(schema: string) {
  const workerStore = postgresStore({ connectionString: values.url, schema });
  const enqueueStore = postgresStore({ connectionString: values.url, schema });
  /** Per job started: the moment its enqueue call was made, and the wait to its handler's start (ms). */
  const starts: Array<{ at: number; ms: number }> = [];
  const queue = api.defineQueue(LIVE_QUEUE, {
    concurrency: LIVE_CONCURRENCY,
    handlers: {
      tick: async ({ payload }: JobvisorApi.Job<{ at: number }>) => {
        starts.push({ at: payload.at, ms: performance.now() - payload.at });
      },
    },
  });
  const supervisor = api.createSupervisor({ store: workerStore, queues: [queue], logger: silent });
  await supervisor.start();
  let enqueued = 0;
  let failed = 0;
  let firstError: string | undefined;
  const loop = openLoop(liveRate, LIVE_IN_FLIGHT, () =>
    queue.enqueue(enqueueStore, 'tick', { at: performance.now() }).then(
      () => {
        enqueued += 1;
      },
      (error: unknown) => {
        failed += 1;
        firstError ??= error instanceof Error ? error.message : String(error);
      },
    ),
  );
  loop.start();
  return {
    /** enqueue → handler start (ms) of the jobs enqueued in [from, to). */
    latencies: (from: number, to: number) => starts.filter((s) => s.at >= from && s.at < to).map((s) => s.ms),
    /** Behind the enqueuer's schedule now (ms): 0 while the rate is kept. */
    lagMs: () => loop.lagMs(),
    async stop(): Promise<number> {
      await loop.stop();
      for (const deadline = performance.now() + 60_000; starts.length < enqueued && performance.now() < deadline; ) await sleep(10);
      await supervisor.stop({ graceMs: 10_000 });
      await Promise.all([workerStore.close(), enqueueStore.close()]);
      if (failed > 0) throw new Error(`${failed} live enqueues failed: ${firstError}`);
      if (starts.length !== enqueued) throw new Error(`${enqueued - starts.length} of ${enqueued} live jobs never started`);
      return enqueued;
    },
  };
}

/** n, p50 / p99 / max of latencies (ms). */
function latencyFigures(ms: number[]) {
  return { n: ms.length, p50: percentile(ms, 50), p99: percentile(ms, 99), max: Math.max(...ms) };
}

const pool = new pg.Pool({ connectionString: values.url, max: 4 });
const schema = `jv_bench_prune_${process.pid}`;
const rows: string[] = [];
const notes: string[] = [];
try {
  for (const batchSize of batchSizes) {
    await seed(pool, schema);
    let store = postgresStore({ pool, schema });
    // The WAL of each batch on its own: a throw from onBatch stops the prune after one batch.
    const cutoff = new Date(Date.now() - DAY);
    const stop = new Error('one batch');
    let maxBatchWal = 0;
    const stoppedStarted = performance.now();
    for (let done = false; !done; ) {
      const mark = await lsn(pool);
      done = await store.pruneJobs({ completedBefore: cutoff, batchSize, onBatch: () => { throw stop; } }).then(
        () => true,
        (error: unknown) => {
          if (error !== stop) throw error;
          return false;
        },
      );
      maxBatchWal = Math.max(maxBatchWal, await walSince(pool, mark));
    }
    const stoppedMs = performance.now() - stoppedStarted;
    await store.close();

    await seed(pool, schema);
    store = postgresStore({ pool, schema });
    const empty: number[] = [];
    const longAgo = new Date(Date.now() - 3 * DAY);
    for (let i = 0; i < samples; i++) {
      const started = performance.now();
      if ((await store.pruneJobs({ completedBefore: longAgo, deadBefore: longAgo, batchSize })) !== 0) throw new Error('the empty prune pruned');
      empty.push(performance.now() - started);
    }
    const live = await startLive(schema);
    let liveEnqueued: number;
    let pruned: number;
    let pruneMs: number;
    let pruneFrom: number;
    let baselineFrom: number;
    let baselineMs: number;
    let wal: number;
    let baselineWal: number;
    let lagMs: number;
    try {
      await sleep(LIVE_WARMUP_MS);
      const baselineLsn = await lsn(pool);
      baselineFrom = performance.now();
      await sleep(2 * stoppedMs);
      baselineWal = await walSince(pool, baselineLsn);
      baselineMs = performance.now() - baselineFrom;
      const start = await lsn(pool);
      pruneFrom = performance.now();
      pruned = await store.pruneJobs({ completedBefore: new Date(Date.now() - DAY), batchSize });
      pruneMs = performance.now() - pruneFrom;
      wal = await walSince(pool, start);
      lagMs = live.lagMs();
    } finally {
      liveEnqueued = await live.stop();
    }
    await store.close();
    // The prune left the live jobs, and the live worker the seeded ones.
    const { rows: counts } = await pool.query<{ live: number; seeded: number }>(
      `select count(*) filter (where queue = $1)::int as live, count(*) filter (where queue <> $1 and state = 'pending')::int as seeded from "${schema}".jobs`,
      [LIVE_QUEUE],
    );
    if (counts[0]!.live !== liveEnqueued) throw new Error(`${liveEnqueued} live jobs enqueued, ${counts[0]!.live} left after the prune`);
    if (counts[0]!.seeded !== Math.floor(jobs / 50)) throw new Error(`${counts[0]!.seeded} seeded pending jobs left of ${Math.floor(jobs / 50)}`);
    // The window without: as long as the prune, just before it (shorter only if the prune took
    // longer than twice the stopped one, which the note says).
    const withoutFrom = Math.max(baselineFrom, pruneFrom - pruneMs);
    const without = latencyFigures(live.latencies(withoutFrom, pruneFrom));
    const withPrune = latencyFigures(live.latencies(pruneFrom, pruneFrom + pruneMs));
    const ms = (x: number) => (x < 10 ? x.toFixed(1) : Math.round(x).toLocaleString('en'));
    rows.push(
      `| ${jobs.toLocaleString('en')} | ${batchSize.toLocaleString('en')} | ${percentile(empty, 50).toFixed(1)} / ${percentile(empty, 99).toFixed(1)} ms | ${pruned.toLocaleString('en')} in ${(pruneMs / 1000).toFixed(1)} s | ${Math.round(wal / pruned).toLocaleString('en')} B | ${(wal / 1e6).toFixed(1)} MB | ${(maxBatchWal / 1e6).toFixed(2)} MB | ${without.n} / ${withPrune.n} | ${ms(without.p50)} / ${ms(withPrune.p50)} ms | ${ms(without.p99)} / ${ms(withPrune.p99)} ms | ${ms(without.max)} / ${ms(withPrune.max)} ms |`,
    );
    notes.push(
      `- batch size ${batchSize.toLocaleString('en')}: the live load alone wrote ${((baselineWal / baselineMs) * pruneMs / 1e6).toFixed(1)} MB of WAL over as long as the prune; the enqueuer was ${Math.round(lagMs)} ms behind its schedule when the prune ended; windows ${((pruneFrom - withoutFrom) / 1000).toFixed(1)} s without, ${(pruneMs / 1000).toFixed(1)} s with.`,
    );
  }
} finally {
  await pool.query(`drop schema if exists "${schema}" cascade`);
  await pool.end();
}
console.log(
  `| finished jobs | batch size | empty prune p50 / p99 | full prune | WAL per pruned job | WAL in all | most WAL in one batch | live jobs (${liveRate}/s) without / with the prune | live p50 without / with | live p99 without / with | live max without / with |`,
);
console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const row of rows) console.log(row);
console.log();
for (const note of notes) console.log(note);
