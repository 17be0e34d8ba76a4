import type { ListNewJobsParams, NewJob } from '../../store.js';
import { readTime, toDbId, type StoredTime } from '../job-row.js';
import type { SqlContext } from '../sql-context.js';
import type { SqlSchema } from '../sql-schema.js';
import { defineStatement } from '../statement.js';
import { createdState, firstRow } from './created-state.js';

/**
 * Jobs by id for the inspector's live feed, which shows each new job as it comes (an enqueue
 * writes no history row), in the state it was created in (created-state.ts): a job read after
 * it already ran is shown created, not finished. Both statements walk jobs_pkey from one end
 * and probe each job's first history row: a poll costs what it returns. Ids are drawn at
 * insert and seen at commit, as the history's (inspector/id-tail.ts).
 */
const columns = (s: SqlSchema) => `n.id::text as id, n.queue, ${createdState('n')} as state, n.created_at`;

export const JOBS_AFTER = defineStatement(
  'list_new_jobs_after',
  (s) => `
select ${columns(s)}
from (select j.id, j.queue, j.state, j.created_at from ${s.quoted}.jobs j where j.id > $1 order by j.id limit $2) n
${firstRow(s, 'n.id')}
order by n.id
`,
);

export const NEWEST_JOBS = defineStatement(
  'list_newest_jobs',
  (s) => `
select ${columns(s)}
from (select j.id, j.queue, j.state, j.created_at from ${s.quoted}.jobs j order by j.id desc limit $1) n
${firstRow(s, 'n.id')}
order by n.id
`,
);

const DEFAULT_LIMIT = 100;

interface NewJobRow {
  id: string;
  queue: string;
  state: NewJob['state'];
  created_at: StoredTime;
}

export async function listNewJobs(ctx: SqlContext, params: ListNewJobsParams): Promise<NewJob[]> {
  const limit = Math.max(0, params.limit ?? DEFAULT_LIMIT);
  let rows: NewJobRow[];
  if (params.afterId === undefined) {
    rows = await ctx.run(NEWEST_JOBS, [limit]);
  } else {
    // "0" (before every job) is not a job id, but it is a valid place to start after.
    const afterId = params.afterId === '0' ? '0' : toDbId(params.afterId);
    if (afterId === null) return [];
    rows = await ctx.run(JOBS_AFTER, [afterId, limit]);
  }
  return rows.map((row) => ({ id: row.id, queue: row.queue, state: row.state, createdAt: readTime(row.created_at, 'created_at') }));
}
