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

/** The flow as the store takes it, or an InvalidFlowError / InvalidOptionError before anything
 *  is written: names, kinds, payloads and options, parents that exist in the flow, no parent
 *  named twice, no cycle. Jobs in the definition's order. */
export function toFlowJobs(flow: FlowDefinition): FlowJob[] {
  assertName('flow name', flow.name);
  const nodes = Object.keys(flow.jobs);
  if (nodes.length === 0) throw new InvalidFlowError(flow.name, 'has no jobs');
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
          throw new InvalidFlowError(flow.name, `job "${node}" depends on "${entry.job}", which is not a job of the flow (it has ${nodes.join(', ')})`, node);
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

/** Depth-first search; the first cycle found is named in the error, as a path. */
function assertAcyclic(flow: string, nodes: readonly string[], jobs: readonly FlowJob[]): void {
  const state = new Array<'new' | 'open' | 'done'>(jobs.length).fill('new');
  const path: number[] = [];
  const visit = (i: number): void => {
    state[i] = 'open';
    path.push(i);
    for (const parent of jobs[i]!.dependsOn) {
      if (!('index' in parent)) continue;
      if (state[parent.index] === 'open') {
        const cycle = [...path.slice(path.indexOf(parent.index)), parent.index].map((n) => nodes[n]);
        throw new InvalidFlowError(flow, `has a cycle: ${cycle.join(' → ')} (each waits for the next)`, nodes[i]);
      }
      if (state[parent.index] === 'new') visit(parent.index);
    }
    path.pop();
    state[i] = 'done';
  };
  for (let i = 0; i < jobs.length; i++) if (state[i] === 'new') visit(i);
}
