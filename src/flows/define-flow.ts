import type { FlowDependency, FlowJob } from '../adapters/store.js';
import { InvalidFlowError } from '../errors.js';
import { assertHandledKind, buildEnqueueJob, type HandlerMap, type PayloadOf, type Queue, type ResultOf } from '../queue.js';
import { assertName } from '../validation.js';
import { assertJobId, assertPolicy } from './flow-checks.js';
import type { FlowDefinition, FlowJobOptions, FlowJobs, FlowJobSpec } from './flow-types.js';

/** One job of a flow, typed by its queue: the kind must be one of its handlers', the payload
 *  that handler's, and `dependsOn` names other jobs of the flow (or stored job ids). */
export function flowJob<H extends HandlerMap, K extends keyof H & string, const D extends string = never>(
  queue: Queue<H>,
  kind: K,
  payload: PayloadOf<H[K]>,
  options: FlowJobOptions<D> = {},
): FlowJobSpec<ResultOf<H[K]>, D> {
  return { queue: queue.name, handlers: queue.handlers, settings: queue.settings, kind, payload, options };
}

/** A flow: a name and its jobs by node name. Checked when enqueued (enqueueFlow). */
export function defineFlow<const J extends FlowJobs>(name: string, jobs: J): FlowDefinition<J> {
  return { name, jobs };
}

/** The most jobs one flow may have: enqueued in one statement, a larger one holds its locks
 *  and its transaction for seconds (100,000 jobs took 18 s on Postgres). */
export const MAX_FLOW_JOBS = 10_000;

/** How many nodes an error names at most. */
const CYCLE_SHOWN = 10;

/** The flow as the store takes it, or an InvalidFlowError / InvalidOptionError before anything
 *  is written: names, kinds, payloads and options, parents that exist in the flow, no parent
 *  named twice, no cycle. Jobs in the definition's order. */
export function toFlowJobs(flow: FlowDefinition): FlowJob[] {
  assertName('flow name', flow.name);
  const nodes = Object.keys(flow.jobs);
  if (nodes.length === 0) throw new InvalidFlowError(flow.name, 'has no jobs');
  if (nodes.length > MAX_FLOW_JOBS) {
    throw new InvalidFlowError(flow.name, `has ${nodes.length} jobs, more than ${MAX_FLOW_JOBS} (MAX_FLOW_JOBS): enqueue it as several flows, or fan out from a handler`);
  }
  const index = new Map(nodes.map((node, i) => [node, i]));
  const jobs = nodes.map((node): FlowJob => {
    assertName(`flow "${flow.name}" job name`, node);
    const spec = flow.jobs[node]!;
    const { dependsOn = [], onParentFailure = 'cancel', ...options } = spec.options;
    if ('uniqueKey' in options || 'client' in options) {
      throw new InvalidFlowError(flow.name, `job "${node}": a job of a flow takes no ${'uniqueKey' in options ? 'uniqueKey' : 'client'}`, node);
    }
    assertPolicy(`flow "${flow.name}" job "${node}" onParentFailure`, onParentFailure);
    if (spec.handlers) assertHandledKind(spec.queue, spec.handlers, spec.kind);
    const job = buildEnqueueJob(spec.queue, spec.kind, spec.payload, options, spec.settings);
    const names = new Set<string>();
    const parents = dependsOn.map((parent): FlowDependency => {
      const entry = typeof parent === 'string' ? { job: parent } : parent;
      const onFailure = entry.onFailure ?? onParentFailure;
      assertPolicy(`flow "${flow.name}" job "${node}" onFailure`, onFailure);
      let dependency: FlowDependency;
      if ('jobId' in entry) {
        assertJobId(`flow "${flow.name}" job "${node}" dependsOn jobId`, entry.jobId);
        dependency = { jobId: entry.jobId, name: entry.jobId, onFailure };
      } else {
        const at = index.get(entry.job);
        if (at === undefined) {
          throw new InvalidFlowError(flow.name, `job "${node}" depends on "${entry.job}", which is not a job of the flow (it has ${nodes.length <= CYCLE_SHOWN ? nodes.join(', ') : `${nodes.slice(0, CYCLE_SHOWN).join(', ')} and ${nodes.length - CYCLE_SHOWN} more`})`, node);
        }
        dependency = { index: at, name: entry.job, onFailure };
      }
      if (names.has(dependency.name)) throw new InvalidFlowError(flow.name, `job "${node}" names "${dependency.name}" twice in dependsOn`, node);
      names.add(dependency.name);
      return dependency;
    });
    return { ...job, node, dependsOn: parents };
  });
  assertAcyclic(flow.name, nodes, jobs);
  return jobs;
}

/** Depth-first search with its own stack (a deep flow overflows no call stack); the first
 *  cycle found is named in the error, as a path of at most CYCLE_SHOWN nodes. */
function assertAcyclic(flow: string, nodes: readonly string[], jobs: readonly FlowJob[]): void {
  const state = new Array<'new' | 'open' | 'done'>(jobs.length).fill('new');
  for (let root = 0; root < jobs.length; root++) {
    if (state[root] !== 'new') continue;
    // Each frame: a job and how many of its parents have been looked at.
    const stack: Array<{ i: number; next: number }> = [{ i: root, next: 0 }];
    state[root] = 'open';
    while (stack.length > 0) {
      const frame = stack.at(-1)!;
      const parents = jobs[frame.i]!.dependsOn;
      if (frame.next === parents.length) {
        state[frame.i] = 'done';
        stack.pop();
        continue;
      }
      const parent = parents[frame.next++]!;
      if (!('index' in parent)) continue;
      if (state[parent.index] === 'open') {
        const path = stack.map((f) => f.i);
        const cycle = [...path.slice(path.indexOf(parent.index)), parent.index].map((n) => nodes[n]!);
        throw new InvalidFlowError(flow, `has a cycle: ${showCycle(cycle)} (each waits for the next)`, nodes[frame.i]);
      }
      if (state[parent.index] === 'new') {
        state[parent.index] = 'open';
        stack.push({ i: parent.index, next: 0 });
      }
    }
  }
}


function showCycle(cycle: readonly string[]): string {
  if (cycle.length <= CYCLE_SHOWN) return cycle.join(' → ');
  const head = cycle.slice(0, CYCLE_SHOWN - 1);
  return `${head.join(' → ')} → … (${cycle.length - CYCLE_SHOWN} more) → ${cycle.at(-1)} (${cycle.length - 1} jobs)`;
}
