/**
 * The real supervisor against the reference model (job-fate.ts), on every store of
 * test/support/test-stores.ts: for each scenario, the row's final state, error code, attempt,
 * maxAttempts, runAt, result and history (with times) must be what the model, written from
 * the README, says. Named cases first, then generated ones (fast-check; a failure prints its
 * seed and path: replay with JOBVISOR_ORACLE_SEED=<seed> JOBVISOR_ORACLE_PATH=<path>).
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { describeEachStore, type TestStoreName } from '../support/test-stores.js';
import { observeFate, type StoreFactory } from './fate-driver.js';
import { fateOf } from './job-fate.js';
import { NAMED, type Scenario, scenarios } from './scenarios.js';

/** Generated scenarios per store: the SQL stores take real round trips per step. */
const RUNS: Record<TestStoreName, number> = { memory: 60, pglite: 15, postgres: 20 };

const seed = process.env.JOBVISOR_ORACLE_SEED === undefined ? undefined : Number(process.env.JOBVISOR_ORACLE_SEED);
const path = process.env.JOBVISOR_ORACLE_PATH;

describeEachStore('a job\'s fate, the real supervisor against the reference model', (store) => {
  const create: StoreFactory = async (clock) => {
    await store.reset();
    return store.create(clock, { notifyDebounceMs: 0 });
  };
  const check = async ({ options, script }: Scenario) => {
    expect(await observeFate(create, options, script)).toEqual(fateOf(options, script));
  };

  for (const scenario of NAMED) it(scenario.name, () => check(scenario));

  it(`holds for ${RUNS[store.name]} generated scenarios`, async () => {
    await fc.assert(fc.asyncProperty(scenarios, check), { numRuns: RUNS[store.name], seed, path, verbose: 1 });
  }, 120_000);
});
