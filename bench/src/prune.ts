/**
 * Retention on a seeded PostgreSQL store (issue 27): a prune that finds nothing, and a prune
 * of every finished job, batch by batch. Seeds N completed jobs finished two days ago (three
 * history rows each) and N/50 pending ones, then times
 *  - the empty prune (cutoff three days ago): p50 and p99 of `samples` calls;
 *  - the full prune at each batch size: its time, its WAL per pruned job, and the most WAL
 *    one batch (one transaction) wrote.
 * WAL is the server's LSN moving (pg_current_wal_lsn): on a shared server, other sessions'
 * WAL counts too, so the figures are upper bounds.
 *
 *   npx tsx bench/src/prune.ts [--jobs 100000] [--batch-sizes 1000,10000] [--samples 40] [--url postgres://…]
 *
 * Prints a Markdown table; the table goes into results/prune.md by hand.
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { postgresStore } from '../../src/adapters/postgres/index.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '100000' },
    'batch-sizes': { type: 'string', default: '1000,10000' },
    samples: { type: 'string', default: '40' },
    url: { type: 'string', default: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test' },
  },
});
const jobs = Number(values.jobs);
const batchSizes = values['batch-sizes'].split(',').map(Number);
const samples = Number(values.samples);
const DAY = 86_400_000;

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
}

async function lsn(pool: pg.Pool): Promise<string> {
  return (await pool.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0]!.lsn;
}

async function walSince(pool: pg.Pool, from: string): Promise<number> {
  return Number((await pool.query<{ n: string }>('select pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn) as n', [from])).rows[0]!.n);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

const pool = new pg.Pool({ connectionString: values.url, max: 4 });
const schema = `jv_bench_prune_${process.pid}`;
const rows: string[] = [];
try {
  for (const batchSize of batchSizes) {
    await seed(pool, schema);
    const store = postgresStore({ pool, schema });
    const empty: number[] = [];
    const longAgo = new Date(Date.now() - 3 * DAY);
    for (let i = 0; i < samples; i++) {
      const started = performance.now();
      if ((await store.pruneJobs({ completedBefore: longAgo, deadBefore: longAgo, batchSize })) !== 0) throw new Error('the empty prune pruned');
      empty.push(performance.now() - started);
    }
    empty.sort((a, b) => a - b);
    const start = await lsn(pool);
    const started = performance.now();
    const pruned = await store.pruneJobs({ completedBefore: new Date(Date.now() - DAY), batchSize });
    const seconds = (performance.now() - started) / 1000;
    const wal = await walSince(pool, start);
    // The WAL of each batch on its own, on a fresh seed: a throw from onBatch stops the prune
    // after one batch.
    await seed(pool, schema);
    const cutoff = new Date(Date.now() - DAY);
    const stop = new Error('one batch');
    let maxBatchWal = 0;
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
    await store.close();
    rows.push(
      `| ${jobs.toLocaleString('en')} | ${batchSize.toLocaleString('en')} | ${percentile(empty, 0.5).toFixed(1)} / ${percentile(empty, 0.99).toFixed(1)} ms | ${pruned.toLocaleString('en')} in ${seconds.toFixed(1)} s | ${Math.round(wal / pruned).toLocaleString('en')} B | ${(wal / 1e6).toFixed(1)} MB | ${(maxBatchWal / 1e6).toFixed(2)} MB |`,
    );
  }
} finally {
  await pool.query(`drop schema if exists "${schema}" cascade`);
  await pool.end();
}
console.log('| finished jobs | batch size | empty prune p50 / p99 | full prune | WAL per pruned job | WAL in all | most WAL in one batch |');
console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const row of rows) console.log(row);
