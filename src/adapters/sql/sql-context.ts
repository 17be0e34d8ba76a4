/** What every SQL operation runs with: the driver, the schema's statements and the clock. */
import type { Clock } from '../../types.js';
import type { SqlDriver, Statement } from './sql-driver.js';
import type { SqlSchema } from './sql-schema.js';
import { buildStatement } from './statement.js';
import type { StatementDefinition } from './statement.js';

export class SqlContext {
  readonly driver: SqlDriver;
  readonly schema: SqlSchema;
  readonly #clock: Clock | undefined;
  readonly #statements = new Map<StatementDefinition, Statement>();

  constructor(driver: SqlDriver, schema: SqlSchema, clock: Clock | undefined) {
    this.driver = driver;
    this.schema = schema;
    this.#clock = clock;
  }

  /** `$1` of every statement that writes: the injected clock's time, or null so that SQL
   *  takes the database's `now()` (one clock for every process sharing the database). */
  now(): string | null {
    return this.#clock ? new Date(this.#clock.now()).toISOString() : null;
  }

  statement(definition: StatementDefinition): Statement {
    let statement = this.#statements.get(definition);
    if (!statement) {
      statement = buildStatement(definition, this.schema);
      this.#statements.set(definition, statement);
    }
    return statement;
  }

  run<Row>(definition: StatementDefinition, values: readonly unknown[]): Promise<Row[]> {
    return this.driver.query(this.statement(definition), values);
  }
}
