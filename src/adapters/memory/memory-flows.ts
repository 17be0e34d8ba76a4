import type { FlowRecord, JobDependency } from '../store.js';

/** One edge as the memory store keeps it: `jobId` waits for `dependsOnId`. */
export type MemoryEdge = JobDependency;

/**
 * The memory store's flow graph: flows, each job's flow and node name, the edges both ways,
 * and each waiting job's count of jobs it still waits for (the SQL stores' flows, flow_id,
 * flow_node, job_deps and open_deps of migration 0009). Data only: the store moves the rows.
 */
export class MemoryFlowGraph {
  readonly flows = new Map<string, { id: string; name: string; createdAt: Date }>();
  /** Per job in a flow: its flow and node name. */
  readonly membership = new Map<string, { flowId: string; node: string }>();
  /** Per waiting job, its edges, in insertion order. */
  readonly dependencies = new Map<string, MemoryEdge[]>();
  /** Per job others wait for, the edges that point at it. */
  readonly dependents = new Map<string, MemoryEdge[]>();
  /** Per waiting job, how many jobs it still waits for. */
  readonly open = new Map<string, number>();
  /** Edges whose job's end the waiting job has counted (job_deps.ended, migration 0018): each
   *  end is counted once, until a retry opens the edge again. */
  readonly ended = new WeakSet<MemoryEdge>();
  #nextFlowId = 1;

  addFlow(name: string, createdAt: Date): string {
    const id = String(this.#nextFlowId++);
    this.flows.set(id, { id, name, createdAt });
    return id;
  }

  addEdge(edge: MemoryEdge): void {
    push(this.dependencies, edge.jobId, edge);
    push(this.dependents, edge.dependsOnId, edge);
  }

  hasDependency(jobId: string, name: string): boolean {
    return (this.dependencies.get(jobId) ?? []).some((edge) => edge.name === name);
  }

  /** Forgets a job that was deleted: its own edges (those pointing at it stay, as in SQL). */
  forget(jobId: string): void {
    for (const edge of this.dependencies.get(jobId) ?? []) {
      const rest = (this.dependents.get(edge.dependsOnId) ?? []).filter((e) => e !== edge);
      if (rest.length > 0) this.dependents.set(edge.dependsOnId, rest);
      else this.dependents.delete(edge.dependsOnId);
    }
    this.dependencies.delete(jobId);
    this.open.delete(jobId);
    this.membership.delete(jobId);
  }

  /** The flow's record, with `jobs` filled in by the caller's lookup. */
  flowOf(flowId: string, jobsOf: (flowId: string) => FlowRecord['jobs']): FlowRecord | null {
    const flow = this.flows.get(flowId);
    if (!flow) return null;
    const jobs = jobsOf(flowId);
    const edges = jobs
      .flatMap(({ job }) => this.dependencies.get(job.id) ?? [])
      .map((edge) => ({ ...edge }))
      .sort((a, b) => Number(a.jobId) - Number(b.jobId) || Number(a.dependsOnId) - Number(b.dependsOnId));
    return { id: flow.id, name: flow.name, createdAt: new Date(flow.createdAt.getTime()), jobs, edges };
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
