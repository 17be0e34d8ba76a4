/**
 * The inspector's API calls on a seeded PostgreSQL store: p50 and p99 of each, at each size
 * given (default 100,000 and 1,000,000 jobs, mostly completed, one history row each, and one
 * job with an 11.6 MB payload, as test/adapters/postgres/inspector-scale.test.ts seeds them).
 * Prints a Markdown table for BENCHMARKS.md.
 *
 *   npx tsx bench/src/inspector-reads.ts [--jobs 100000,1000000] [--samples 40] [--url postgres://…]
 *
 * /api/queues and /api/throughput answer from a cache for 2 s and 5 s, and then read only the
 * last buckets of history: what is timed for them is the first read, each sample from a fresh
 * inspector. Throughput twice: the very first read on the store (its summary emptied before
 * each sample: the window walked in the history, at most 100,000 rows), and the first read of
 * a fresh inspector once earlier ones have filled the summary (each goes on where the last
 * stopped, until a read is no longer partial), as on a store an inspector has watched: the
 * saved buckets and the last two minutes of history. The table goes into
 * results/inspector-reads.md by hand.
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { postgresStore } from '../../src/adapters/postgres/index.js';
import type { JobStore } from '../../src/adapters/store.js';
import { startInspector } from '../../src/inspector/index.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '100000,1000000' },
    samples: { type: 'string', default: '40' },
    url: { type: 'string', default: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test' },
  },
});
const sizes = values.jobs.split(',').map(Number);
const samples = Number(values.samples);
const silent = { debug() {}, info() {}, warn() {}, error() {} };

async function seed(pool: pg.Pool, schema: string, jobs: number): Promise<void> {
  const store = postgresStore({ pool, schema });
  await store.migrate();
  await store.close();
  const { rows: indexes } = await pool.query<{ name: string; definition: string }>(
    `select indexname as name, indexdef as definition from pg_indexes
     where schemaname = $1 and tablename in ('jobs', 'job_events') and indexname not like '%_pkey'`,
    [schema],
  );
  for (const { name } of indexes) await pool.query(`drop index "${schema}"."${name}"`);
  await pool.query(
    `insert into "${schema}".jobs (queue, kind, payload, state, priority, run_at, attempt, max_attempts,
       unique_key, worker_id, lease_expires_at, created_at, updated_at, finished_at, error)
     select 'q' || (i % 5), 'k' || (i % 3), '{"n": 1}', s.state, i % 2, now() - make_interval(secs => $1 - i), 1, 3,
       case when i % 7 = 0 then 'key-' || i end, case when s.state = 'running' then 'w1' end,
       case when s.state = 'running' then now() + interval '1 minute' end,
       now() - make_interval(secs => ($1 - i) / 10.0), now(), case when s.state in ('completed', 'dead', 'cancelled') then now() end,
       case when s.state = 'dead' then '{"code": "handler_error", "message": "boom"}'::jsonb end
     from generate_series(1, $1) i
     cross join lateral (select case
       when i > $1 - $1 / 50 then (case when i % 10 = 0 then 'retrying' else 'pending' end)
       when i % 100 = 7 then 'dead' when i % 500 = 3 then 'cancelled' when i % 5000 = 11 then 'running'
       else 'completed' end as state) s`,
    [jobs],
  );
  await pool.query(
    `insert into "${schema}".jobs (queue, kind, payload, state, run_at, attempt, max_attempts, created_at, updated_at)
     values ('q1', 'big', jsonb_build_object('blob', repeat('x', 11600000)), 'pending', now(), 0, 3, now(), now())`,
  );
  // An attempt's start and its end per job, over the last day (as a busy store's history).
  await pool.query(`
    insert into "${schema}".job_events (job_id, from_state, to_state, attempt, worker_id, at)
    select j.id, x.from_state, x.to_state, 1, 'w1', j.created_at + x.after
    from "${schema}".jobs j
    cross join lateral (values ('pending', 'running', interval '0'), ('running', j.state, interval '40 milliseconds')) x(from_state, to_state, after)
    order by j.id, x.after`);
  for (const { definition } of indexes) await pool.query(definition);
  await pool.query(`vacuum analyze "${schema}".jobs, "${schema}".job_events`);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

async function timeCall(url: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(url);
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return performance.now() - started;
}

/** A fresh inspector's first read of `path`, timed, and its answer. */
async function firstRead(store: JobStore, path: string): Promise<{ ms: number; body: unknown }> {
  const fresh = await startInspector({ store, port: 0, logger: silent });
  try {
    const started = performance.now();
    const response = await fetch(`${fresh.url.slice(0, -1)}${path}`);
    const body: unknown = await response.json();
    if (!response.ok) throw new Error(`${path}: ${response.status}`);
    return { ms: performance.now() - started, body };
  } finally {
    await fresh.close();
  }
}

function row(jobs: number, call: string, times: number[], note = ''): string {
  times.sort((a, b) => a - b);
  return `| ${jobs.toLocaleString('en')} | ${call} | ${percentile(times, 0.5).toFixed(1)} | ${percentile(times, 0.99).toFixed(1)} | ${note} |`;
}

async function measure(pool: pg.Pool, schema: string, jobs: number): Promise<string[]> {
  const store = postgresStore({ pool, schema });
  const { rows } = await pool.query<{ id: string }>(`select id::text from "${schema}".jobs where state = 'dead' order by id desc limit 1`);
  const reads = [
    '/api/jobs',
    '/api/jobs?state=pending',
    '/api/jobs?state=dead',
    '/api/jobs?queue=q1&kind=k1',
    '/api/jobs?q=key-700',
    '/api/jobs-count',
    '/api/jobs-count?state=pending',
    '/api/jobs-count?state=dead&queue=q2',
    '/api/jobs-count?state=completed',
    '/api/jobs-count?queue=q2&kind=k1',
    `/api/jobs/${rows[0]!.id}`,
    '/api/workers',
    '/api/queues/q2/dead-groups',
  ];
  const lines: string[] = [];
  const inspector = await startInspector({ store, port: 0, logger: silent });
  try {
    for (const path of reads) {
      await timeCall(`${inspector.url.slice(0, -1)}${path}`);
      const times: number[] = [];
      for (let i = 0; i < samples; i++) times.push(await timeCall(`${inspector.url.slice(0, -1)}${path}`));
      lines.push(row(jobs, `\`GET ${path.replace(/\/api\/jobs\/\d+$/, '/api/jobs/:id')}\``, times));
    }
  } finally {
    await inspector.close();
  }
  // The cached reads: each sample is a fresh inspector's first read.
  const fresh = Math.min(samples, 10);
  const queues: number[] = [];
  for (let i = 0; i < fresh; i++) queues.push((await firstRead(store, '/api/queues')).ms);
  lines.push(row(jobs, '`GET /api/queues` (first read)', queues, 'read once per inspector, then cached'));
  for (const path of ['/api/throughput?window=1h', '/api/throughput?window=24h']) {
    const everFirst: number[] = [];
    for (let i = 0; i < fresh; i++) {
      await pool.query(`truncate "${schema}".throughput_buckets`);
      everFirst.push((await firstRead(store, path)).ms);
    }
    lines.push(row(jobs, `\`GET ${path}\` (very first read on the store)`, everFirst, 'summary empty: the window from the history, at most 100,000 rows'));
    // Earlier inspectors fill the summary, each from where the last one stopped.
    let fills = 0;
    for (let partial = true; partial && fills < 50; fills++) partial = ((await firstRead(store, path)).body as { partial: boolean }).partial;
    const filled: number[] = [];
    for (let i = 0; i < fresh; i++) filled.push((await firstRead(store, path)).ms);
    lines.push(row(jobs, `\`GET ${path}\` (first read)`, filled, `summary filled by earlier inspectors (${fills} read${fills === 1 ? '' : 's'})`));
  }
  await store.close();
  return lines;
}

const pool = new pg.Pool({ connectionString: values.url, max: 10 });
const lines = ['| jobs | call | p50 ms | p99 ms | note |', '| ---: | --- | ---: | ---: | --- |'];
try {
  for (const jobs of sizes) {
    const schema = `bench_inspector_${jobs}_${process.pid}`;
    await pool.query(`drop schema if exists "${schema}" cascade`);
    const seeded = performance.now();
    await seed(pool, schema, jobs);
    console.error(`seeded ${jobs} jobs in ${((performance.now() - seeded) / 1000).toFixed(1)} s`);
    try {
      lines.push(...(await measure(pool, schema, jobs)));
    } finally {
      await pool.query(`drop schema if exists "${schema}" cascade`);
    }
  }
} finally {
  await pool.end();
}
console.log(lines.join('\n'));
