import { JobNotFoundError } from '../../../errors.js';
import type { JobRecord } from '../../../types.js';
import type { FlowJob, SqlClient } from '../../store.js';
import { jobColumns, toJobRecord } from '../job-row.js';
import type { JobRow } from '../job-row.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement } from '../statement.js';
import { toInput } from './enqueue-input.js';
import { asPayloadError } from './enqueue-jobs.js';

/**
 * A static flow in one call of enqueue_flow (migration 0009): the jobs, their edges, the
 * release of those whose stored parents ended already, and the wake-ups, all or nothing, in
 * the caller's transaction when given its client. Not a hot path: a function keeps the steps
 * (insert, then edges by the ids drawn, then replays) in one round trip.
 */
const ENQUEUE_FLOW = defineStatement(
  'enqueue_flow',
  (s) => `select ${jobColumns('j', s)}, j.flow_id::text as flow_id from ${s.quoted}.enqueue_flow($1::timestamptz, $2::text, $3::jsonb) j order by j.id`,
);

/** Raised by enqueue_flow for a stored parent that does not exist. */
const UNKNOWN_PARENT = 'JV404';

export async function enqueueFlow(
  ctx: SqlContext,
  params: { name: string; jobs: readonly FlowJob[]; client?: SqlClient },
): Promise<{ flowId: string; jobs: JobRecord[] }> {
  const input = JSON.stringify(
    params.jobs.map((job, i) => ({
      ...toInput(i, job),
      node: job.node,
      depends_on: job.dependsOn.map((d) => ({
        name: d.name,
        on_failure: d.onFailure,
        ...('index' in d ? { index: d.index } : { job_id: d.jobId }),
      })),
    })),
  );
  const values = [ctx.now(), params.name, input];
  const rows = await asPayloadError(async () => {
    try {
      return await ctx.run<JobRow & { flow_id: string }>(ENQUEUE_FLOW, values, params.client);
    } catch (error) {
      if ((error as { code?: unknown }).code !== UNKNOWN_PARENT) throw error;
      const id = /no job with id (\d+)/.exec((error as Error).message)?.[1] ?? '?';
      throw new JobNotFoundError(id);
    }
  });
  return { flowId: rows[0]!.flow_id, jobs: rows.map((row) => toJobRecord(row)) };
}
