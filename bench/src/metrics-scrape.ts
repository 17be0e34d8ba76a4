/**
 * A scrape of registerMetrics({ store }) (jobvisor/prometheus) on a seeded PostgreSQL store:
 * p50 and p99 of a whole `registry.metrics()` call, at each size given (default 1,000,000
 * jobs). Two mixes: "mostly done" (98% completed, dead and cancelled; a 2% backlog over 5
 * queues, as in inspector-reads.ts) and "all waiting" (every job pending, the worst case: the
 * cost grows with the unfinished jobs). Prints the plan of the depths statement too. Drops its
 * schemas afterwards.
 *
 *   npx tsx bench/src/metrics-scrape.ts [--jobs 1000000] [--samples 40] [--url postgres://…]
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Registry } from 'prom-client';
import { postgresStore } from '../../src/adapters/postgres/index.js';
import { GET_QUEUE_DEPTHS } from '../../src/adapters/sql/queries/get-queue-depths.js';
import { sqlSchema } from '../../src/adapters/sql/sql-schema.js';
import { buildStatement } from '../../src/adapters/sql/statement.js';
import { registerMetrics } from '../../src/telemetry/prometheus.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '1000000' },
    samples: { type: 'string', default: '40' },
    url: { type: 'string', default: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test' },
  },
});
const sizes = values.jobs.split(',').map(Number);
const samples = Number(values.samples);

const MIXES = {
  'mostly done': `case
    when i > $1 - $1 / 50 then (case when i % 10 = 0 then 'retrying' else 'pending' end)
    when i % 100 = 7 then 'dead' when i % 500 = 3 then 'cancelled' when i % 5000 = 11 then 'running'
    else 'completed' end`,
  'all waiting': `'pending'`,
} as const;

async function seed(pool: pg.Pool, schema: string, jobs: number, state: string): Promise<void> {
  const store = postgresStore({ pool, schema });
  await store.migrate();
  await store.close();
  await pool.query(
    `insert into "${schema}".jobs (queue, kind, payload, state, priority, run_at, attempt, max_attempts,
       worker_id, lease_expires_at, created_at, updated_at, finished_at)
     select 'q' || (i % 5), 'k', '{"n": 1}', s.state, i % 2, now() - make_interval(secs => $1 - i), 1, 3,
       case when s.state = 'running' then 'w1' end, case when s.state = 'running' then now() + interval '1 minute' end,
       now() - make_interval(secs => $1 - i), now(), case when s.state in ('completed', 'dead', 'cancelled') then now() end
     from generate_series(1, $1) i
     cross join lateral (select ${state} as state) s`,
    [jobs],
  );
  await pool.query(`vacuum analyze "${schema}".jobs`);
  // A snapshot held elsewhere (a long transaction) keeps vacuum from marking the new pages
  // all-visible: the index-only scans then read the table too. Said, to read the figures by.
  const { rows } = await pool.query(`select relallvisible::float / greatest(relpages, 1) as f from pg_class where oid = $1::regclass`, [`"${schema}".jobs`]);
  console.error(`all-visible: ${(100 * rows[0].f).toFixed(0)}% of the table's pages`);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

const pool = new pg.Pool({ connectionString: values.url, max: 4 });
try {
  console.log('| jobs | mix | scrape p50 ms | p99 ms |\n| --- | --- | --- | --- |');
  for (const jobs of sizes) {
    for (const [mix, state] of Object.entries(MIXES)) {
      const schema = `jv_metrics_scrape_${process.pid}`;
      try {
        await seed(pool, schema, jobs, state);
        const store = postgresStore({ pool, schema });
        const registry = new Registry();
        registerMetrics({ registry, store });
        await registry.metrics(); // the first: the statement's preparation
        const times: number[] = [];
        for (let i = 0; i < samples; i++) {
          const started = performance.now();
          await registry.metrics();
          times.push(performance.now() - started);
        }
        times.sort((a, b) => a - b);
        console.log(`| ${jobs.toLocaleString('en')} | ${mix} | ${percentile(times, 0.5).toFixed(1)} | ${percentile(times, 0.99).toFixed(1)} |`);
        const { rows } = await pool.query(
          `explain (analyze, costs off, timing off, summary off) ${buildStatement(GET_QUEUE_DEPTHS, sqlSchema(schema)).text}`,
          [null],
        );
        console.error(`${mix}:\n${rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n')}`);
        await store.close();
      } finally {
        await pool.query(`drop schema if exists "${schema}" cascade`);
      }
    }
  }
} finally {
  await pool.end();
}
