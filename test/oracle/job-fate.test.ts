/**
 * The real supervisor against the reference model (job-fate.ts), on every store of
 * test/support/test-stores.ts: for each scenario, the row's final state, error code, attempt,
 * maxAttempts, runAt, result and history (with times) must be what the model, written from
 * the README, says. Named cases first, then generated ones (fast-check; a failure prints the
 * line to replay it: JOBVISOR_ORACLE_SEED=… JOBVISOR_ORACLE_PATH=…).
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { assertReplayable } from '../support/replayable-property.js';
import { describeEachStore, type TestStoreName } from '../support/test-stores.js';
import { observeFate, type StoreFactory } from './fate-driver.js';
import { fateOf } from './job-fate.js';
import { NAMED, type Scenario, scenarios } from './scenarios.js';

/** Generated scenarios per store: the SQL stores take real round trips per step. */
const RUNS: Record<TestStoreName, number> = { memory: 50, pglite: 10, postgres: 12 };

describeEachStore('a job\'s fate, the real supervisor against the reference model', (store) => {
  const create: StoreFactory = async (clock) => {
    await store.reset();
    return store.create(clock, { notifyDebounceMs: 0 });
  };
  const check = async ({ options, script, program, signals }: Scenario) => {
    expect(await observeFate(create, options, script, program, signals)).toEqual(fateOf(options, script, program, signals));
  };

  for (const scenario of NAMED) it(scenario.name, () => check(scenario));

  it(`holds for ${RUNS[store.name]} generated scenarios`, async () => {
    await assertReplayable('JOBVISOR_ORACLE', fc.asyncProperty(scenarios, check), RUNS[store.name]);
  }, 120_000);
});
