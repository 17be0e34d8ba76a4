import type { SqlSchema } from '../sql-schema.js';

/**
 * The state a job was created in, read without a creation row (an enqueue writes none since
 * issue 26): the state its first history row left, or, with no history yet, the one it is in.
 * A job an older build made has a creation row first: its state is that row's. `firstRow`
 * joins the first row as `f` (one probe of job_events_job_idx); `createdState` reads it.
 */
export function firstRow(s: SqlSchema, jobId: string): string {
  return `left join lateral (
    select x.from_state, x.to_state, true as found from ${s.quoted}.job_events x where x.job_id = ${jobId} order by x.id limit 1
  ) f on true`;
}

export function createdState(jobAlias: string): string {
  return `case when f.found is null then ${jobAlias}.state when f.from_state is null then f.to_state else f.from_state end`;
}
