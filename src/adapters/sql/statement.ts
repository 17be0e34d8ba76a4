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
  readonly indexScansOnly: boolean;
}

export interface StatementOptions {
  /**
   * Default false. true: the statement runs in a transaction of its own with sequential
   * scans and JIT off, so the plan the server makes, and keeps for the connection's later
   * calls, reads the tables through their indexes whatever their size when it was made.
   * For a statement that must stay cheap as the backlog grows: a plan made while the table
   * was small (when a scan of the whole table is cheapest) would otherwise be kept after a
   * burst of enqueues, until autovacuum's next ANALYZE, and scan the backlog on every call.
   */
  indexScansOnly?: boolean;
}

export function defineStatement(
  key: string,
  build: (schema: SqlSchema) => string,
  options: StatementOptions = {},
): StatementDefinition {
  return { key, build, indexScansOnly: options.indexScansOnly ?? false };
}

export function buildStatement(definition: StatementDefinition, schema: SqlSchema): Statement {
  const text = definition.build(schema);
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 12);
  return { name: `jobvisor_${definition.key}_${hash}`, text, indexScansOnly: definition.indexScansOnly };
}

/** "Now" in every writing statement: `$1` when a clock is injected (tests), else the database's. */
export const NOW = 'coalesce($1::timestamptz, now())';
