/**
 * The database's own limit on this machine: pgbench with a one-row UPDATE per transaction,
 * in a scratch database that is dropped afterwards.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

export const PGBENCH_SCRIPT = `\\set aid random(1, 100000 * :scale)
UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;
`;

export interface PgbenchRun {
  tps: number;
  latencyMs: number;
}

export interface PgbenchSetup {
  connectionString: string;
  clients: number;
  seconds: number;
}

export async function withPgbenchDatabase<T>(connectionString: string, body: (url: string) => Promise<T>): Promise<T> {
  const name = `jobvisor_bench_pgbench_${process.pid}`;
  const admin = new pg.Client({ connectionString });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name}`);
    await admin.query(`create database ${name}`);
    const url = new URL(connectionString);
    url.pathname = `/${name}`;
    await run('pgbench', ['-i', '-q', '-s', '1', url.href], { maxBuffer: 1 << 24 });
    return await body(url.href);
  } finally {
    await admin.query(`drop database if exists ${name}`).catch(() => {});
    await admin.end();
  }
}

export async function pgbenchOnce(url: string, setup: PgbenchSetup): Promise<PgbenchRun> {
  const dir = await mkdtemp(join(tmpdir(), 'jobvisor-pgbench-'));
  try {
    const script = join(dir, 'update-one-row.sql');
    await writeFile(script, PGBENCH_SCRIPT);
    const args = ['-n', '-M', 'prepared', '-c', String(setup.clients), '-j', '2', '-T', String(setup.seconds), '-f', script, url];
    const { stdout } = await run('pgbench', args, { maxBuffer: 1 << 24 });
    const tps = /tps = ([\d.]+)/.exec(stdout)?.[1];
    const latency = /latency average = ([\d.]+) ms/.exec(stdout)?.[1];
    if (!tps) throw new Error(`pgbench printed no tps:\n${stdout}`);
    return { tps: Number(tps), latencyMs: Number(latency ?? Number.NaN) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
