/**
 * Whether a schema fits this build: every migration this build knows is applied, and no
 * migration of a newer build that older builds cannot run against (one whose file starts
 * `-- jobvisor:breaking`, recorded as such in the migrations table when applied). A newer
 * migration that is not breaking (a column or an index added) lets old and new workers run
 * side by side during a rolling deploy: it is reported, not refused.
 */
import { SchemaVersionError } from '../../errors.js';
import { loadMigrations } from './migrate.js';
import type { SchemaCheck } from '../store.js';
import type { SqlDriver } from './sql-driver.js';
import type { SqlSchema } from './sql-schema.js';

/** PostgreSQL's undefined_table and invalid_schema_name. */
const NOT_THERE = new Set(['42P01', '3F000']);

export async function checkSchemaVersion(driver: SqlDriver, schema: SqlSchema): Promise<SchemaCheck> {
  let applied: { version: number; name: string; breaking?: boolean }[];
  try {
    // to_jsonb: a table made before the `breaking` column existed reads as not breaking.
    applied = await driver.transaction(async (session) =>
      (await session.query(`select to_jsonb(m) as row from ${schema.quoted}.migrations m`)).rows.map((r: { row: never }) => r.row),
    );
  } catch (error) {
    if (NOT_THERE.has((error as { code?: unknown }).code as string)) throw new SchemaVersionError(schema.name, 'unmigrated');
    throw error;
  }
  if (applied.length === 0) throw new SchemaVersionError(schema.name, 'unmigrated');
  const known = await loadMigrations();
  const done = new Set(applied.map((m) => m.version));
  const missing = known.filter((m) => !done.has(m.version)).map((m) => m.name);
  const knownVersions = new Set(known.map((m) => m.version));
  const newer = applied.filter((m) => !knownVersions.has(m.version)).sort((a, b) => a.version - b.version);
  const breaking = newer.filter((m) => m.breaking === true).map((m) => m.name);
  if (breaking.length > 0) throw new SchemaVersionError(schema.name, 'newer', { breaking });
  if (missing.length > 0) throw new SchemaVersionError(schema.name, 'outdated', { missing });
  return { newer: newer.map((m) => m.name) };
}
