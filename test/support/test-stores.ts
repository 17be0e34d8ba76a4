/**
 * The stores the model, property and conformance tests run against, kept as data (as Kysely's
 * tests keep their DIALECTS): a test file calls `describeEachStore`, which repeats its body
 * once per store. JOBVISOR_TEST_STORES picks which (a comma-separated list of memory, pglite,
 * postgres; all three when unset or empty), e.g. JOBVISOR_TEST_STORES=memory,pglite.
 *
 * Each store kind sets up one database for the describe block that uses it: nothing for the
 * memory store; one PGlite instance (starting one costs seconds and hundreds of MB); a schema
 * of its own on the test server (test/support/postgres.ts), dropped afterwards. `create`
 * makes a store on it, already migrated; `reset` empties its tables.
 */
import { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import { afterAll, beforeAll, describe } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { pgliteStore } from '../../src/adapters/pglite/index.js';
import { postgresStore } from '../../src/adapters/postgres/index.js';
import type { JobStore, SqlClient, StoreCapabilities } from '../../src/adapters/store.js';
import type { Clock } from '../../src/types.js';
import { describePostgres, dropSchema, freshSchema, testPool } from './postgres.js';

export const TEST_STORE_NAMES = ['memory', 'pglite', 'postgres'] as const;
export type TestStoreName = (typeof TEST_STORE_NAMES)[number];

export interface TestStoreOptions {
  /** The SQL stores' debounce of wake-ups; their default when absent. */
  notifyDebounceMs?: number;
}

export interface TestStore {
  readonly name: TestStoreName;
  /** What the store must report as its capabilities. */
  readonly capabilities: StoreCapabilities;
  /** A store on this block's database, migrated, reading "now" from `clock`. Closing it
   *  leaves the database open. */
  create(clock: Clock, options?: TestStoreOptions): Promise<JobStore>;
  /** Empties every table of the database (the memory store has nothing shared to empty). */
  reset(): Promise<void>;
  /** SQL stores: runs `fn` with a client inside an open transaction, then commits or rolls
   *  back. Absent for the memory store, which cannot join one. */
  inTransaction?(end: 'commit' | 'rollback', fn: (client: SqlClient) => Promise<void>): Promise<void>;
}

/** The stores JOBVISOR_TEST_STORES selects, in the order of TEST_STORE_NAMES. */
export function selectedStores(value = process.env.JOBVISOR_TEST_STORES): TestStoreName[] {
  const asked = (value ?? '').split(',').map((name) => name.trim()).filter((name) => name !== '');
  if (asked.length === 0) return [...TEST_STORE_NAMES];
  const unknown = asked.filter((name) => !(TEST_STORE_NAMES as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw new Error(`JOBVISOR_TEST_STORES=${value}: unknown store ${unknown.join(', ')} (known: ${TEST_STORE_NAMES.join(', ')})`);
  }
  return TEST_STORE_NAMES.filter((name) => asked.includes(name));
}

/** `body` once per selected store, each in a describe block named `${title} (${name})`. */
export function describeEachStore(title: string, body: (store: TestStore) => void): void {
  for (const name of selectedStores()) {
    const named = `${title} (${name})`;
    if (name === 'postgres') describePostgres(named, (url) => body(postgresTestStore(url)));
    else describe(named, () => body(name === 'memory' ? memoryTestStore() : pgliteTestStore()));
  }
}

function memoryTestStore(): TestStore {
  return {
    name: 'memory',
    capabilities: { notifications: true, transactionalEnqueue: false },
    create: async (clock) => memoryStore({ clock }),
    reset: async () => {},
  };
}

const PGLITE_SCHEMA = 'jv_test';

function pgliteTestStore(): TestStore {
  let db: PGlite;
  beforeAll(async () => {
    db = await PGlite.create();
    await pgliteStore({ db, schema: PGLITE_SCHEMA }).migrate();
  });
  afterAll(async () => {
    await db.close();
  });
  const reset = emptyTables(PGLITE_SCHEMA, (text) => db.query(text));
  return {
    name: 'pglite',
    capabilities: { notifications: true, transactionalEnqueue: true },
    create: async (clock, options = {}) => pgliteStore({ db, schema: PGLITE_SCHEMA, clock, ...options }),
    reset,
    inTransaction: async (end, fn) => {
      await db.transaction(async (tx) => {
        await fn(tx);
        if (end === 'rollback') await tx.rollback();
      });
    },
  };
}

function postgresTestStore(url: string): TestStore {
  const schema = freshSchema('jv_stores');
  let pool: pg.Pool;
  beforeAll(async () => {
    pool = testPool(url);
    await postgresStore({ pool, schema }).migrate();
  });
  afterAll(async () => {
    await dropSchema(pool, schema);
    await pool.end();
  });
  return {
    name: 'postgres',
    capabilities: { notifications: true, transactionalEnqueue: true },
    create: async (clock, options = {}) => postgresStore({ pool, schema, clock, ...options }),
    reset: emptyTables(schema, (text) => pool.query(text)),
    inTransaction: async (end, fn) => {
      const client = await pool.connect();
      try {
        await client.query('begin');
        await fn(client);
        await client.query(end);
      } catch (error) {
        await client.query('rollback');
        throw error;
      } finally {
        client.release();
      }
    },
  };
}

/** Truncates every table of the schema but the migrations' own: whatever tables later
 *  migrations add. The list is read once, after the migrations ran. */
function emptyTables(schema: string, query: (text: string) => Promise<{ rows: unknown[] }>): () => Promise<void> {
  let truncate: string | undefined;
  return async () => {
    if (truncate === undefined) {
      const { rows } = await query(`select tablename from pg_tables where schemaname = '${schema}' and tablename <> 'migrations' order by tablename`);
      truncate = `truncate ${rows.map((row) => `"${schema}"."${(row as { tablename: string }).tablename}"`).join(', ')}`;
    }
    await query(truncate);
  };
}
