/**
 * For test files that need the PostgreSQL server found by postgres-server.ts (the global
 * setup): `describePostgres` runs its body against it, fails on CI when there is none, and
 * otherwise skips it loudly. Each file works in schemas of its own (random suffix), dropped
 * afterwards, so files run in parallel on one database.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, inject, it } from 'vitest';

export function describePostgres(title: string, body: (url: string) => void): void {
  const target = inject('postgres');
  if ('url' in target) {
    describe(title, () => body(target.url));
  } else if ('error' in target) {
    describe(title, () => {
      it('reaches the Postgres server', () => {
        throw new Error(target.error);
      });
    });
  } else {
    console.warn(`[jobvisor tests] SKIPPED "${title}": ${target.skipped}`);
    describe.skip(title, () => body(''));
  }
}

/** A schema name no other test file uses: `prefix_<16 hex>`. */
export function freshSchema(prefix: string): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}

/** A pool whose idle connections may be terminated by a test without crashing the run. */
export function testPool(url: string, options: pg.PoolConfig = {}): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, ...options });
  pool.on('error', () => {});
  return pool;
}

export async function dropSchema(pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`drop schema if exists "${schema}" cascade`);
}
