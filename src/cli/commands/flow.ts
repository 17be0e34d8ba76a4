import { Command } from 'commander';
import type { FlowRecord } from '../../adapters/store.js';
import { FlowNotFoundError, JobNotFoundError } from '../../errors.js';
import { FINAL_JOB_STATES, type JobRecord } from '../../types.js';
import { addConnectionOptions, type ConnectionOptions, withStore } from '../connection.js';
import { errorText, stateStyle, time } from '../format.js';
import { print, printJson } from '../output.js';
import { parseJobId } from '../parse.js';
import { type Paint, painter } from '../terminal.js';

interface FlowOptions extends ConnectionOptions {
  job?: boolean;
  json?: boolean;
}

export function flowCommand(): Command {
  return addConnectionOptions(new Command('flow'))
    .summary('show a flow: each job and its state, as a tree')
    .description(
      'Show a flow (docs/workflows.md): each job with its state, under the job it waits for (a ' +
        "static flow's parent) or the job that added it (a fan-out's children). A job with several parents " +
        'is shown under the first, and names the others.',
    )
    .argument('<id>', 'flow id (the flowId enqueueFlow answered), or a job id with --job', parseJobId)
    .option('--job', '<id> is a job of the flow')
    .option('--json', 'print the flow: {"id", "name", "createdAt", "jobs": [{"node", "job"}], "edges"}')
    .action((id: string, options: FlowOptions) =>
      withStore(options, async ({ store }) => {
        const flow = await store.getFlow(options.job ? { jobId: id } : { id });
        if (!flow) {
          if (options.job) throw new JobNotFoundError(id);
          throw new FlowNotFoundError(id);
        }
        if (options.json) printJson(flow);
        else for (const line of describeFlow(flow, painter(process.stdout))) print(line);
      }),
    );
}

/** The flow as lines: a header, then a tree. Each job under its tree parent: the first job it
 *  waits for as a static parent, or the job that added it as a child. */
export function describeFlow(flow: FlowRecord, paint: Paint): string[] {
  const byId = new Map(flow.jobs.map((entry) => [entry.job.id, entry]));
  const parentsOf = new Map<string, string[]>();
  const treeParent = new Map<string, string>();
  for (const edge of flow.edges) {
    if (edge.role === 'parent') {
      parentsOf.set(edge.jobId, [...(parentsOf.get(edge.jobId) ?? []), edge.dependsOnId]);
      if (!treeParent.has(edge.jobId) && byId.has(edge.dependsOnId)) treeParent.set(edge.jobId, edge.dependsOnId);
    } else if (!treeParent.has(edge.dependsOnId)) {
      treeParent.set(edge.dependsOnId, edge.jobId);
    }
  }
  const under = new Map<string | null, string[]>();
  for (const { job } of flow.jobs) {
    const parent = treeParent.get(job.id) ?? null;
    under.set(parent, [...(under.get(parent) ?? []), job.id]);
  }
  const counts = new Map<string, number>();
  for (const { job } of flow.jobs) counts.set(job.state, (counts.get(job.state) ?? 0) + 1);
  const summary = [...counts].map(([state, n]) => paint(stateStyle(state), `${n} ${state}`)).join(', ');
  const lines = [`flow ${flow.id}  ${flow.name}  created ${time(flow.createdAt)}  (${flow.jobs.length} jobs: ${summary})`];

  const nameOf = (id: string) => byId.get(id)?.node ?? `#${id}`;
  const lineOf = (id: string): string => {
    const { node, job } = byId.get(id)!;
    const parts = [node, `#${job.id}`, `${job.queue}/${job.kind}`, paint(stateStyle(job.state), job.state)];
    const parents = parentsOf.get(id) ?? [];
    if (parents.length > 1 || (parents.length === 1 && treeParent.get(id) !== parents[0])) parts.push(`after ${parents.map(nameOf).join(', ')}`);
    if (job.state === 'waiting') parts.push(`waits for ${waitingFor(flow, job).map(nameOf).join(', ') || '-'}`);
    if (job.error && FINAL_JOB_STATES.includes(job.state) && job.state !== 'completed') parts.push(errorText(job.error));
    return parts.join('  ');
  };
  const walk = (id: string, prefix: string, last: boolean, root: boolean) => {
    lines.push(root ? lineOf(id) : `${prefix}${last ? '└─ ' : '├─ '}${lineOf(id)}`);
    const kids = under.get(id) ?? [];
    const next = root ? '' : `${prefix}${last ? '   ' : '│  '}`;
    kids.forEach((kid, i) => walk(kid, next, i === kids.length - 1, false));
  };
  for (const id of under.get(null) ?? []) walk(id, '', true, true);
  return lines;
}

/** The jobs a waiting job still waits for: those of its edges that have not ended. */
function waitingFor(flow: FlowRecord, job: JobRecord): string[] {
  const state = new Map(flow.jobs.map(({ job: j }) => [j.id, j.state]));
  return flow.edges
    .filter((edge) => edge.jobId === job.id && !FINAL_JOB_STATES.includes(state.get(edge.dependsOnId) ?? 'completed'))
    .map((edge) => edge.dependsOnId);
}
