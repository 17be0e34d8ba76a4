import type { JobStore, SqlClient } from '../adapters/store.js';
import type { JobRecord } from '../types.js';
import { toFlowJobs } from './define-flow.js';
import type { FlowDefinition, FlowJobs } from './flow-types.js';

export interface EnqueuedFlow<J extends FlowJobs = FlowJobs> {
  flowId: string;
  /** Each job of the flow as stored, by node name: `waiting` until its parents are done. */
  jobs: { [N in keyof J]: JobRecord };
}

/**
 * Enqueues a flow in one store call, all or nothing: jobs without parents are due at once,
 * the others wait (`waiting`) until their last parent ends, released in the statement that
 * ends it. Checked first (InvalidFlowError, InvalidOptionError: nothing written); a stored
 * parent that does not exist throws JobNotFoundError, and nothing is written either.
 * `client`: the caller's SQL client inside its open transaction (stores with
 * capabilities.transactionalEnqueue): the flow exists only if it commits.
 */
export async function enqueueFlow<J extends FlowJobs>(
  store: JobStore,
  flow: FlowDefinition<J>,
  options: { client?: SqlClient } = {},
): Promise<EnqueuedFlow<J>> {
  const jobs = toFlowJobs(flow);
  const stored = await store.enqueueFlow({ name: flow.name, jobs, ...(options.client ? { client: options.client } : {}) });
  const byNode = Object.fromEntries(jobs.map((job, i) => [job.node, stored.jobs[i]!]));
  return { flowId: stored.flowId, jobs: byNode as EnqueuedFlow<J>['jobs'] };
}
