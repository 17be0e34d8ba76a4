/**
 * A laid-out machine as a standalone SVG document, optionally with a job's path highlighted.
 * Styling is in presentation attributes, not a <style> element: the file looks right on its
 * own and inside the inspector's page, whose Content-Security-Policy forbids inline styles.
 * Every element carries `data-state` / `data-edge` and the classes `visited` and `current`,
 * for the page and for tests. Only names from the machine end up in the text, escaped.
 */
import type { AnyStateMachine } from 'xstate';
import { escapeXml } from './escape.js';
import type { MachinePath } from './job-path.js';
import { describeMachine } from './machine-graph.js';
import { flattenMachine, labelText, layoutGraph, noteText, type FlatGraph, type Layout } from './machine-layout.js';

const COLORS = {
  node: { fill: '#f6f8fa', stroke: '#8c959f', text: '#1f2328' },
  visited: { fill: '#ddf4ff', stroke: '#0969da', text: '#0a3069' },
  edge: '#afb8c1',
  edgeVisited: '#0969da',
  label: '#57606a',
};

/** Where a job is now, coloured by what it means. */
const CURRENT_FILL: Record<string, string> = {
  completed: '#1a7f37',
  dead: '#cf222e',
  lost: '#cf222e',
  retrying: '#9a6700',
  skipped: '#6e7781',
  cancelled: '#6e7781',
};
const CURRENT_DEFAULT_FILL = '#0969da';

type MachineLayout = Layout & { graph: FlatGraph };
const layouts = new WeakMap<AnyStateMachine, MachineLayout>();

/** Laid out once per machine: a machine does not change. */
export function layoutMachine(machine: AnyStateMachine): MachineLayout {
  let layout = layouts.get(machine);
  if (!layout) {
    const graph = flattenMachine(describeMachine(machine));
    layout = { ...layoutGraph(graph), graph };
    layouts.set(machine, layout);
  }
  return layout;
}

export function renderMachineSvg(machine: AnyStateMachine, path?: MachinePath): string {
  const layout = layoutMachine(machine);
  const visitedStates = new Set(path?.states ?? []);
  const visitedEdges = new Set(path?.edges ?? []);
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" class="machine" viewBox="0 0 ${layout.width} ${layout.height}" ` +
      `width="${layout.width}" height="${layout.height}" role="img" aria-label="${escapeXml(`${machine.id} machine`)}" ` +
      `font-family="ui-sans-serif, system-ui, sans-serif" font-size="13">`,
  );
  out.push('<defs>');
  for (const [id, color] of [['arrow', COLORS.edge], ['arrow-visited', COLORS.edgeVisited]] as const) {
    out.push(
      `<marker id="${id}" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto">` +
        `<path d="M0,0 L10,5 L0,10 z" fill="${color}"/></marker>`,
    );
  }
  out.push('</defs>');

  // Edges first, so nodes paint over their ends; visited ones last, on top of the others.
  const edges = [...layout.edges].sort(
    (a, b) => Number(visitedEdges.has(`${a.source}->${a.target}`)) - Number(visitedEdges.has(`${b.source}->${b.target}`)),
  );
  for (const edge of edges) {
    const key = `${edge.source}->${edge.target}`;
    const visited = visitedEdges.has(key);
    const color = visited ? COLORS.edgeVisited : COLORS.edge;
    out.push(
      `<g class="edge${visited ? ' visited' : ''}" data-edge="${escapeXml(key)}">` +
        `<title>${escapeXml(`${edge.source} → ${edge.target}\n${edge.details.join('\n')}`)}</title>` +
        `<path d="${edge.d}" fill="none" stroke="${color}" stroke-width="${visited ? 2.5 : 1.3}" ` +
        `marker-end="url(#${visited ? 'arrow-visited' : 'arrow'})"/>` +
        `<text x="${edge.labelX}" y="${edge.labelY}" font-size="11" fill="${visited ? COLORS.edgeVisited : COLORS.label}" ` +
        `font-weight="${visited ? 600 : 400}">${escapeXml(labelText(edge))}</text></g>`,
    );
  }

  const initial = layout.nodes.find((node) => node.key === layout.graph.initial);
  if (initial) {
    const y = initial.y + initial.height / 2;
    out.push(
      `<g class="initial"><circle cx="${initial.x - 18}" cy="${y}" r="5" fill="${COLORS.node.text}"/>` +
        `<path d="M${initial.x - 13},${y} L${initial.x - 2},${y}" stroke="${COLORS.node.text}" stroke-width="1.3" marker-end="url(#arrow)"/></g>`,
    );
  }

  for (const node of layout.nodes) {
    const visited = visitedStates.has(node.key);
    const current = path?.current === node.key;
    const colors = visited ? COLORS.visited : COLORS.node;
    const fill = current ? (CURRENT_FILL[node.key] ?? CURRENT_DEFAULT_FILL) : colors.fill;
    const text = current ? '#ffffff' : colors.text;
    const classes = ['node', node.type, ...(visited ? ['visited'] : []), ...(current ? ['current'] : [])].join(' ');
    const note = noteText(node);
    const cx = node.x + node.width / 2;
    out.push(`<g class="${classes}" data-state="${escapeXml(node.key)}"><title>${escapeXml(node.key)}</title>`);
    out.push(
      `<rect x="${node.x}" y="${node.y}" width="${node.width}" height="${node.height}" rx="${node.type === 'final' ? 4 : 10}" ` +
        `fill="${fill}" stroke="${current ? fill : colors.stroke}" stroke-width="${visited || current ? 2 : 1.2}"/>`,
    );
    if (node.type === 'final') {
      out.push(
        `<rect x="${node.x + 3}" y="${node.y + 3}" width="${node.width - 6}" height="${node.height - 6}" rx="2" ` +
          `fill="none" stroke="${current ? '#ffffff' : colors.stroke}" stroke-width="1"/>`,
      );
    }
    out.push(
      `<text x="${cx}" y="${node.y + 22}" text-anchor="middle" fill="${text}" font-weight="${current ? 700 : 500}">${escapeXml(node.key)}</text>`,
    );
    if (note) {
      out.push(
        `<text x="${cx}" y="${node.y + 37}" text-anchor="middle" font-size="10" fill="${current ? '#ffffff' : COLORS.label}">${escapeXml(note)}</text>`,
      );
    }
    out.push('</g>');
  }

  const anyState = layout.graph.fromAnyState;
  if (anyState.length > 0) {
    const note = anyState.map((t) => `${t.label} → ${t.target}`).join('; ');
    out.push(
      `<text class="any-state" x="${layout.width - 8}" y="14" text-anchor="end" font-size="11" fill="${COLORS.label}">` +
        `${escapeXml(`from any state: ${note}`)}</text>`,
    );
  }
  out.push('</svg>');
  return out.join('\n');
}
