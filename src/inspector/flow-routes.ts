/**
 * The inspector's reads of flows (docs/workflows.md):
 *   GET /api/flows/:id            the flow: name, state counts, its jobs (summaries) and edges
 *   GET /api/flows/:id/graph.svg  its DAG, each job coloured by state (flow-svg.ts)
 *   GET /api/jobs/:id/flow        the flow a job belongs to ({ flow: null } if none)
 */
import type { FlowRecord } from '../adapters/store.js';
import { HttpError } from './http.js';
import { jobSummary } from './job-json.js';
import { renderFlowSvg } from './flow-svg.js';
import { parseJobId } from './params.js';
import type { ReadContext } from './routes.js';

/** Flow ids are shaped as job ids (a bigint in SQL, a counter in memory). */
export function parseFlowId(segment: string): string {
  return parseJobId(segment, 'flow id');
}

async function readFlow(ctx: ReadContext, id: string): Promise<FlowRecord> {
  const flow = await ctx.store.getFlow({ id });
  if (!flow) throw new HttpError(404, `no flow with id ${id}`);
  return flow;
}

export async function getFlow(ctx: ReadContext, id: string) {
  const flow = await readFlow(ctx, id);
  const counts: Record<string, number> = {};
  for (const { job } of flow.jobs) counts[job.state] = (counts[job.state] ?? 0) + 1;
  return {
    id: flow.id,
    name: flow.name,
    createdAt: flow.createdAt,
    counts,
    jobs: flow.jobs.map(({ node, job }) => ({ node, job: jobSummary(job) })),
    edges: flow.edges,
  };
}

export async function flowSvg(ctx: ReadContext, id: string): Promise<string> {
  return renderFlowSvg(await readFlow(ctx, id));
}

export async function jobFlow(ctx: ReadContext, jobId: string) {
  const flow = await ctx.store.getFlow({ jobId });
  if (!flow) {
    if (!(await ctx.store.getJob({ id: jobId }))) throw new HttpError(404, `no job with id ${jobId}`);
    return { flow: null };
  }
  const node = flow.jobs.find(({ job }) => job.id === jobId)?.node ?? null;
  return { flow: { id: flow.id, name: flow.name, node, jobs: flow.jobs.length } };
}
