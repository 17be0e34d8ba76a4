/**
 * Numbered `.sql` migrations (migrations/0001-jobs.sql …), applied in order inside one
 * transaction that holds an advisory lock for the schema: when several processes start at
 * once, one applies and the others wait, then find nothing left to do.
 *
 * A migration that alters a table waits for every open transaction that touched it, and
 * PostgreSQL queues every later statement on that table behind the waiting one: one idle
 * transaction left open would stop every worker and enqueue for as long as it stays open. So
 * each statement of a migration waits at most `lockTimeoutMs` for a lock; then the whole
 * transaction rolls back (nothing applied), the queue behind it drains, and the migration is
 * tried again after `pauseMs`, until `retryForMs` have passed (MigrationLockError).
 *
 * The files are read at run time next to this module; `npm run build` copies them into
 * dist/ beside the compiled code.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { MigrationLockError } from '../../errors.js';
import type { SqlDriver } from './sql-driver.js';
import type { SqlSchema } from './sql-schema.js';

interface Migration {
  version: number;
  name: string;
  /** With `:JOBVISOR_SCHEMA` where the quoted schema name goes, and `:JOBVISOR_CHANNEL`
   *  where its LISTEN/NOTIFY channel goes, as a string literal. */
  text: string;
  /** Older builds cannot run against a schema with it applied: its file starts with the
   *  line `-- jobvisor:breaking` (schema-version.ts). */
  breaking: boolean;
}

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
const MIGRATION_FILE = /^(\d{4})-[a-z0-9-]+\.sql$/;
const SCHEMA_PLACEHOLDER = /:JOBVISOR_SCHEMA\b/g;
const CHANNEL_PLACEHOLDER = /:JOBVISOR_CHANNEL\b/g;
const BREAKING_MARK = /^-- jobvisor:breaking\s*$/;

let loaded: Promise<Migration[]> | undefined;

/** Every migration this version of jobvisor knows, oldest first. */
export function loadMigrations(): Promise<Migration[]> {
  loaded ??= (async () => {
    const files = (await readdir(MIGRATIONS_DIR)).filter((file) => MIGRATION_FILE.test(file)).sort();
    return Promise.all(
      files.map(async (file) => {
        const text = await readFile(new URL(file, MIGRATIONS_DIR), 'utf8');
        return { version: Number(file.slice(0, 4)), name: file.slice(0, -'.sql'.length), text, breaking: isBreakingMigration(text) };
      }),
    );
  })();
  return loaded;
}

/** Whether a migration's text marks it breaking: its first line is `-- jobvisor:breaking`. */
export function isBreakingMigration(text: string): boolean {
  return BREAKING_MARK.test(text.split('\n', 1)[0]!);
}

export interface MigrateTiming {
  lockTimeoutMs: number;
  retryForMs: number;
  pauseMs: number;
}

/** A second of the workers' statements queued at most, then a second for them to drain. */
export const MIGRATE_TIMING: MigrateTiming = { lockTimeoutMs: 1_000, retryForMs: 60_000, pauseMs: 1_000 };

const LOCK_NOT_AVAILABLE = '55P03';

/** Applies the migrations the schema lacks; returns the versions applied by this call. */
export async function migrate(driver: SqlDriver, schema: SqlSchema, timing: MigrateTiming = MIGRATE_TIMING): Promise<number[]> {
  const started = Date.now();
  for (let tries = 1; ; tries++) {
    try {
      return await migrateOnce(driver, schema, timing.lockTimeoutMs);
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code !== LOCK_NOT_AVAILABLE) throw error;
      const waited = Date.now() - started;
      if (waited + timing.pauseMs >= timing.retryForMs) throw new MigrationLockError(schema.name, tries, waited, timing.lockTimeoutMs, error);
      await new Promise((resolve) => setTimeout(resolve, timing.pauseMs));
    }
  }
}

async function migrateOnce(driver: SqlDriver, schema: SqlSchema, lockTimeoutMs: number): Promise<number[]> {
  const migrations = await loadMigrations();
  const table = `${schema.quoted}.migrations`;
  return driver.transaction(async (session) => {
    // Taken before CREATE SCHEMA IF NOT EXISTS, which itself races (duplicate key) when two
    // sessions run it at once. Released at COMMIT or ROLLBACK. Waited for without a limit:
    // the other session is migrating, and what it holds is its own business.
    await session.query('select pg_advisory_xact_lock($1::bigint)', [lockKey(schema)]);
    await session.exec(`set local lock_timeout = ${Math.max(1, Math.round(lockTimeoutMs))}`);
    await session.exec(
      `create schema if not exists ${schema.quoted};
       create table if not exists ${table} (
         version integer primary key,
         name text not null,
         applied_at timestamptz not null default now()
       );
       alter table ${table} add column if not exists breaking boolean not null default false;`,
    );
    const { rows } = await session.query(`select version from ${table}`);
    const done = new Set(rows.map((row: { version: number }) => row.version));
    const applied: number[] = [];
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      // The channel is letters, digits, "_" and ":" (sql-schema.ts): nothing to escape.
      await session.exec(migration.text.replace(SCHEMA_PLACEHOLDER, schema.quoted).replace(CHANNEL_PLACEHOLDER, `'${schema.channel}'`));
      await session.query(`insert into ${table} (version, name, breaking) values ($1, $2, $3)`, [
        migration.version,
        migration.name,
        migration.breaking,
      ]);
      applied.push(migration.version);
    }
    return applied;
  });
}

/** A 64-bit advisory lock key per schema, so different schemas migrate independently. */
function lockKey(schema: SqlSchema): string {
  return createHash('sha256').update(`jobvisor.migrate:${schema.name}`).digest().readBigInt64BE(0).toString();
}
