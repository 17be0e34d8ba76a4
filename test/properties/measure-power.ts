/**
 * Measures how often one run of the cluster property catches a store that ignores the lease
 * token (broken-store.ts), on the memory store: `npx tsx test/properties/measure-power.ts 300`,
 * or on PostgreSQL (a schema of its own, dropped afterwards):
 * `npx tsx test/properties/measure-power.ts 100 postgres` (JOBVISOR_TEST_DATABASE_URL, default
 * the local test database).
 * Prints the rate for the targeted generator the tests use (`actions`: random steps around a
 * zombie chain) and for random steps alone, and what that makes the chance of missing the
 * bug in one CI run of each store. The figures go to test/README.md.
 */
import fc from 'fast-check';
import pg from 'pg';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { postgresStore } from '../../src/adapters/postgres/index.js';
import type { JobStore } from '../../src/adapters/store.js';
import { ignoringLeaseTokens } from './broken-store.js';
import type { Action, StoreFactory } from './cluster.js';
import { actions, checkCluster, PROPERTY_RUNS, steps } from './cluster-property.js';

const n = Number(process.argv[2] ?? 200);
const onPostgres = process.argv[3] === 'postgres';
const schema = `jv_power_${process.pid}`;
const pool = onPostgres
  ? new pg.Pool({ connectionString: process.env.JOBVISOR_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test', max: 10 })
  : undefined;
if (pool) await postgresStore({ pool, schema }).migrate();
/** Every table but the migrations', emptied before each run (as test-stores.ts does). */
const tables = pool
  ? (await pool.query<{ t: string }>(`select format('%I.%I', schemaname, tablename) as t from pg_tables where schemaname = $1 and tablename <> 'migrations'`, [schema])).rows.map((r) => r.t)
  : [];

const broken: StoreFactory = async (clock) => {
  let store: JobStore = memoryStore({ clock });
  if (pool) {
    await pool.query(`truncate ${tables.join(', ')}`);
    store = postgresStore({ pool, schema, clock, notifyDebounceMs: 0 });
  }
  return ignoringLeaseTokens(store);
};

async function rate(name: string, arbitrary: fc.Arbitrary<Action[]>, seed: number): Promise<number> {
  let caught = 0;
  for (const run of fc.sample(arbitrary, { numRuns: n, seed })) {
    const error = await checkCluster(broken, run).then(() => undefined, (e: unknown) => e as Error);
    if (error && /without job \d+'s current lease applied/.test(error.message)) caught += 1;
  }
  const p = caught / n;
  const miss = Object.entries(PROPERTY_RUNS).map(([store, runs]) => `${store} (${runs} runs) ${((1 - p) ** runs).toExponential(1)}`).join(', ');
  console.log(`${name}: caught in ${caught} of ${n} runs (${(100 * p).toFixed(1)}%); chance to miss it in one CI run: ${miss}`);
  return p;
}

try {
  await rate(`targeted (actions), ${onPostgres ? 'postgres' : 'memory'}`, actions, 1);
  await rate(`random steps only, ${onPostgres ? 'postgres' : 'memory'}`, steps, 2);
} finally {
  if (pool) {
    await pool.query(`drop schema "${schema}" cascade`);
    await pool.end();
  }
}
