/**
 * Actions on every job a filter matches (retry all dead jobs of a queue, cancel, delete), and
 * the count the page shows before asking. The count and the count's cap come from the store
 * (countJobsUpTo: through an index, exact up to MAX_BULK). Retry and cancel are one statement
 * each on the store (retryJobsMatching, cancelJobsMatching), at most MAX_BULK jobs, each job
 * changed as its single action would change it. Delete goes job by job (a job a flow still
 * waits for stays): the matching ids read a page at a time, then deleted one by one.
 */
import type { JobFilters, JobStore } from '../adapters/store.js';
import type { Supervisor } from '../supervisor/supervisor.js';
import { runAction, type Action } from './actions.js';
import { HttpError } from './http.js';

export const MAX_BULK = 10_000;
const PAGE = 200;

/** The ids of the jobs matching, newest first, at most `max`; `capped` when there were more. */
async function matching(store: JobStore, filters: JobFilters, max: number): Promise<{ ids: string[]; capped: boolean }> {
  const ids: string[] = [];
  let beforeId: string | undefined;
  for (;;) {
    const page = await store.scanJobs({ ...filters, limit: PAGE, ...(beforeId === undefined ? {} : { beforeId }) });
    for (const job of page.jobs) {
      if (ids.length === max) return { ids, capped: true };
      ids.push(job.id);
    }
    if (page.nextBeforeId === null) return { ids, capped: false };
    beforeId = page.nextBeforeId;
  }
}

/** How many jobs the filters match, counted up to MAX_BULK; `capped`: at least that many. */
export function countMatching(store: JobStore, filters: JobFilters): Promise<{ count: number; capped: boolean }> {
  return store.countJobsUpTo({ ...filters, max: MAX_BULK });
}

export async function runBulkAction(action: Action, filters: JobFilters, store: JobStore, supervisor: Supervisor | undefined) {
  if (filters.queue === undefined && filters.state === undefined && filters.kind === undefined) {
    throw new HttpError(400, `a bulk ${action} needs a filter (queue, state or kind): it never acts on every job at once`);
  }
  const { matched, applied, capped } =
    action === 'retry'
      ? await store.retryJobsMatching({ ...filters, max: MAX_BULK })
      : action === 'cancel'
        ? await store.cancelJobsMatching({ ...filters, max: MAX_BULK })
        : await deleteMatching(filters, store, supervisor);
  const past = { retry: 'retried', cancel: 'cancelled (or asked to cancel)', delete: 'deleted' }[action];
  return {
    matched,
    applied,
    capped,
    message: `${applied} of ${matched} matching jobs ${past}${capped ? ` (the newest ${MAX_BULK}; run it again for the rest)` : ''}`,
  };
}

async function deleteMatching(filters: JobFilters, store: JobStore, supervisor: Supervisor | undefined) {
  const { ids, capped } = await matching(store, filters, MAX_BULK);
  let applied = 0;
  for (const id of ids) {
    try {
      await runAction('delete', id, store, supervisor);
      applied += 1;
    } catch (error) {
      // Changed since it was listed (running, waited for, deleted): not applied, the rest go on.
      if (!(error instanceof HttpError)) throw error;
    }
  }
  return { matched: ids.length, applied, capped };
}
