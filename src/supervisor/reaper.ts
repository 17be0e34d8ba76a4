import { DEFAULT_RESCUE_LIMIT } from '../adapters/rescue-limit.js';
import type { JobStore } from '../adapters/store.js';
import type { JobRecord } from '../types.js';

/** The smallest batch: a statement that times out even at this size fails the pass. */
const MIN_BATCH = 10;
/** PostgreSQL's `query_canceled`: statement_timeout (or a cancel) stopped the statement. */
const STATEMENT_TIMEOUT = '57014';

/**
 * The reaper's passes: rescues expired jobs in bounded batches, so that after a fleet-wide
 * outage no statement has to change every expired row in one transaction, and calls again
 * until a batch comes back short. A batch that times out is halved and tried again at once,
 * down to MIN_BATCH, and the smaller size stays for this supervisor's later passes (as
 * River's rescuer does): a table that was too slow once is likely to be again.
 */
export class Reaper {
  #batch = DEFAULT_RESCUE_LIMIT;

  constructor(private readonly store: Pick<JobStore, 'rescueExpiredJobs'>) {}

  /** The batch size the next call starts with. */
  get batch(): number {
    return this.#batch;
  }

  /** Rescues until a batch is short; `onBatch` sees each batch's rows. Resolves with the count. */
  async reap(onBatch: (jobs: JobRecord[]) => void, onShrink: (batch: number) => void = () => {}): Promise<number> {
    let total = 0;
    for (;;) {
      const limit = this.#batch;
      let rescued: JobRecord[];
      try {
        rescued = await this.store.rescueExpiredJobs({ limit });
      } catch (error) {
        if ((error as { code?: unknown }).code !== STATEMENT_TIMEOUT || limit <= MIN_BATCH) throw error;
        this.#batch = Math.max(MIN_BATCH, Math.floor(limit / 2));
        onShrink(this.#batch);
        continue;
      }
      total += rescued.length;
      if (rescued.length > 0) onBatch(rescued);
      if (rescued.length < limit) return total;
    }
  }
}
