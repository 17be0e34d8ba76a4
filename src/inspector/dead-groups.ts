/**
 * A queue's dead jobs grouped by error (GET /api/queues/:name/dead-groups), and the retry of
 * one group (POST /api/queues/:name/dead-groups/retry, body {"code", "message"}), as
 * sidekiq-undertaker does for Sidekiq's dead set: one statement on the store
 * (retryJobsMatching with the group's error), at most MAX_BULK jobs.
 */
import type { DeadJobGroups, ErrorMatch, JobStore } from '../adapters/store.js';
import { MAX_BULK } from './bulk.js';
import { HttpError, jsonObjectBody } from './http.js';

/** The newest dead jobs of the queue read for its groups. */
export const DEAD_GROUPS_SCAN = 10_000;
const DEAD_GROUPS_LIMIT = 50;

export function deadGroups(store: JobStore, queue: string): Promise<DeadJobGroups> {
  return store.groupDeadJobs({ queue, maxScan: DEAD_GROUPS_SCAN, limit: DEAD_GROUPS_LIMIT });
}

export async function retryDeadGroup(store: JobStore, queue: string, body: string, contentType: string) {
  const error = groupRequest(body, contentType);
  const { matched, applied, capped } = await store.retryJobsMatching({ queue, state: 'dead', error, max: MAX_BULK });
  return {
    matched,
    applied,
    capped,
    message: `${applied} of ${matched} dead jobs of queue ${queue} with this error retried${capped ? ` (the newest ${MAX_BULK}; run it again for the rest)` : ''}`,
  };
}

/** The group's error from a JSON body: a code and a message, each a string or null. */
function groupRequest(body: string, contentType: string): ErrorMatch {
  if (!contentType.startsWith('application/json')) throw new HttpError(415, 'send the group as JSON: {"code": …, "message": …}');
  const { code, message } = jsonObjectBody(body, '{"code": …, "message": …}');
  for (const [name, value] of [['code', code], ['message', message]] as const) {
    if (value !== null && typeof value !== 'string') throw new HttpError(400, `${name}: must be a string or null, as the group shows it`);
  }
  return { code: code as string | null, message: message as string | null };
}
