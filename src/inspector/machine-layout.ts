/**
 * A machine's top-level states as a graph, laid out in layers from left to right, for the
 * inspector's SVG (machine-svg.ts). Nested states are not drawn: a transition from or to a
 * nested state is drawn from or to its top-level ancestor, and what happens inside a state
 * is named under it.
 *
 * The classic layered layout, small enough to write here:
 * 1. back edges (those closing a cycle) found by a depth-first walk from the initial state;
 * 2. layers by longest path over the other edges, every other layer left for edge labels
 *    (as Graphviz does), so a label takes room like a node and never sits on another one;
 * 3. an edge spanning several layers passes through a chain of dummy points, one per layer,
 *    the first carrying its label;
 * 4. order within a layer by barycenter sweeps, then each column stacked and nudged toward
 *    its neighbours' heights;
 * 5. edges drawn straight along columns and curved only across the gaps between them, which
 *    hold no box; a back edge runs under the whole drawing, on a lane of its own.
 */
import { allStates, type StateInfo } from './machine-graph.js';

export interface FlatNode {
  key: string;
  type: StateInfo['type'];
  /** Nested state keys. */
  children: string[];
  /** Transitions that stay inside this state (heartbeats, retried writes), as labels. */
  loops: string[];
}

export interface FlatEdge {
  source: string;
  target: string;
  /** Distinct event labels, for the drawing. */
  labels: string[];
  /** Every transition with its guard, for the tooltip. */
  details: string[];
}

export interface FlatGraph {
  initial: string;
  nodes: FlatNode[];
  edges: FlatEdge[];
  /** Transitions defined on the machine itself: taken from any state. */
  fromAnyState: Array<{ target: string; label: string }>;
}

export function flattenMachine(root: StateInfo): FlatGraph {
  const topOf = new Map<string, string>();
  for (const top of root.children) for (const state of allStates(top)) topOf.set(state.id, top.key);
  const nodes = root.children.map(
    (top): FlatNode => ({ key: top.key, type: top.type, children: top.children.map((c) => c.key), loops: [] }),
  );
  const nodeByKey = new Map(nodes.map((node) => [node.key, node]));
  const edges = new Map<string, FlatEdge>();
  const fromAnyState: FlatGraph['fromAnyState'] = [];
  for (const state of allStates(root)) {
    for (const t of state.transitions) {
      const detail = t.guard ? `${t.label} [${t.guard}]` : t.label;
      for (const targetId of t.targets) {
        const target = topOf.get(targetId);
        if (target === undefined) continue;
        const source = topOf.get(state.id);
        if (source === undefined) {
          fromAnyState.push({ target, label: detail });
        } else if (source === target) {
          const loops = nodeByKey.get(source)!.loops;
          if (!loops.includes(t.label)) loops.push(t.label);
        } else {
          const key = edgeKey({ source, target });
          const edge = edges.get(key) ?? { source, target, labels: [], details: [] };
          if (!edge.labels.includes(t.label)) edge.labels.push(t.label);
          edge.details.push(detail);
          edges.set(key, edge);
        }
      }
    }
  }
  return { initial: root.initial ?? nodes[0]?.key ?? '', nodes, edges: [...edges.values()], fromAnyState };
}

export function edgeKey(edge: { source: string; target: string }): string {
  return `${edge.source}->${edge.target}`;
}

export function labelText(edge: FlatEdge): string {
  return edge.labels.join(', ');
}

const MAX_NOTE = 44;

/** The line under a state's name: the regions of a parallel state, what loops inside. */
export function noteText(node: FlatNode): string {
  const parts: string[] = [];
  if (node.type === 'parallel') parts.push(node.children.join(' ∥ '));
  if (node.loops.length > 0) parts.push(`↻ ${node.loops.join(', ')}`);
  const note = parts.join('  ');
  return note.length > MAX_NOTE ? `${note.slice(0, MAX_NOTE - 1)}…` : note;
}

export interface PlacedNode extends FlatNode {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface PlacedEdge extends FlatEdge {
  /** SVG path data. */
  d: string;
  /** Where the label's baseline starts (text-anchor start). */
  labelX: number;
  labelY: number;
  /** Drawn against the flow (a cycle), below the nodes. */
  back: boolean;
}

export interface Layout {
  width: number;
  height: number;
  nodes: PlacedNode[];
  edges: PlacedEdge[];
}

const CHAR_WIDTH = 7.4;
const NOTE_CHAR_WIDTH = 5.8;
const LABEL_CHAR_WIDTH = 6.2;
const NODE_HEIGHT = 34;
const NOTE_HEIGHT = 14;
const LABEL_HEIGHT = 15;
const DUMMY_HEIGHT = 6;
const COLUMN_GAP = 36;
const ROW_GAP = 14;
const MARGIN = 24;
/** Under the lowest box, the first back edge's lane; each next one lower, with room for its label. */
const BACK_EDGE_DROP = 24;
const BACK_EDGE_LANE = 22;

/** A box in a column: a state, an edge's label, or a point an edge passes through. */
interface Box {
  id: string;
  layer: number;
  width: number;
  height: number;
  y: number;
  node?: FlatNode;
}

export function layoutGraph(graph: FlatGraph): Layout {
  const keys = graph.nodes.map((node) => node.key);
  const back = findBackEdges(graph, keys);
  const forward = graph.edges.filter((edge) => !back.has(edgeKey(edge)));
  const rank = longestPathRanks(keys, forward);

  const boxes = new Map<string, Box>();
  for (const node of graph.nodes) {
    boxes.set(node.key, { id: node.key, layer: 2 * rank.get(node.key)!, width: nodeWidth(node), height: nodeHeight(node), y: 0, node });
  }
  // Each forward edge: a chain of boxes through the layers between its ends.
  const chains = new Map<string, string[]>();
  for (const edge of forward) {
    const from = boxes.get(edge.source)!.layer;
    const to = boxes.get(edge.target)!.layer;
    const chain = [edge.source];
    for (let layer = from + 1; layer < to; layer++) {
      const id = `${edgeKey(edge)}#${layer}`;
      const isLabel = layer === from + 1;
      boxes.set(id, {
        id,
        layer,
        width: isLabel ? Math.ceil(labelText(edge).length * LABEL_CHAR_WIDTH) + 8 : 0,
        height: isLabel ? LABEL_HEIGHT : DUMMY_HEIGHT,
        y: 0,
      });
      chain.push(id);
    }
    chain.push(edge.target);
    chains.set(edgeKey(edge), chain);
  }
  const links = [...chains.values()].flatMap((chain) => chain.slice(1).map((id, i) => [chain[i]!, id] as const));

  const columns = orderColumns(boxes, links, keys);
  const columnX: number[] = [];
  const columnWidth = columns.map((column) => Math.max(0, ...column.map((id) => boxes.get(id)!.width)));
  let x = MARGIN + 16; // room for the initial marker
  for (let i = 0; i < columns.length; i++) {
    columnX.push(x);
    x += columnWidth[i]! + COLUMN_GAP;
  }
  placeVertically(columns, boxes, links);

  const nodes: PlacedNode[] = graph.nodes.map((node) => {
    const box = boxes.get(node.key)!;
    return { ...node, width: box.width, height: box.height, y: box.y, x: columnX[box.layer]! + (columnWidth[box.layer]! - box.width) / 2 };
  });
  const placed = new Map(nodes.map((node) => [node.key, node]));
  const at: Columns = { x: columnX, width: columnWidth };
  const bottom = Math.max(0, ...[...boxes.values()].map((box) => box.y + box.height));
  const backEdges = graph.edges.filter((edge) => !chains.has(edgeKey(edge)));
  const edges = graph.edges.map((edge): PlacedEdge => {
    const chain = chains.get(edgeKey(edge));
    return chain ? routeForward(edge, chain, boxes, placed, at) : routeBack(edge, backEdges.indexOf(edge), bottom, boxes, placed, at);
  });

  return {
    width: Math.ceil(x - COLUMN_GAP + MARGIN),
    height: Math.ceil(bottom + MARGIN + (backEdges.length > 0 ? BACK_EDGE_DROP + (backEdges.length - 1) * BACK_EDGE_LANE : 0)),
    nodes,
    edges,
  };
}

function nodeWidth(node: FlatNode): number {
  return Math.ceil(Math.max(node.key.length * CHAR_WIDTH + 30, noteText(node).length * NOTE_CHAR_WIDTH + 20, 84));
}

function nodeHeight(node: FlatNode): number {
  return NODE_HEIGHT + (noteText(node) ? NOTE_HEIGHT : 0);
}

/** Edges that close a cycle, found walking depth-first from the initial state. */
function findBackEdges(graph: FlatGraph, keys: string[]): Set<string> {
  const out = new Map<string, string[]>(keys.map((key) => [key, []]));
  for (const edge of graph.edges) out.get(edge.source)?.push(edge.target);
  const back = new Set<string>();
  const state = new Map<string, 'open' | 'done'>();
  const visit = (key: string) => {
    state.set(key, 'open');
    for (const next of out.get(key) ?? []) {
      if (state.get(next) === 'open') back.add(`${key}->${next}`);
      else if (!state.has(next)) visit(next);
    }
    state.set(key, 'done');
  };
  for (const key of [graph.initial, ...keys]) if (!state.has(key)) visit(key);
  return back;
}

/** Longest path from a source, so every forward edge goes at least one rank right. */
function longestPathRanks(keys: string[], forward: FlatEdge[]): Map<string, number> {
  const rank = new Map(keys.map((key) => [key, 0]));
  // Relaxing |V| times settles any DAG; machines have a few dozen states at most.
  for (let i = 0; i < keys.length; i++) {
    for (const edge of forward) {
      const next = rank.get(edge.source)! + 1;
      if (next > rank.get(edge.target)!) rank.set(edge.target, next);
    }
  }
  return rank;
}

function orderColumns(boxes: Map<string, Box>, links: ReadonlyArray<readonly [string, string]>, keys: string[]): string[][] {
  const count = Math.max(0, ...[...boxes.values()].map((box) => box.layer)) + 1;
  const columns: string[][] = Array.from({ length: count }, () => []);
  // Start from definition order: states, then edge boxes in the order of their edges.
  const definitionOrder = [...keys, ...[...boxes.keys()].filter((id) => !keys.includes(id))];
  for (const id of definitionOrder) columns[boxes.get(id)!.layer]!.push(id);
  const sweep = (layer: number, side: 0 | 1) => {
    const position = new Map(columns.flatMap((column) => column.map((id, i) => [id, i] as const)));
    const weight = new Map<string, number>();
    for (const id of columns[layer]!) {
      const neighbours = links.filter((link) => link[1 - side] === id).map((link) => position.get(link[side])!);
      weight.set(id, neighbours.length === 0 ? position.get(id)! : neighbours.reduce((a, b) => a + b, 0) / neighbours.length);
    }
    columns[layer]!.sort((a, b) => weight.get(a)! - weight.get(b)!);
  };
  for (let round = 0; round < 6; round++) {
    for (let layer = 1; layer < count; layer++) sweep(layer, 0);
    for (let layer = count - 2; layer >= 0; layer--) sweep(layer, 1);
  }
  return columns;
}

/** Stack each column, then nudge boxes toward the mean height of what they link to,
 *  keeping their order and gaps. */
function placeVertically(columns: string[][], boxes: Map<string, Box>, links: ReadonlyArray<readonly [string, string]>): void {
  const centre = (box: Box) => box.y + box.height / 2;
  for (const column of columns) {
    let y = MARGIN;
    for (const id of column) {
      const box = boxes.get(id)!;
      box.y = y;
      y += box.height + ROW_GAP;
    }
  }
  for (let round = 0; round < 12; round++) {
    for (const column of columns) {
      const wanted = column.map((id) => {
        const box = boxes.get(id)!;
        const others = links.filter((link) => link.includes(id)).map((link) => boxes.get(link[0] === id ? link[1] : link[0])!);
        return others.length === 0 ? box.y : others.reduce((sum, other) => sum + centre(other), 0) / others.length - box.height / 2;
      });
      // Keep order and gaps: push down from the top, then up from the bottom.
      let floor = MARGIN;
      column.forEach((id, i) => {
        const box = boxes.get(id)!;
        box.y = Math.max(wanted[i]!, floor);
        floor = box.y + box.height + ROW_GAP;
      });
      for (let i = column.length - 2; i >= 0; i--) {
        const box = boxes.get(column[i]!)!;
        const below = boxes.get(column[i + 1]!)!;
        box.y = Math.max(i === 0 ? MARGIN : 0, Math.min(box.y, below.y - ROW_GAP - box.height));
      }
    }
  }
  // Nothing above the margin.
  const top = Math.min(...[...boxes.values()].map((box) => box.y));
  for (const box of boxes.values()) box.y += MARGIN - top;
}

/** Where the columns are: each one's left x and width. */
interface Columns {
  x: number[];
  width: number[];
}

function routeForward(edge: FlatEdge, chain: string[], boxes: Map<string, Box>, placed: Map<string, PlacedNode>, columns: Columns): PlacedEdge {
  const source = placed.get(edge.source)!;
  const target = placed.get(edge.target)!;
  const left = (id: string) => columns.x[boxes.get(id)!.layer]!;
  const right = (id: string) => left(id) + columns.width[boxes.get(id)!.layer]!;
  // Pairs of points along a column (straight), curves across the gaps between columns, which
  // hold no box. A state narrower than its column is reached along the column too, not by a
  // curve through the corner of a wider box above or below it.
  const sy = source.y + source.height / 2;
  const ty = target.y + target.height / 2;
  const points: Array<[number, number]> = [
    [source.x + source.width, sy],
    [right(edge.source), sy],
  ];
  // The line runs along the bottom of its label box and straight through dummy points.
  let labelX = 0;
  let labelY = 0;
  for (const id of chain.slice(1, -1)) {
    const box = boxes.get(id)!;
    const y = box.height === LABEL_HEIGHT ? box.y + box.height : box.y + box.height / 2;
    if (box.height === LABEL_HEIGHT) {
      labelX = left(id) + (columns.width[box.layer]! - box.width) / 2 + 4;
      labelY = y - 4;
    }
    points.push([left(id), y], [right(id), y]);
  }
  points.push([left(edge.target), ty], [target.x, ty]);
  let d = `M${round(points[0]![0])},${round(points[0]![1])}`;
  for (let i = 1; i < points.length; i++) {
    const [x0, y0] = points[i - 1]!;
    const [x1, y1] = points[i]!;
    if (i % 2 === 0) {
      const bend = (x1 - x0) / 2;
      d += ` C${round(x0 + bend)},${round(y0)} ${round(x1 - bend)},${round(y1)} ${round(x1)},${round(y1)}`;
    } else if (x1 !== x0) {
      d += ` L${round(x1)},${round(y1)}`;
    }
  }
  return { ...edge, back: false, d, labelX: round(labelX), labelY: round(labelY) };
}

/**
 * An edge against the flow (closing a cycle), on a lane of its own under the whole drawing:
 * out of its source's left side, down the gap before the source's column, left under every
 * box, up the gap after the target's column, into the target's right side. Its ends sit
 * low on those sides, apart from the forward edges, which meet a state at mid-height.
 */
function routeBack(edge: FlatEdge, lane: number, bottom: number, boxes: Map<string, Box>, placed: Map<string, PlacedNode>, columns: Columns): PlacedEdge {
  const s = placed.get(edge.source)!;
  const t = placed.get(edge.target)!;
  const sourceLayer = boxes.get(edge.source)!.layer;
  const targetLayer = boxes.get(edge.target)!.layer;
  // Deeper lanes rise nearer their columns, so that lanes do not cross each other.
  const shift = Math.min(lane * 4, COLUMN_GAP / 2 - 4);
  const down = columns.x[sourceLayer]! - COLUMN_GAP / 2 + shift;
  const up = columns.x[targetLayer]! + columns.width[targetLayer]! + COLUMN_GAP / 2 - shift;
  const low = bottom + BACK_EDGE_DROP + lane * BACK_EDGE_LANE;
  const sy = s.y + (s.height * 3) / 4;
  const ty = t.y + (t.height * 3) / 4;
  const d = rounded([
    [s.x, sy],
    [down, sy],
    [down, low],
    [up, low],
    [up, ty],
    [t.x + t.width, ty],
  ]);
  return {
    ...edge,
    back: true,
    d,
    labelX: round((down + up) / 2 - (labelText(edge).length * LABEL_CHAR_WIDTH) / 2),
    labelY: round(low - 4),
  };
}

/** A path along straight segments, its corners rounded. */
function rounded(points: ReadonlyArray<readonly [number, number]>, radius = 8): string {
  let d = `M${round(points[0]![0])},${round(points[0]![1])}`;
  for (let i = 1; i < points.length - 1; i++) {
    const [px, py] = points[i - 1]!;
    const [x, y] = points[i]!;
    const [nx, ny] = points[i + 1]!;
    const r = Math.min(radius, Math.hypot(x - px, y - py) / 2, Math.hypot(nx - x, ny - y) / 2);
    const toward = (fx: number, fy: number) => {
      const length = Math.hypot(fx - x, fy - y) || 1;
      return `${round(x + ((fx - x) * r) / length)},${round(y + ((fy - y) * r) / length)}`;
    };
    d += ` L${toward(px, py)} Q${round(x)},${round(y)} ${toward(nx, ny)}`;
  }
  const [lx, ly] = points[points.length - 1]!;
  return `${d} L${round(lx)},${round(ly)}`;
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}
