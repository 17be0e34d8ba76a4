/**
 * Statements are defined once per operation as a function of the schema, and built and named
 * once per store. The name carries a hash of the text: `pg` prepares a named statement once
 * per connection and refuses the same name with another text, which two stores with
 * different schemas on one pool would otherwise do.
 */
import { createHash } from 'node:crypto';
import type { Statement } from './sql-driver.js';
import type { SqlSchema } from './sql-schema.js';

export interface StatementDefinition {
  /** Short, snake_case: part of the prepared statement's name. */
  readonly key: string;
  readonly build: (schema: SqlSchema) => string;
  readonly prepare: boolean;
}

export interface StatementOptions {
  /**
   * Default true: prepared once per connection, whose plan the server may then keep for
   * every later call. false: planned afresh on every call, for a statement whose best plan
   * depends on how big the jobs table is now. A plan kept from when the table was small
   * (a scan of the whole table is cheapest then) stays after a burst of enqueues, until
   * autovacuum's next ANALYZE, and scans the whole backlog on every call meanwhile.
   */
  prepare?: boolean;
}

export function defineStatement(
  key: string,
  build: (schema: SqlSchema) => string,
  options: StatementOptions = {},
): StatementDefinition {
  return { key, build, prepare: options.prepare ?? true };
}

export function buildStatement(definition: StatementDefinition, schema: SqlSchema): Statement {
  const text = definition.build(schema);
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 12);
  return { name: `jobvisor_${definition.key}_${hash}`, text, prepare: definition.prepare };
}

/** "Now" in every writing statement: `$1` when a clock is injected (tests), else the database's. */
export const NOW = 'coalesce($1::timestamptz, now())';
