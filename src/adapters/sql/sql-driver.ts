/**
 * What the shared SQL store needs from a database client; `pg` (postgres-store.ts) and PGlite
 * (pglite-store.ts) each provide one.
 */
import type { SqlClient } from '../store.js';

/** One fixed SQL text with a stable name, so `pg` can prepare it once per connection. */
export interface Statement {
  readonly name: string;
  readonly text: string;
  /** Planned with sequential scans and JIT off, in a transaction of its own (see
   *  StatementOptions). */
  readonly indexScansOnly: boolean;
}

/** A connection inside an open transaction. */
export interface SqlSession extends SqlClient {
  /** Runs a script of several statements (no parameters), e.g. a migration. */
  exec(text: string): Promise<void>;
}

export interface SqlDriver {
  /** Runs one statement, outside any caller's transaction. */
  query(statement: Statement, values: readonly unknown[]): Promise<any[]>;
  /** Runs `fn` between BEGIN and COMMIT on one connection; ROLLBACK if it throws. */
  transaction<T>(fn: (session: SqlSession) => Promise<T>): Promise<T>;
}
