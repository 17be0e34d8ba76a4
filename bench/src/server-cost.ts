/**
 * What a measured window cost the PostgreSQL server, for any system: CPU time of the server's
 * processes (from /proc, so the server must run on this machine) and WAL written.
 *
 * The machine and the server are shared with other sessions, so both figures are narrowed to
 * the run's own work:
 * - CPU: the backends of the system's own connections, found by the application_name the
 *   bench gives them (`systemConnectionString`); the whole server's figure (every process
 *   named postgres: other sessions, the bench's own counting polls, the WAL writer,
 *   autovacuum) is kept beside it. CPU time, not wall time: other load slows a run but does
 *   not add to it.
 * - WAL: the records of the window (pg_walinspect) that touch the run's schema's relations,
 *   plus every other record of the transactions that wrote them (their commits); the
 *   server-wide LSN difference is kept beside it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { readdirSync, readFileSync } from 'node:fs';
import type pg from 'pg';

/** Linux's USER_HZ: /proc reports CPU time in ticks of 10 ms. */
const TICK_US = 10_000;

/** The connection string the system under test gets: its backends are named after the run. */
export function systemConnectionString(connectionString: string, schema: string): string {
  const url = new URL(connectionString);
  url.searchParams.set('application_name', appName(schema));
  return url.toString();
}

/** The connection string of a separate enqueuing process (steady-load.ts): its backends are
 *  counted apart from the system's, as `enqueuerPgCpuPerJobUs`. */
export function enqueuerConnectionString(connectionString: string, schema: string): string {
  const url = new URL(connectionString);
  url.searchParams.set('application_name', appName(schema, 'jve'));
  return url.toString();
}

function appName(schema: string, tag = 'jvb'): string {
  // application_name keeps 63 bytes; the schema ends in the parent's pid, so keep its tail.
  return `${tag}_${schema.slice(-59)}`;
}

/** user + system ticks of one process, or undefined when it is gone or not a postgres process. */
function ticksOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    if (stat.slice(stat.indexOf('(') + 1, close) !== 'postgres') return undefined;
    // Fields after "(comm)": state is field 3, utime 14, stime 15.
    const fields = stat.slice(close + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** pid → ticks of every process named postgres. Synchronous: a window opens inside a handler. */
export function postgresTicks(pids?: Iterable<number>): Map<number, number> {
  const out = new Map<number, number>();
  const candidates = pids ?? readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number);
  for (const pid of candidates) {
    const t = ticksOf(pid);
    if (t !== undefined) out.set(pid, t);
  }
  return out;
}

export interface ServerWindow {
  /** Marks the CPU start (synchronous); call when the measured window opens. */
  markCpu(): void;
  /** Ends the window: CPU and WAL of the run's own work and of the whole server. */
  close(jobs: number): Promise<Record<string, number>>;
}

/**
 * Opens a window: the WAL position now, and the postgres processes to watch. The CPU start is
 * taken at `markCpu()` (the first handler's start), or now if it is never called.
 */
export async function openServerWindow(admin: pg.Client, schema: string, prefix: string): Promise<ServerWindow> {
  // A temporary replication slot keeps the window's WAL until it is read: a checkpoint in the
  // window (timed, or another session's) would otherwise recycle the segments it starts in.
  // Temporary: the server drops it when this session ends, whatever happens to the run.
  const slot = `jvbench_${process.pid}_${++slots}`;
  await admin.query('select pg_create_physical_replication_slot($1, true, true)', [slot]);
  const lsn0 = await insertLsn(admin);
  const pids = [...postgresTicks().keys()];
  let cpu0 = postgresTicks(pids);
  return {
    markCpu() {
      cpu0 = postgresTicks(pids);
    },
    async close(jobs) {
      const all = postgresTicks();
      const { rows } = await admin.query<{ pid: number; app: string; listens: boolean }>(
        `select pid, application_name as app, query ilike 'listen %' as listens from pg_stat_activity where application_name in ($1, $2)`,
        [appName(schema), appName(schema, 'jve')],
      );
      const ours = new Set(rows.filter((r) => r.app === appName(schema)).map((r) => r.pid));
      // The system's LISTEN connection: its backend's last statement is the LISTEN.
      const listeners = new Set(rows.filter((r) => r.app === appName(schema) && r.listens).map((r) => r.pid));
      const enqueuers = new Set(rows.filter((r) => r.app !== appName(schema)).map((r) => r.pid));
      let oursTicks = 0;
      let enqueuerTicks = 0;
      let listenTicks = 0;
      let allTicks = 0;
      for (const [pid, t] of all) {
        const spent = t - (cpu0.get(pid) ?? 0);
        allTicks += spent;
        if (ours.has(pid)) oursTicks += spent;
        if (enqueuers.has(pid)) enqueuerTicks += spent;
        if (listeners.has(pid)) listenTicks += spent;
      }
      const lsn1 = await insertLsn(admin);
      const wal = await walOfSchema(admin, schema, lsn0, lsn1);
      await admin.query('select pg_drop_replication_slot($1)', [slot]);
      // `pgCpuPerJobUs` with no prefix, `enqueuePgCpuPerJobUs` with one.
      const key = (name: string) => (prefix ? `${prefix}${name}` : `${name[0]!.toLowerCase()}${name.slice(1)}`);
      return {
        [key('PgCpuPerJobUs')]: (oursTicks * TICK_US) / jobs,
        [key('PgCpuServerPerJobUs')]: (allTicks * TICK_US) / jobs,
        [key('PgBackends')]: ours.size,
        ...(enqueuers.size > 0 ? { [key('EnqueuerPgCpuPerJobUs')]: (enqueuerTicks * TICK_US) / jobs } : {}),
        ...(listeners.size > 0 ? { [key('PgCpuListenPerJobUs')]: (listenTicks * TICK_US) / jobs } : {}),
        [key('WalBytesPerJob')]: wal.ours / jobs,
        [key('WalFpiBytesPerJob')]: wal.fpi / jobs,
        [key('WalRecordsPerJob')]: wal.records / jobs,
        [key('WalServerBytesPerJob')]: wal.server / jobs,
      };
    },
  };
}

async function insertLsn(admin: pg.Client): Promise<string> {
  const { rows } = await admin.query<{ lsn: string }>('select pg_current_wal_insert_lsn()::text as lsn');
  return rows[0]!.lsn;
}

let walinspectReady = false;
let slots = 0;

/** pg_walinspect lives in a schema of its own in the bench's database, made once. */
async function ensureWalinspect(admin: pg.Client): Promise<void> {
  if (walinspectReady) return;
  await admin.query('create schema if not exists jobvisor_bench_walinspect');
  await admin.query('create extension if not exists pg_walinspect with schema jobvisor_bench_walinspect');
  walinspectReady = true;
}

/**
 * WAL between two positions: all of it, and the share of the run's schema. A record is the
 * run's when a block it references belongs to a relation of the schema (tables, indexes,
 * TOAST, sequences), or when its transaction wrote such a record (its commit record).
 */
export async function walOfSchema(
  admin: pg.Client,
  schema: string,
  from: string,
  to: string,
): Promise<{ ours: number; fpi: number; records: number; server: number }> {
  await ensureWalinspect(admin);
  // pg_walinspect reads only flushed WAL. An asynchronous commit's records (the claim's) are
  // flushed by the WAL writer within wal_writer_delay (200 ms by default); a transaction that
  // only takes an xid writes no WAL before its commit, so its commit does not flush.
  for (let i = 0; i < 200; i++) {
    const { rows } = await admin.query<{ ok: boolean }>('select pg_current_wal_flush_lsn() >= $1::pg_lsn as ok', [to]);
    if (rows[0]!.ok) break;
    await sleep(20);
  }
  const { rows } = await admin.query<{ ours: string; fpi: string; records: string; server: string }>(
    `
with rels as (
  select c.relfilenode::text as node from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where n.nspname = $1 and c.relfilenode <> 0
  union
  select t.relfilenode::text from pg_class c join pg_namespace n on n.oid = c.relnamespace
  join pg_class t on t.oid = c.reltoastrelid where n.nspname = $1
  union
  select i.relfilenode::text from pg_class c join pg_namespace n on n.oid = c.relnamespace
  join pg_index x on x.indrelid = c.reltoastrelid join pg_class i on i.oid = x.indexrelid where n.nspname = $1
),
recs as materialized (
  select start_lsn, xid, record_length, fpi_length, block_ref
  from jobvisor_bench_walinspect.pg_get_wal_records_info($2::pg_lsn, $3::pg_lsn)
),
touching as materialized (
  select distinct r.start_lsn, r.xid
  from recs r
  cross join lateral regexp_matches(coalesce(r.block_ref, ''), 'rel \\d+/(\\d+)/(\\d+)', 'g') m
  where m[1]::oid = (select oid from pg_database where datname = current_database())
    and m[2] in (select node from rels)
),
xids as (select distinct xid from touching where xid::text <> '0')
select
  coalesce(sum(record_length) filter (where mine), 0)::text as ours,
  coalesce(sum(fpi_length) filter (where mine), 0)::text as fpi,
  count(*) filter (where mine)::text as records,
  pg_wal_lsn_diff($3::pg_lsn, $2::pg_lsn)::text as server
from (
  select r.record_length, r.fpi_length,
    (r.start_lsn in (select start_lsn from touching) or r.xid in (select xid from xids)) as mine
  from recs r
) x
`,
    [schema, from, to],
  );
  const r = rows[0]!;
  return { ours: Number(r.ours), fpi: Number(r.fpi), records: Number(r.records), server: Number(r.server) };
}
