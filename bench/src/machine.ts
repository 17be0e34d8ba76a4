import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  os: string;
  node: string;
  postgres: string;
  postgresSettings: Record<string, string>;
}

export interface Versions {
  jobvisor: { version: string; commit: string; dirtySrcFiles: string[] };
  'graphile-worker': string;
  'pg-boss': string;
  pg: string;
}

export async function machineInfo(connectionString: string): Promise<MachineInfo> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const version = (await client.query('show server_version')).rows[0].server_version as string;
    const names = ['shared_buffers', 'synchronous_commit', 'fsync', 'wal_level', 'max_connections', 'max_wal_size'];
    const { rows } = await client.query('select name, setting, unit from pg_settings where name = any($1)', [names]);
    const postgresSettings = Object.fromEntries(
      rows.map((r: { name: string; setting: string; unit: string | null }) => [r.name, r.unit ? `${r.setting} × ${r.unit}` : r.setting]),
    );
    let os: string = process.platform;
    try {
      os = /PRETTY_NAME="([^"]+)"/.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? os;
    } catch {}
    return {
      cpuModel: cpus()[0]?.model ?? 'unknown',
      cores: cpus().length,
      memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
      os,
      node: process.version,
      postgres: version,
      postgresSettings,
    };
  } finally {
    await client.end();
  }
}

export function versions(benchDir: string, jobvisorRoot: string): Versions {
  const pkg = (path: string) => JSON.parse(readFileSync(path, 'utf8')).version as string;
  const git = (...args: string[]) => {
    try {
      return execFileSync('git', ['-C', jobvisorRoot, ...args], { encoding: 'utf8' }).trimEnd();
    } catch {
      return '';
    }
  };
  // The engine is under concurrent change: record which src/ files differ from the commit.
  const dirtySrcFiles = git('status', '--porcelain', '--', 'src')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.slice(3));
  return {
    jobvisor: { version: pkg(join(jobvisorRoot, 'package.json')), commit: git('rev-parse', '--short', 'HEAD').trim(), dirtySrcFiles },
    'graphile-worker': pkg(join(benchDir, 'node_modules/graphile-worker/package.json')),
    'pg-boss': pkg(join(benchDir, 'node_modules/pg-boss/package.json')),
    pg: pkg(join(benchDir, 'node_modules/pg/package.json')),
  };
}

/** Share of all cores busy over `ms`, from /proc/stat (Linux). NaN elsewhere. */
export async function cpuBusy(ms = 500): Promise<number> {
  const read = () => {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const fields = line.trim().split(/\s+/).slice(1).map(Number);
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
    const total = fields.reduce((a, b) => a + b, 0);
    return { idle, total };
  };
  try {
    const a = read();
    await sleep(ms);
    const b = read();
    return b.total === a.total ? 0 : 1 - (b.idle - a.idle) / (b.total - a.total);
  } catch {
    return Number.NaN;
  }
}

/** Waits (up to maxS seconds) until other processes keep less than 25% of the machine busy;
 *  returns the last busy share seen, which the results keep beside each run. */
export async function waitForQuiet(maxS: number): Promise<{ busy: number; waitedS: number; load1: number }> {
  const start = performance.now();
  let busy = await cpuBusy();
  while (busy > 0.25 && performance.now() - start < maxS * 1000) {
    await sleep(1_000);
    busy = await cpuBusy();
  }
  return { busy, waitedS: (performance.now() - start) / 1000, load1: loadavg()[0] ?? Number.NaN };
}
