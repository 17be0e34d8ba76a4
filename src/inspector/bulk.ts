/**
 * Actions on every job a filter matches (retry all dead jobs of a queue, cancel, delete), and
 * the count the page shows before asking. The matching jobs are read a page at a time through
 * scanJobs (each read bounded), at most MAX_BULK of them, then acted on one by one: each job
 * answers as a single action would, and one that changed meanwhile is counted as not applied.
 */
import type { JobStore, ScanJobsParams } from '../adapters/store.js';
import type { Supervisor } from '../supervisor/supervisor.js';
import { runAction, type Action } from './actions.js';
import { HttpError } from './http.js';

export const MAX_BULK = 10_000;
const PAGE = 200;

type Filters = Pick<ScanJobsParams, 'queue' | 'state' | 'kind'>;

/** The ids of the jobs matching, newest first, at most `max`; `capped` when there were more. */
async function matching(store: JobStore, filters: Filters, max: number): Promise<{ ids: string[]; capped: boolean }> {
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

/** How many jobs the filters match, counted up to MAX_BULK. */
export async function countMatching(store: JobStore, filters: Filters): Promise<{ count: number; capped: boolean }> {
  const { ids, capped } = await matching(store, filters, MAX_BULK);
  return { count: ids.length, capped };
}

export async function runBulkAction(action: Action, filters: Filters, store: JobStore, supervisor: Supervisor | undefined) {
  if (filters.queue === undefined && filters.state === undefined && filters.kind === undefined) {
    throw new HttpError(400, `a bulk ${action} needs a filter (queue, state or kind): it never acts on every job at once`);
  }
  const { ids, capped } = await matching(store, filters, MAX_BULK);
  let applied = 0;
  for (const id of ids) {
    try {
      await runAction(action, id, store, supervisor);
      applied += 1;
    } catch (error) {
      // Changed since it was listed (retried, finished, deleted): not applied, the rest go on.
      if (!(error instanceof HttpError)) throw error;
    }
  }
  const past = { retry: 'retried', cancel: 'cancelled (or asked to cancel)', delete: 'deleted' }[action];
  return {
    matched: ids.length,
    applied,
    capped,
    message: `${applied} of ${ids.length} matching jobs ${past}${capped ? ` (the first ${MAX_BULK}; run it again for the rest)` : ''}`,
  };
}
