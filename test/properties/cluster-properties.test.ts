/**
 * Property-based tests (fast-check) of several workers on one store: see cluster-property.ts
 * for what must hold. On every store of test/support/test-stores.ts: the memory store takes the
 * most runs, the SQL stores (one database for the file, emptied before each run) fewer. The
 * same runs on each store, wrapped so that it ignores the lease token
 * (broken-store.ts), must catch it: the per-run rate is measured in test/README.md.
 *
 * A failure prints the line to replay it (JOBVISOR_PROPERTY_SEED, JOBVISOR_PROPERTY_PATH).
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { assertReplayable } from '../support/replayable-property.js';
import type { JobStore } from '../../src/adapters/store.js';
import { describeEachStore, type TestStore } from '../support/test-stores.js';
import { ignoringLeaseTokens } from './broken-store.js';
import type { StoreFactory } from './cluster.js';
import { actions, checkCluster, PROPERTY_RUNS as RUNS } from './cluster-property.js';

/** A fresh store on the block's database for each run, wrapped by `wrap`. */
const factory = (store: TestStore, wrap: (s: JobStore) => JobStore = (s) => s): StoreFactory => async (clock) => {
  await store.reset();
  return wrap(await store.create(clock, { notifyDebounceMs: 0 }));
};

describeEachStore('workers on one store, in any interleaving', (store) => {
  it(`hold the properties in ${RUNS[store.name]} runs`, async () => {
    const create = factory(store);
    let overlapping = 0;
    const counted = (overlaps: number) => void (overlapping += overlaps > 0 ? 1 : 0);
    await assertReplayable('JOBVISOR_PROPERTY', fc.asyncProperty(actions, (run) => checkCluster(create, run, counted)), RUNS[store.name]);
    // The racing zombie's write and rescue were in flight together, in most runs.
    expect(overlapping).toBeGreaterThan(RUNS[store.name] / 2);
  }, 180_000);

  it(`catch the store ignoring lease tokens within the same ${RUNS[store.name]} runs`, async () => {
    const broken = factory(store, ignoringLeaseTokens);
    const failure: unknown = await fc
      .assert(fc.asyncProperty(actions, (run) => checkCluster(broken, run)), { numRuns: RUNS[store.name], endOnFailure: true })
      .catch((error: unknown) => error);
    // fast-check reports the counterexample; the property's own error is its cause.
    const cause = (failure as Error | undefined)?.cause as Error | undefined;
    expect(cause?.message).toMatch(/(a renewal|an outcome) without job \d+'s current lease applied/);
  }, 180_000);
});
