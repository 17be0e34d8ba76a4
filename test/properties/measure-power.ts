/**
 * Measures how often one run of the cluster property catches a store that ignores the lease
 * token (broken-store.ts), on the memory store: `npx tsx test/properties/measure-power.ts 300`.
 * Prints the rate for the targeted generator the tests use (`actions`: random steps around a
 * zombie chain) and for random steps alone, and what that makes the chance of missing the
 * bug in one CI run of each store. The figures go to test/README.md.
 */
import fc from 'fast-check';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { ignoringLeaseTokens } from './broken-store.js';
import type { Action, StoreFactory } from './cluster.js';
import { actions, checkCluster, PROPERTY_RUNS, steps } from './cluster-property.js';

const n = Number(process.argv[2] ?? 200);
const broken: StoreFactory = async (clock) => ignoringLeaseTokens(memoryStore({ clock }));

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

await rate('targeted (actions)', actions, 1);
await rate('random steps only', steps, 2);
