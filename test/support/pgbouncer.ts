/**
 * A real PgBouncer (Debian's `pgbouncer` package) in front of the test server, started by the
 * test as a child process on a free port, with its ini and user list in a temporary directory,
 * and stopped after. PgBouncer refuses to run as root: as root it runs as the OS user
 * `postgres` (`-u postgres`), the directory readable by it.
 *
 * `describePgbouncer` runs its body when both the Postgres server and the binary are there. On
 * CI (CI=true) a missing binary fails the tests (.ci/run installs it); elsewhere they are
 * skipped, loudly.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { describe, it } from 'vitest';
import { freePort } from '../../scripts/chaos/scratch-postgres.js';
import { describePostgres } from './postgres.js';

export interface Pgbouncer {
  /** The upstream URL with PgBouncer's host and port. */
  readonly url: string;
  stop(): Promise<void>;
}

export interface PgbouncerOptions {
  poolMode: 'session' | 'transaction';
  /** Server connections per database and user (`default_pool_size`). */
  poolSize: number;
}

const READY_TIMEOUT_MS = 15_000;

const binary = findBinary();

function findBinary(): string | undefined {
  try {
    return execFileSync('which', ['pgbouncer'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

export function describePgbouncer(title: string, body: (upstream: string) => void): void {
  if (binary !== undefined) {
    describePostgres(title, body);
  } else if (process.env.CI === 'true') {
    describe(title, () => {
      it('finds pgbouncer', () => {
        throw new Error('CI=true and `which pgbouncer` finds nothing: .ci/run installs it with apt-get');
      });
    });
  } else {
    console.warn(`[jobvisor tests] SKIPPED "${title}": no pgbouncer binary (apt-get install pgbouncer)`);
    describe.skip(title, () => body(''));
  }
}

export async function startPgbouncer(upstream: string, options: PgbouncerOptions): Promise<Pgbouncer> {
  if (binary === undefined) throw new Error('no pgbouncer binary');
  const target = new URL(upstream);
  const user = decodeURIComponent(target.username || 'postgres');
  const dir = await mkdtemp(join(tmpdir(), 'jobvisor-pgbouncer-'));
  const port = await freePort();
  const server = [
    `host=${target.hostname}`,
    `port=${target.port || 5432}`,
    `user=${user}`,
    ...(target.password ? [`password=${decodeURIComponent(target.password)}`] : []),
  ].join(' ');
  const ini = join(dir, 'pgbouncer.ini');
  await writeFile(
    ini,
    [
      '[databases]',
      `* = ${server}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      `pool_mode = ${options.poolMode}`,
      `default_pool_size = ${options.poolSize}`,
      'max_client_conn = 200',
      'logfile =',
      'pidfile =',
      '',
    ].join('\n'),
  );
  await writeFile(join(dir, 'userlist.txt'), `"${user}" ""\n`);
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    for (const file of [dir, ini, join(dir, 'userlist.txt')]) await chmod(file, file === dir ? 0o755 : 0o644);
  }
  const child: ChildProcess = spawn(binary, [...(asRoot ? ['-u', 'postgres'] : []), ini], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const keep = (chunk: Buffer) => (log = (log + chunk.toString()).slice(-8_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  const stop = async () => {
    if (!exited) child.kill('SIGTERM');
    await exit;
    await rm(dir, { recursive: true, force: true });
  };
  target.hostname = '127.0.0.1';
  target.port = String(port);
  const url = target.toString();
  try {
    await untilReady(url, () => (exited ? `pgbouncer exited while starting:\n${log}` : undefined));
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, stop };
}

async function untilReady(url: string, gone: () => string | undefined): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const why = gone();
    if (why) throw new Error(why);
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('select 1');
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`pgbouncer did not answer within ${READY_TIMEOUT_MS} ms: ${String(error)}`);
    } finally {
      await client.end().catch(() => {});
    }
    await sleep(50);
  }
}
