/**
 * The store conformance suite (conformance.ts) on every store of test/support/test-stores.ts
 * that JOBVISOR_TEST_STORES selects.
 */
import { describeEachStore } from '../support/test-stores.js';
import { describeStoreConformance } from './conformance.js';

describeEachStore('stores', (store) => {
  describeStoreConformance(store.name, {
    capabilities: store.capabilities,
    create: (clock) => store.create(clock),
    teardown: () => store.reset(),
    ...(store.inTransaction ? { inTransaction: store.inTransaction } : {}),
  });
});
