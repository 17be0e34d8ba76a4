/**
 * Whether a schema fits this build: every migration this build knows is applied, and no
 * migration of a newer build that older builds cannot run against (one whose file starts
 * `-- jobvisor:breaking`, recorded as such in the migrations table when applied). A newer
 * migration that is not breaking (a column or an index added) lets old and new workers run
 * side by side during a rolling deploy: it is reported, not refused.
 */
import { SchemaVersionError } from '../../errors.js';
import { loadMigrations } from './migrate.js';
import type { SchemaCheck, SqlClient } from '../store.js';
import type { SqlDriver } from './sql-driver.js';
import type { SqlSchema } from './sql-schema.js';

/** Checks through `client`: the caller's, inside their open transaction (on PGlite's one
 *  session nothing else could run until it ends), else a transaction of the driver's. Never
 *  fails a statement for a missing table, which would abort the caller's transaction. */
export async function checkSchemaVersion(driver: SqlDriver, schema: SqlSchema, client?: SqlClient): Promise<SchemaCheck> {
  const read = async (on: SqlClient) => {
    const table = `${schema.quoted}.migrations`;
    const { rows } = await on.query('select to_regclass($1) is not null as present', [table]);
    if (!rows[0]?.present) return [];
    // to_jsonb: a table made before the `breaking` column existed reads as not breaking.
    return (await on.query(`select to_jsonb(m) as row from ${table} m`)).rows.map((r: { row: never }) => r.row);
  };
  const applied: { version: number; name: string; breaking?: boolean }[] = client ? await read(client) : await driver.transaction(read);
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
