import type { PruneParams } from './store.js';
import { assertPositiveInt } from '../validation.js';

/** Jobs one batch of `pruneJobs` deletes at most, unless told: small enough that each
 *  statement's WAL and locks stay bounded, large enough that the per-statement round trip
 *  does not dominate. */
export const DEFAULT_PRUNE_BATCH_SIZE = 1_000;

/**
 * The loop both kinds of store run: `deleteBatch(limit)` deletes at most `limit` prunable
 * jobs (on SQL, one statement and transaction of its own) and says how many went. Repeats
 * until a batch deletes fewer than the limit, calling `onBatch` after each that deleted any.
 * Returns the total. `batchSize` is checked before anything is deleted.
 */
export async function pruneInBatches(params: PruneParams, deleteBatch: (limit: number) => Promise<number>): Promise<number> {
  const batchSize = params.batchSize ?? DEFAULT_PRUNE_BATCH_SIZE;
  assertPositiveInt('batchSize', batchSize);
  let total = 0;
  for (;;) {
    const deleted = await deleteBatch(batchSize);
    total += deleted;
    if (deleted > 0) params.onBatch?.({ deleted, total });
    if (deleted < batchSize) return total;
  }
}
