/**
 * Property-based tests (fast-check) of several workers on one store: see cluster-property.ts
 * for what must hold. The memory store takes the most runs; PGlite (one instance for the
 * file) fewer, each on a schema truncated before. A store that ignores the lease token must be
 * caught.
 */
import { PGlite } from '@electric-sql/pglite';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { pgliteStore } from '../../src/adapters/pglite/index.js';
import { ignoringLeaseTokens } from './broken-store.js';
import type { StoreFactory } from './cluster.js';
import { actions, checkCluster } from './cluster-property.js';

const schema = 'jv_properties';
let db: PGlite;

beforeAll(async () => {
  db = await PGlite.create();
  await pgliteStore({ db, schema }).migrate();
});

afterAll(async () => {
  await db.close();
});

describe('workers on one store, in any interleaving', () => {
  it('memory store', async () => {
    await fc.assert(fc.asyncProperty(actions, (run) => checkCluster(async (clock) => memoryStore({ clock }), run)), { numRuns: 40 });
  });

  it('PGlite store', async () => {
    const create: StoreFactory = async (clock) => {
      await db.exec(`truncate "${schema}".jobs, "${schema}".job_events`);
      return pgliteStore({ db, schema, clock, notifyDebounceMs: 0 });
    };
    await fc.assert(fc.asyncProperty(actions, (run) => checkCluster(create, run)), { numRuns: 8 });
  });

  it('catches a store that ignores the lease token', async () => {
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
