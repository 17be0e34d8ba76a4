/**
 * The package as users get it, from a copy of this working tree (no dist/, no node_modules):
 * packed with `npm pack` (whose `prepare` builds dist/) and installed into a scratch project
 * that `npm init -y` made (CommonJS, as npm makes it), and installed from a git URL into
 * another, both with the optional peer PGlite. In each: the quick start runs, every subpath
 * loads with `require()` and `import`, `npx jobvisor --help` works, and the public types check
 * with `skipLibCheck: false`. A third project installs the tarball alone, as a Postgres-only
 * user does (`--omit=dev`, no optional peers): it stays within its size budget, and the main
 * entry and `jobvisor/postgres` load and run a job on PostgreSQL without PGlite.
 *
 * Slow (npm installs; the git install also installs the dev dependencies to build): one
 * tarball and three installs shared by every test of this file, in parallel.
 * Dependencies come from npm's cache when it has them (`--prefer-offline`).
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { lstat, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pkg from '../package.json' with { type: 'json' };
import { describePostgres, dropSchema, freshSchema, testPool } from './support/postgres.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const SUBPATHS = Object.keys(pkg.exports)
  .filter((key) => key !== './package.json')
  .map((key) => `jobvisor${key.slice(1)}`);
const INSTALL = ['install', '--prefer-offline', '--no-audit', '--no-fund'];
/** The optional peer for the embedded store, at the version the tests use. */
const PGLITE = `@electric-sql/pglite@${pkg.devDependencies['@electric-sql/pglite']}`;
/** jobvisor/prometheus needs its optional peer, which an app that scrapes has installed. */
const PROM_CLIENT = `prom-client@${pkg.devDependencies['prom-client']}`;
/** What a Postgres-only install may weigh: node_modules, in bytes of file content (issue 27). */
const POSTGRES_ONLY_BUDGET = 15_000_000;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command; resolves with its exit code and output, never rejects. The environment
 *  carries no npm_* variables of an `npm test` around us: `npm_config_local_prefix` would
 *  point a nested npm at this repository. */
function run(command: string, args: readonly string[], cwd: string): Promise<Run> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_(?!config_(cache|registry|userconfig)$)/i.test(key)));
  return promisify(execFile)(command, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: typeof error.code === 'number' ? error.code : 1,
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? String(error),
    }),
  );
}

async function ok(command: string, args: readonly string[], cwd: string): Promise<string> {
  const result = await run(command, args, cwd);
  if (result.code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${result.code} in ${cwd}:\n${result.stderr}${result.stdout}`);
  return result.stdout;
}

/** The files git would commit, copied into `dir` and committed there (dist/ is ignored). */
async function copyWorkingTree(dir: string): Promise<void> {
  const listed = await ok('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--deduplicate'], ROOT);
  for (const file of listed.split('\0').filter(Boolean)) {
    // A file deleted but not yet committed is listed too.
    if (!existsSync(join(ROOT, file))) continue;
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(join(ROOT, file), join(dir, file));
  }
  const git = (...args: string[]) => ok('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid', ...args], dir);
  await git('init', '-q');
  await git('add', '-A');
  await git('commit', '-q', '--no-gpg-sign', '-m', 'snapshot');
}

/** A scratch project as `npm init -y` makes it: CommonJS. */
async function scratchProject(dir: string): Promise<void> {
  mkdirSync(dir);
  await ok('npm', ['init', '-y'], dir);
}

/** The README's quick start, on the memory store, until the job has completed. */
const QUICK_START = `
import { createSupervisor, defineQueue, PermanentJobError } from 'jobvisor';
import { memoryStore } from 'jobvisor/memory';

const store = memoryStore();
const places = defineQueue('places', {
  concurrency: 4,
  gate: 'gpu',
  maxAttempts: 3,
  alertKey: (job) => job.payload.placeId,
  handlers: {
    collect: async ({ payload }) => ({ photos: 20, placeId: payload.placeId }),
    describe: async () => {
      throw new PermanentJobError('place is gone');
    },
  },
});
const supervisor = createSupervisor({ store, queues: [places], gates: { gpu: 1 }, onDead: () => {} });
const { job } = await places.enqueue(store, 'collect', { placeId: 'p1' }, { uniqueKey: 'collect:p1' });
// Runs what is due, then resolves: no polling of the row.
await supervisor.drain();
const row = await store.getJob({ id: job.id });
console.log('QUICK START ' + JSON.stringify({ state: row.state, result: row.result }));
`;

/** require() of every subpath from CommonJS, and a job run through the required API. */
const REQUIRE_ALL = `
const loaded = {};
for (const path of ${JSON.stringify(SUBPATHS)}) loaded[path] = Object.keys(require(path)).sort();
const { createSupervisor, defineQueue } = require('jobvisor');
const { memoryStore } = require('jobvisor/memory');
const store = memoryStore();
const queue = defineQueue('cjs', { handlers: { echo: async ({ payload }) => payload } });
const supervisor = createSupervisor({ store, queues: [queue], logger: { debug() {}, info() {}, warn: console.warn, error: console.error } });
(async () => {
  const { job } = await queue.enqueue(store, 'echo', { from: 'require' });
  await supervisor.drain();
  const row = await store.getJob({ id: job.id });
  console.log(JSON.stringify({ loaded, state: row.state, result: row.result }));
})();
`;

/** Every subpath's types, used, under the strictest settings a user may have. */
const CONSUMER_TS = `
import { createSupervisor, defineQueue, type Job, type JobRecord } from 'jobvisor';
import { memoryStore } from 'jobvisor/memory';
import { postgresStore, type PostgresStoreOptions } from 'jobvisor/postgres';
import { pgliteStore, type PgliteStoreOptions } from 'jobvisor/pglite';
import { startInspector, type InspectorOptions } from 'jobvisor/inspector';
import { registerMetrics, type RegisterMetricsOptions } from 'jobvisor/prometheus';
import { createTestClock, drain, runJob } from 'jobvisor/testing';

type IsAny<T> = 0 extends 1 & T ? true : false;
// pg's types resolve: the pool option is pg.Pool, not any.
export const poolIsTyped: IsAny<PostgresStoreOptions['pool']> = false;
export const pgliteIsTyped: IsAny<PgliteStoreOptions> = false;
export const inspectorIsTyped: IsAny<InspectorOptions> = false;
export const metricsOptionsAreTyped: IsAny<RegisterMetricsOptions['registry']> = false;

const places = defineQueue('places', {
  handlers: { collect: async ({ payload }: Job<{ placeId: string }>) => ({ photos: payload.placeId.length }) },
});
const store = memoryStore();
export const supervisor = createSupervisor({ store, queues: [places] });
export const ok = places.enqueue(store, 'collect', { placeId: 'p1' });
// @ts-expect-error: the payload is checked against the handler's
export const wrong = places.enqueue(store, 'collect', { placeId: 1 });
export const stores = [postgresStore, pgliteStore, startInspector, createTestClock, drain, runJob];
export const metrics = registerMetrics({ store, supervisors: [supervisor] });
export type Row = JobRecord<{ placeId: string }>;
`;

const CONSUMER_CTS = `
import jobvisor = require('jobvisor');
import memory = require('jobvisor/memory');
export const queue = jobvisor.defineQueue('cjs', { handlers: { echo: async () => 1 } });
export const store = memory.memoryStore();
`;

/** The main entry and jobvisor/postgres without PGlite: a job enqueued and run on PostgreSQL,
 *  and what importing jobvisor/pglite says. */
const POSTGRES_ONLY = `
import { createSupervisor, defineQueue } from 'jobvisor';
import { postgresStore } from 'jobvisor/postgres';

const store = postgresStore({ connectionString: process.env.DATABASE_URL, schema: process.env.SCHEMA });
const hello = defineQueue('hello', { handlers: { greet: async ({ payload }) => 'hello, ' + payload.name } });
const quiet = { debug() {}, info() {}, warn: console.warn, error: console.error };
const supervisor = createSupervisor({ store, queues: [hello], migrate: true, logger: quiet });
await store.migrate();
const { job } = await hello.enqueue(store, 'greet', { name: 'world' });
await supervisor.drain();
const row = await store.getJob({ id: job.id });
await store.close();
const pglite = await import('jobvisor/pglite').then(() => 'loaded', (error) => error.message);
console.log(JSON.stringify({ state: row.state, result: row.result, pglite }));
`;

/** For `jobvisor worker`: the queue POSTGRES_ONLY enqueued to. */
const WORKER_MODULE = `
import { defineQueue } from 'jobvisor';
export const queues = [defineQueue('hello', { handlers: { greet: async () => null } })];
`;

/** Bytes of file content under `dir`, as `du --apparent-size` counts them. */
async function contentBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await contentBytes(path);
    else if (entry.isFile()) total += (await lstat(path)).size;
  }
  return total;
}

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2023'],
    strict: true,
    skipLibCheck: false,
    noEmit: true,
  },
  files: ['consumer.mts', 'consumer.cts'],
};

// Each test starts a Node process or two, tsc a longer one: on a busy machine that can pass
// the default timeout.
describe('the package, packed and installed as users install it', { timeout: 120_000 }, () => {
  let root: string;
  let packed: { files: { path: string }[] };
  /** Projects with the package and PGlite installed: from the tarball, and from a git URL. */
  const projects = { tarball: '', git: '' };
  /** A project with the tarball alone, production dependencies only. */
  let postgresOnly: string;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'jobvisor-package-'));
    const source = join(root, 'source');
    await copyWorkingTree(source);
    projects.tarball = join(root, 'from-tarball');
    projects.git = join(root, 'from-git');
    postgresOnly = join(root, 'postgres-only');
    await Promise.all([scratchProject(projects.tarball), scratchProject(projects.git), scratchProject(postgresOnly)]);

    const fromGit = ok('npm', [...INSTALL, `git+file://${source}`, PGLITE, PROM_CLIENT], projects.git);
    const fromTarball = (async () => {
      // The build needs the dev dependencies; a symlink after the commit, so that the git
      // install above clones none.
      symlinkSync(join(ROOT, 'node_modules'), join(source, 'node_modules'));
      const [result] = JSON.parse(await ok('npm', ['pack', '--json', '--pack-destination', root], source)) as [
        { filename: string; files: { path: string }[] },
      ];
      packed = result;
      const tarball = join(root, result.filename);
      await Promise.all([
        ok('npm', [...INSTALL, tarball, PGLITE, PROM_CLIENT], projects.tarball),
        ok('npm', [...INSTALL, '--omit=dev', tarball], postgresOnly),
      ]);
      writeFileSync(join(postgresOnly, 'postgres-only.mjs'), POSTGRES_ONLY);
      writeFileSync(join(postgresOnly, 'worker.mjs'), WORKER_MODULE);
    })();
    await Promise.all([fromGit, fromTarball]);
    for (const dir of Object.values(projects)) {
      writeFileSync(join(dir, 'quick-start.mjs'), QUICK_START);
      writeFileSync(join(dir, 'require-all.js'), REQUIRE_ALL);
    }
  }, 300_000);

  afterAll(() => rm(root, { recursive: true, force: true }));

  it('the tarball holds the built code, its types, and what it reads at run time', () => {
    const files = new Set(packed.files.map((f) => f.path));
    const targets = Object.values(pkg.exports).flatMap((entry) => (typeof entry === 'string' ? [entry] : Object.values(entry)));
    for (const target of [...targets, pkg.bin.jobvisor]) expect(files, target).toContain(target.replace(/^\.\//, ''));
    expect(files).toContain('dist/adapters/sql/migrations/0001-jobs.sql');
    expect([...files].some((f) => f.startsWith('dist/inspector/public/'))).toBe(true);
    expect([...files].filter((f) => /^(test|node_modules|bench|scripts)\//.test(f))).toEqual([]);
  });

  it('the tarball holds the license, and the installed package.json says where the project lives', async () => {
    expect(packed.files.map((f) => f.path)).toContain('LICENSE');
    const installed = join(projects.tarball, 'node_modules/jobvisor');
    expect(await readFile(join(installed, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) 2026 the jobvisor authors\n/);
    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({
      license: 'MIT',
      repository: { type: 'git', url: 'git+https://github.com/jobvisor/jobvisor.git' },
      homepage: 'https://github.com/jobvisor/jobvisor#readme',
      bugs: { url: 'https://github.com/jobvisor/jobvisor/issues' },
    });
  });

  describe.each(['tarball', 'git'] as const)('installed from the %s', (from) => {
    it('runs the quick start', async () => {
      const out = await ok('node', ['quick-start.mjs'], projects[from]);
      expect(out).toContain('QUICK START {"state":"completed","result":{"photos":20,"placeId":"p1"}}');
    });

    it('every subpath loads with require() in a CommonJS project, and runs a job', async () => {
      const out = JSON.parse((await ok('node', ['require-all.js'], projects[from])).trim().split('\n').at(-1)!);
      expect(Object.keys(out.loaded).sort()).toEqual([...SUBPATHS].sort());
      expect(out.loaded.jobvisor).toContain('createSupervisor');
      expect(out.loaded['jobvisor/postgres']).toContain('postgresStore');
      expect(out).toMatchObject({ state: 'completed', result: { from: 'require' } });
    });

    it('npx jobvisor --help', async () => {
      const { code, stdout } = await run('npx', ['--no-install', 'jobvisor', '--help'], projects[from]);
      expect(code).toBe(0);
      expect(stdout).toMatch(/^Usage: jobvisor /);
    });
  });

  describe('installed alone, for PostgreSQL only', () => {
    it('has neither optional peer, and weighs at most 15 MB', async () => {
      expect(existsSync(join(postgresOnly, 'node_modules/@electric-sql/pglite'))).toBe(false);
      expect(existsSync(join(postgresOnly, 'node_modules/pino-pretty'))).toBe(false);
      expect(await contentBytes(join(postgresOnly, 'node_modules'))).toBeLessThanOrEqual(POSTGRES_ONLY_BUDGET);
    });

    describePostgres('against the test server', (url) => {
      it('the main entry and jobvisor/postgres load and run a job; jobvisor/pglite names the missing package', async () => {
        const schema = freshSchema('packaging');
        const pool = testPool(url);
        try {
          const result = await promisify(execFile)(process.execPath, ['postgres-only.mjs'], {
            cwd: postgresOnly,
            env: { ...process.env, DATABASE_URL: url, SCHEMA: schema },
          });
          const out = JSON.parse(result.stdout.trim().split('\n').at(-1)!);
          expect(out).toMatchObject({ state: 'completed', result: 'hello, world' });
          expect(out.pglite).toContain("Cannot find package '@electric-sql/pglite'");

          // Without pino-pretty, the CLI worker asked for readable lines writes JSON lines.
          const worker = await run(
            'npx',
            ['--no-install', 'jobvisor', 'worker', 'worker.mjs', '--drain', '--log-format', 'pretty', '--database-url', url, '--schema', schema],
            postgresOnly,
          );
          expect(worker.code, worker.stderr).toBe(0);
          expect(worker.stderr).toContain('readable log lines needs pino-pretty, which is not installed: npm install pino-pretty; writing JSON lines');
          for (const line of worker.stdout.split('\n').filter(Boolean)) expect(() => JSON.parse(line), line).not.toThrow();
        } finally {
          await dropSchema(pool, schema);
          await pool.end();
        }
      });
    });

    it('the demo (the embedded database) says which package it needs', async () => {
      const { code, stderr } = await run('npx', ['--no-install', 'jobvisor', 'demo'], postgresOnly);
      expect(code).toBe(4);
      expect(stderr).toContain('needs @electric-sql/pglite, which is not installed: npm install @electric-sql/pglite');
      expect(existsSync(join(postgresOnly, '.jobvisor'))).toBe(false);
    });
  });

  it('the public types check with skipLibCheck: false, from ESM and CommonJS', async () => {
    const dir = projects.tarball;
    writeFileSync(join(dir, 'consumer.mts'), CONSUMER_TS);
    writeFileSync(join(dir, 'consumer.cts'), CONSUMER_CTS);
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    const result = await run(process.execPath, [TSC, '-p', 'tsconfig.json'], dir);
    expect(result.stdout + result.stderr).toBe('');
    expect(result.code).toBe(0);
  });
});
