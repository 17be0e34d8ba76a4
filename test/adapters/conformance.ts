/**
 * The store conformance suite: every `JobStore` adapter runs it, so they all keep the same
 * semantics (fencing, unique keys, history, claim order, admin operations, wake-ups). One
 * file per topic (conformance-claims.ts, conformance-fencing.ts …), each called below with a
 * getter for the test's store and clock; their shared helpers are in conformance-kit.ts.
 *
 * conformance.test.ts runs it on every store of test/support/test-stores.ts. Plugging in
 * another adapter:
 *
 *   describeStoreConformance('pglite', {
 *     capabilities: { notifications: true, transactionalEnqueue: true },
 *     create: async (clock) => pgliteStore({ db, schema, clock }),  // migrated
 *     teardown: async (store) => { ... truncate the tables ... },
 *     inTransaction: async (end, fn) => { ... BEGIN; await fn(client); COMMIT or ROLLBACK ... },
 *   });
 *
 * One expensive database per file (set up in the file's own `beforeAll`), a fresh store with
 * empty tables per test. Time only moves through the injected clock: a store must take "now"
 * from it for every timestamp and every comparison (runAt, lease expiry), never from the
 * database's now(). No test sleeps; only the wake-up tests wait (briefly) for notifications.
 */
import { afterEach, beforeEach, describe } from 'vitest';
import type { JobStore, SqlClient, StoreCapabilities } from '../../src/adapters/store.js';
import type { Clock } from '../../src/types.js';
import { describeAdminConformance } from './conformance-admin.js';
import { describeClaimConformance } from './conformance-claims.js';
import { describeEnqueueConformance } from './conformance-enqueue.js';
import { describeFencingConformance } from './conformance-fencing.js';
import { describeHistoryConformance } from './conformance-history.js';
import { createTestClock, T0 } from './conformance-kit.js';
import { describeOutcomeConformance } from './conformance-outcomes.js';
import { describeReadConformance } from './conformance-reads.js';
import { describeSubscribeConformance } from './conformance-subscribe.js';
import { describeControlConformance } from './conformance-control.js';
import { describeLimitsConformance } from './conformance-limits.js';

/** A clock that only moves when told to. */
export interface TestClock extends Clock {
  /** Moves time forward by `ms` (>= 0). */
  advance(ms: number): void;
}

export interface StoreConformanceFactory {
  /** What the store must report as its capabilities. */
  capabilities: StoreCapabilities;
  /** A fresh store with no jobs and no history, reading "now" from `clock`. Called before
   *  each test; the suite calls `store.close()` after it. Ids need not start at 1. */
  create(clock: TestClock): Promise<JobStore>;
  /** After each test, once the store is closed: drop its schema, truncate tables … */
  teardown?(store: JobStore): Promise<void>;
  /** Runs `fn` with a client inside an open transaction, then commits or rolls back. Give it
   *  for stores with `capabilities.transactionalEnqueue`; their enqueue-in-a-transaction
   *  tests are skipped without it. */
  inTransaction?(end: 'commit' | 'rollback', fn: (client: SqlClient) => Promise<void>): Promise<void>;
}

export function describeStoreConformance(name: string, factory: StoreConformanceFactory): void {
  describe(`JobStore conformance: ${name}`, () => {
    let clock: TestClock;
    let store: JobStore;

    beforeEach(async () => {
      clock = createTestClock(T0);
      store = await factory.create(clock);
    });

    afterEach(async () => {
      if (!store) return;
      await store.close();
      await factory.teardown?.(store);
    });

    // One file per topic, each given a getter for the test's store and clock.
    describeEnqueueConformance(() => ({ store, clock }), factory);
    describeClaimConformance(() => ({ store, clock }));
    describeOutcomeConformance(() => ({ store, clock }));
    describeFencingConformance(() => ({ store, clock }));
    describeAdminConformance(() => ({ store, clock }));
    describeHistoryConformance(() => ({ store, clock }));
    describeReadConformance(() => ({ store, clock }));

    describeLimitsConformance(() => ({ store, clock }));
    describeControlConformance(() => ({ store, clock }));

    describeSubscribeConformance(() => ({ store, clock }));
  });
}
