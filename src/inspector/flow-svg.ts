/**
 * A flow as an SVG: each job a box coloured by its state, linking to the job's page; an edge
 * from each job to the jobs that wait for it (solid), and from a job to the children it added
 * before continuing (dashed). A job outside the flow that one of its jobs waits for is drawn
 * grey. Every name from a job or the flow is escaped; long ones are cut, whole in the tooltip.
 */
import type { FlowRecord } from '../adapters/store.js';
import type { JobRecord, JobState } from '../types.js';
import { escapeXml } from './escape.js';
import { FLOW_NODE, layoutFlow, type PlacedNode } from './flow-layout.js';

/** Fill and border per state, as the page's state badges (style.css). */
export const FLOW_STATE_COLORS: Record<JobState, { fill: string; stroke: string }> = {
  waiting: { fill: '#ffffff', stroke: '#8c959f' },
  pending: { fill: '#fff8c5', stroke: '#bf8700' },
  running: { fill: '#ddf4ff', stroke: '#0969da' },
  retrying: { fill: '#fff1e5', stroke: '#bc4c00' },
  completed: { fill: '#dafbe1', stroke: '#1a7f37' },
  dead: { fill: '#ffebe9', stroke: '#cf222e' },
  skipped: { fill: '#eef1f4', stroke: '#6e7781' },
  cancelled: { fill: '#f3e8ff', stroke: '#8250df' },
  sleeping: { fill: '#eef2ff', stroke: '#4f46e5' },
};
const OUTSIDE = { fill: '#f6f8fa', stroke: '#d1d9e0' };

/** A box of the drawing: a job of the flow, or one it waits for from outside. */
interface FlowBox {
  id: string;
  node: string | null;
  job: JobRecord | null;
}

/** Characters that fit on a line of a box at the drawing's font sizes. */
const NAME_CHARS = 22;
const DETAIL_CHARS = 28;

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

export function renderFlowSvg(flow: FlowRecord, options: { maxPerLayer?: number } = {}): string {
  const inFlow = new Set(flow.jobs.map(({ job }) => job.id));
  const outside = [...new Set(flow.edges.map((e) => e.dependsOnId).filter((id) => !inFlow.has(id)))];
  const boxes: FlowBox[] = [
    ...flow.jobs.map(({ node, job }) => ({ id: job.id, node, job })),
    ...outside.map((id) => ({ id, node: null, job: null })),
  ].sort((a, b) => Number(a.id) - Number(b.id) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  // A static parent is drawn before the job that waits for it; a job before the children it added.
  const edges = flow.edges.map((e) =>
    e.role === 'parent' ? { from: e.dependsOnId, to: e.jobId, kind: 'parent' } : { from: e.jobId, to: e.dependsOnId, kind: 'child' },
  );
  const layout = layoutFlow({ nodes: boxes, edges, ...(options.maxPerLayer === undefined ? {} : { maxPerLayer: options.maxPerLayer }) });

  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${layout.width}" height="${layout.height}" viewBox="0 0 ${layout.width} ${layout.height}" ` +
      `font-family="system-ui, sans-serif" font-size="13" role="img" aria-label="${escapeXml(`flow ${flow.id} ${flow.name}: its jobs and what each waits for`)}" data-flow-id="${escapeXml(flow.id)}">`,
    '<defs><marker id="flow-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#8c959f"/></marker></defs>',
  ];
  for (const edge of layout.edges) {
    parts.push(
      `<path class="flow-edge ${edge.kind}" data-edge="${escapeXml(`${edge.from}->${edge.to}`)}" d="${edge.d}" fill="none" stroke="#8c959f" stroke-width="1.5"` +
        `${edge.kind === 'child' ? ' stroke-dasharray="5 4"' : ''} marker-end="url(#flow-arrow)"/>`,
    );
  }
  for (const box of layout.nodes) parts.push(box.folded ? foldedBox(box) : jobBox(box));
  parts.push('</svg>');
  return parts.join('\n');
}

function jobBox(box: PlacedNode<FlowBox>): string {
  const { id, node, job } = box.nodes[0]!;
  const colors = job ? FLOW_STATE_COLORS[job.state] : OUTSIDE;
  const name = node ?? `#${id}`;
  const detail = job ? `#${id} · ${job.queue}/${job.kind}` : 'outside this flow';
  const title = job ? `${name}: job ${id}, ${job.queue}/${job.kind}, ${job.state}` : `job ${id}, outside this flow`;
  const { x, y } = box;
  const waiting = job?.state === 'waiting';
  return (
    `<a href="#/jobs/${encodeURIComponent(id)}" class="flow-node" data-job-id="${escapeXml(id)}" data-node="${escapeXml(name)}" data-state="${job?.state ?? 'outside'}">` +
    `<title>${escapeXml(title)}</title>` +
    `<rect x="${x}" y="${y}" width="${FLOW_NODE.width}" height="${FLOW_NODE.height}" rx="8" fill="${colors.fill}" stroke="${colors.stroke}" stroke-width="2"${waiting ? ' stroke-dasharray="6 3"' : ''}/>` +
    `<text x="${x + 10}" y="${y + 20}" font-size="14" font-weight="600" fill="#1f2328">${escapeXml(cut(name, NAME_CHARS))}</text>` +
    `<text x="${x + 10}" y="${y + 37}" fill="#59636e">${escapeXml(cut(detail, DETAIL_CHARS))}</text>` +
    (job ? `<text x="${x + 10}" y="${y + 52}" font-size="12" font-weight="600" fill="${colors.stroke}">${job.state}</text>` : '') +
    '</a>'
  );
}

/** The jobs of a layer past what is drawn: how many, in which states. */
function foldedBox(box: PlacedNode<FlowBox>): string {
  const counts = new Map<string, number>();
  for (const { job } of box.nodes) counts.set(job?.state ?? 'outside', (counts.get(job?.state ?? 'outside') ?? 0) + 1);
  const summary = [...counts].sort(([a], [b]) => (a < b ? -1 : 1)).map(([state, n]) => `${n} ${state}`).join(', ');
  const { x, y } = box;
  return (
    `<g class="flow-more" data-count="${box.nodes.length}">` +
    `<title>${escapeXml(`${box.nodes.length} more jobs in this column: ${summary}`)}</title>` +
    `<rect x="${x}" y="${y}" width="${FLOW_NODE.width}" height="${FLOW_NODE.height}" rx="8" fill="#f6f8fa" stroke="#8c959f" stroke-width="1.5"/>` +
    `<text x="${x + 10}" y="${y + 22}" font-size="14" font-weight="600" fill="#1f2328">+ ${box.nodes.length} more</text>` +
    `<text x="${x + 10}" y="${y + 42}" fill="#59636e">${escapeXml(cut(summary, DETAIL_CHARS))}</text>` +
    '</g>'
  );
}
