/** What every SQL operation runs with: the driver, the schema's statements and the clock. */
import type { Clock } from '../../types.js';
import type { ClockSteps } from '../clock-steps.js';
import { checkSchemaVersion } from './schema-version.js';
import type { SchemaCheck, SqlClient } from '../store.js';
import type { SqlDriver, SqlSession, Statement } from './sql-driver.js';
import type { SqlSchema } from './sql-schema.js';
import { buildStatement, defineStatement } from './statement.js';
import type { StatementDefinition } from './statement.js';

/** Moves every held lease by a step of the store's clock (clock-steps.ts): `$1` ms. Not a
 *  write of a job's outcome: no lease token, state or history changes. */
const SHIFT_LEASES = defineStatement(
  'shift_leases',
  (s) => `
update ${s.quoted}.jobs set lease_expires_at = lease_expires_at + $1::float8 * interval '1 millisecond'
where state = 'running' and lease_expires_at is not null
`,
);

export class SqlContext {
  readonly driver: SqlDriver;
  readonly schema: SqlSchema;
  readonly #clock: Clock | undefined;
  /** The embedded store's: steps of its clock to move held leases by. */
  readonly #steps: ClockSteps | undefined;
  readonly #statements = new Map<StatementDefinition, Statement>();
  /** The schema check's answer once it passed; until then every statement waits for it. */
  #schemaChecked: SchemaCheck | undefined;
  #schemaCheck: Promise<SchemaCheck> | undefined;

  constructor(driver: SqlDriver, schema: SqlSchema, clock: Clock | undefined, steps?: ClockSteps) {
    this.driver = driver;
    this.schema = schema;
    this.#clock = clock;
    this.#steps = steps;
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

  /** Checks the schema's migrations against this build's (schema-version.ts), once per store:
   *  a passed check is kept, a failed one is made again by the next call (someone may have
   *  migrated meanwhile). */
  checkSchema(client?: SqlClient): Promise<SchemaCheck> {
    if (this.#schemaChecked) return Promise.resolve(this.#schemaChecked);
    // In the caller's transaction, its own check: a shared one might be waiting for a session
    // that this transaction holds (PGlite has one).
    if (client) return checkSchemaVersion(this.driver, this.schema, client).then((check) => (this.#schemaChecked = check));
    this.#schemaCheck ??= checkSchemaVersion(this.driver, this.schema).then(
      (check) => (this.#schemaChecked = check),
      (error: unknown) => {
        this.#schemaCheck = undefined;
        throw error;
      },
    );
    return this.#schemaCheck;
  }

  /** The schema changed (this process migrated it): the next call checks it again. */
  forgetSchemaCheck(): void {
    this.#schemaChecked = undefined;
    this.#schemaCheck = undefined;
  }

  /** Runs one statement, on the caller's client (in their transaction) when given; else,
   *  after a step of the clock, moves held leases by it first (the one session of PGlite runs
   *  the two in that order). */
  async run<Row>(definition: StatementDefinition, values: readonly unknown[], client?: SqlClient): Promise<Row[]> {
    if (!this.#schemaChecked) await this.checkSchema(client);
    if (client) return (await client.query(this.statement(definition).text, [...values])).rows;
    const step = this.#steps?.take() ?? 0;
    if (step !== 0) {
      try {
        await this.driver.query(this.statement(SHIFT_LEASES), [step]);
      } catch (error) {
        this.#steps!.untake(step);
        throw error;
      }
    }
    return this.driver.query(this.statement(definition), values);
  }

  /** The driver's transaction, once the schema is checked. */
  async transaction<T>(fn: (session: SqlSession) => Promise<T>): Promise<T> {
    if (!this.#schemaChecked) await this.checkSchema();
    return this.driver.transaction(fn);
  }
}
