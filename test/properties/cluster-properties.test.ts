/**
 * Property-based tests (fast-check) of several workers on one store: see cluster-property.ts
 * for what must hold. On every store of test/support/test-stores.ts: the memory store takes the
 * most runs, the SQL stores (one database for the file, emptied before each run) fewer. A
 * store that ignores the lease token must be caught.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { describeEachStore, type TestStoreName } from '../support/test-stores.js';
import { ignoringLeaseTokens } from './broken-store.js';
import type { StoreFactory } from './cluster.js';
import { actions, checkCluster } from './cluster-property.js';

/** Each run catches a store without fencing with probability ~0.98 (test/README.md). */
const RUNS: Record<TestStoreName, number> = { memory: 40, pglite: 8, postgres: 8 };

describeEachStore('workers on one store, in any interleaving', (store) => {
  it(`hold the properties in ${RUNS[store.name]} runs`, async () => {
    const create: StoreFactory = async (clock) => {
      await store.reset();
      return store.create(clock, { notifyDebounceMs: 0 });
    };
    await fc.assert(fc.asyncProperty(actions, (run) => checkCluster(create, run)), { numRuns: RUNS[store.name] });
  }, 120_000);
});

describe('the cluster properties', () => {
  it('catch a store that ignores the lease token', async () => {
    const broken: StoreFactory = async (clock) => ignoringLeaseTokens(memoryStore({ clock }));
    const failure: unknown = await fc
      .assert(fc.asyncProperty(actions, (run) => checkCluster(broken, run)), { numRuns: 200, endOnFailure: true })
      .catch((error: unknown) => error);
    // fast-check reports the counterexample; the property's own error is its cause.
    const cause = (failure as Error | undefined)?.cause as Error | undefined;
    expect(cause?.message).toMatch(/(a renewal|an outcome) without job \d+'s current lease applied/);
    console.info(`[properties] the broken store is caught: ${cause?.message}`);
  });
});
