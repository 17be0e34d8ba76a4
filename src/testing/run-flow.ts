import type { SimulatedClock } from 'xstate';
import { memoryStore } from '../adapters/memory/index.js';
import type { FlowRecord, JobStore } from '../adapters/store.js';
import { enqueueFlow } from '../flows/enqueue-flow.js';
import type { FlowDefinition, FlowJobs } from '../flows/flow-types.js';
import type { Queue } from '../queue.js';
import type { JobRecord, JobState } from '../types.js';
import { createTestClock } from './clock.js';
import { drainUntil, dueAt } from './drain.js';

export interface RunFlowOptions {
  /** Default: a new memory store reading `clock`. A store of your own must read `clock` too. */
  store?: JobStore;
  /** Default: `createTestClock()`. */
  clock?: SimulatedClock;
  /** How many clock moves at most before `runFlow` gives up. Default 100. */
  maxRounds?: number;
}

/** A flow run as far as it goes: every job of the flow (children added on the way too). */
export interface FlowRun<J extends FlowJobs = FlowJobs> {
  flowId: string;
  /** The flow's jobs and edges as stored at the end. */
  flow: FlowRecord;
  /** The definition's jobs by name, as they ended. */
  jobs: { [N in keyof J]: JobRecord };
  /** Each job's state by node name (a child's key for added children). */
  states: Record<string, JobState>;
  store: JobStore;
  clock: SimulatedClock;
}

/**
 * Enqueues a flow and runs it to its end on a supervisor of its own, with a simulated clock:
 * every job, every retry after its backoff, every child a handler adds and every continuation,
 * until no job of the flow can run again (each one ended, or waits for a job that never
 * ends). `queues`: every queue the flow's jobs and their children use.
 */
export async function runFlow<J extends FlowJobs>(
  flow: FlowDefinition<J>,
  queues: readonly Queue<any>[],
  options: RunFlowOptions = {},
): Promise<FlowRun<J>> {
  const clock = options.clock ?? createTestClock();
  const store = options.store ?? memoryStore({ clock });
  const { flowId } = await enqueueFlow(store, flow);
  const drainOptions = { clock, ...(options.maxRounds !== undefined && { maxRounds: options.maxRounds }) };
  await drainUntil(store, queues, drainOptions, async () => {
    const read = await store.getFlow({ id: flowId });
    const due = (read?.jobs ?? []).map(({ job }) => dueAt(job)).filter((at): at is number => at !== null);
    return due.length === 0 ? null : Math.min(...due);
  });
  const read = (await store.getFlow({ id: flowId }))!;
  const byNode = new Map(read.jobs.map(({ node, job }) => [node, job]));
  const jobs = Object.fromEntries(Object.keys(flow.jobs).map((node) => [node, byNode.get(node)!])) as FlowRun<J>['jobs'];
  const states = Object.fromEntries(read.jobs.map(({ node, job }) => [node, job.state]));
  return { flowId, flow: read, jobs, states, store, clock };
}
