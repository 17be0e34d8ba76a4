import type { JobStore } from '../adapters/store.js';
import { FlowNotFoundError } from '../errors.js';
import { assertJobId } from './flow-checks.js';

/**
 * Resumes a flow after a failure (docs/workflows.md, "Retrying a flow"): every dead, cancelled
 * or skipped job of the flow comes back at once, each `waiting` until all its parents have ended
 * again, or due now. Answers how many were `retried` and how many are `left` ended that way (a
 * stored parent outside the flow failed under an edge that is not `run`). Throws
 * InvalidOptionError for an id that is not one, FlowNotFoundError when there is no such flow.
 */
export async function retryFlow(store: Pick<JobStore, 'retryFlow'>, flowId: string): Promise<{ retried: number; left: number }> {
  assertJobId('flowId', flowId, 'flow');
  const answer = await store.retryFlow({ id: flowId });
  if (!answer) throw new FlowNotFoundError(flowId);
  return answer;
}
