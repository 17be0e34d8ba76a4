/**
 * Where a system's WAL goes: drains `jobs` no-op jobs at concurrency `c` on a fresh schema,
 * then prints the window's WAL records of that schema by relation and record type (bytes
 * per job, of which full-page images). A probe for choosing what to change, not a figure of
 * the report:
 *
 *   bench/.node/v22.23.5/bin/node --import tsx src/wal-breakdown.ts [system] [jobs] [c] [jobvisor root]
 *
 * PROBE_SQL (below) tries a storage setting before the jobs go in.
 */
import pg from 'pg';
import { resolve } from 'node:path';
import { openSystem } from './systems/index.js';
import type { SystemName } from './systems/system.js';
import { systemConnectionString, walOfSchema } from './server-cost.js';

const [system = 'jobvisor', jobsArg = '5000', cArg = '50', root = '..'] = process.argv.slice(2);
const jobs = Number(jobsArg);
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `jvbench_walprobe_${process.pid}`;
const admin = new pg.Client({ connectionString: url });
await admin.connect();
const sys = await openSystem(system as SystemName, {
  connectionString: systemConnectionString(url, schema),
  readerConnectionString: url,
  schema,
  jobvisorRoot: resolve(root),
});
try {
  await sys.setup();
  // PROBE_SQL: a statement run on the fresh schema before any job, to try a storage setting
  // (`{schema}` is replaced), e.g. PROBE_SQL='alter table {schema}.jobs set (fillfactor = 50)'.
  if (process.env.PROBE_SQL) await admin.query(process.env.PROBE_SQL.replaceAll('{schema}', `"${schema}"`));
  await sys.enqueueMany(500);
  await sys.startWorker({ concurrency: Number(cArg), onJob: () => {} });
  while ((await sys.completedCount()) < 500) await new Promise((r) => setTimeout(r, 20));
  await sys.stopWorker();
  const lsn = async () => (await admin.query<{ l: string }>('select pg_current_wal_insert_lsn()::text as l')).rows[0]!.l;
  await admin.query('checkpoint');
  const e0 = await lsn();
  await sys.enqueueMany(jobs);
  const e1 = await lsn();
  await breakdown('enqueue', e0, e1);
  await admin.query('checkpoint');
  const d0 = await lsn();
  await sys.startWorker({ concurrency: Number(cArg), onJob: () => {} });
  while ((await sys.completedCount()) < 500 + jobs) await new Promise((r) => setTimeout(r, 20));
  const d1 = await lsn();
  await sys.stopWorker();
  await breakdown('drain', d0, d1);
} finally {
  await sys.close();
  await admin.query(`drop schema if exists "${schema}" cascade`);
  await admin.end();
}
process.exit();

/** Read right after its window: the server recycles WAL segments at its checkpoints. */
async function breakdown(what: string, from: string, to: string): Promise<void> {
  const total = await walOfSchema(admin, schema, from, to);
  console.log(`\n${system} ${what}: ${(total.ours / jobs).toFixed(0)} B/job (${(total.fpi / jobs).toFixed(0)} FPI), ${(total.records / jobs).toFixed(2)} records/job`);
  const { rows } = await admin.query(
    `
with recs as (
select r.*, (regexp_match(coalesce(r.block_ref, ''), 'rel \\d+/\\d+/(\\d+)'))[1] as node
from jobvisor_bench_walinspect.pg_get_wal_records_info($2::pg_lsn, $3::pg_lsn) r
),
named as (
select coalesce(c.relname, case when r.node is null then '(no block)' else 'other' end) as rel, r.*
from recs r left join pg_class c on c.relfilenode::text = r.node
  and c.relnamespace in (select oid from pg_namespace where nspname in ($1, 'pg_toast'))
)
select rel, resource_manager || ' ' || record_type as record, count(*) as n,
round(sum(record_length)::numeric / $4, 1) as bytes_per_job, round(sum(fpi_length)::numeric / $4, 1) as fpi_per_job
from named
where rel not in ('other') and (rel <> '(no block)' or resource_manager = 'Transaction')
group by 1, 2 order by sum(record_length) desc limit 25
`,
    [schema, from, to, jobs],
  );
  console.table(rows);
}
