/**
 * A flow's jobs laid out as a layered DAG, left to right, for the inspector (flow-svg.ts).
 * Deliberately plain and deterministic (the same flow always gives the same picture):
 * 1. layers by longest path from the jobs that wait for nothing (Kahn's order, ties by id);
 * 2. within a layer, jobs ordered by the mean position of their predecessors (one sweep
 *    from the left), ties by id;
 * 3. a layer wider than `maxPerLayer` shows its first jobs and folds the rest into one
 *    "more" node that takes their edges and counts their states;
 * 4. each column stacked and centred on the tallest; an edge that skips layers runs through
 *    a gap of each column it crosses, on a lane of its own (the gap widened to hold its
 *    lanes), so that no edge passes under a box it does not connect.
 * A cycle cannot be stored (enqueueFlow refuses one), but were there one, its jobs would go
 * in a last layer rather than loop.
 */

export interface LayoutInput<N extends { id: string }> {
  /** In the order ties are broken in (the caller sorts by id). */
  nodes: readonly N[];
  /** `from` is drawn before `to`. Edges naming an unknown node are ignored. */
  edges: ReadonlyArray<{ from: string; to: string; kind: string }>;
  maxPerLayer?: number;
}

export interface PlacedNode<N> {
  /** The node's id, or `more:<layer>` for a fold. */
  key: string;
  x: number;
  y: number;
  layer: number;
  /** One job, or the jobs a fold holds (first ones in layer order). */
  nodes: N[];
  folded: boolean;
}

export interface PlacedEdge {
  from: string;
  to: string;
  kind: string;
  /** SVG path data, from the right side of `from` to the left side of `to`. */
  d: string;
}

export interface FlowLayout<N> {
  width: number;
  height: number;
  nodes: Array<PlacedNode<N>>;
  edges: PlacedEdge[];
}

export const FLOW_NODE = { width: 190, height: 58, gapX: 80, gapY: 18, pad: 20 } as const;
const DEFAULT_MAX_PER_LAYER = 25;

export function layoutFlow<N extends { id: string }>(input: LayoutInput<N>): FlowLayout<N> {
  const maxPerLayer = Math.max(2, input.maxPerLayer ?? DEFAULT_MAX_PER_LAYER);
  const rank = new Map(input.nodes.map((node, i) => [node.id, i]));
  const byId = new Map(input.nodes.map((node) => [node.id, node]));
  const edges = input.edges.filter((e) => rank.has(e.from) && rank.has(e.to) && e.from !== e.to);
  const preds = new Map<string, string[]>();
  const succs = new Map<string, string[]>();
  for (const e of edges) {
    preds.set(e.to, [...(preds.get(e.to) ?? []), e.from]);
    succs.set(e.from, [...(succs.get(e.from) ?? []), e.to]);
  }

  // 1. Longest path layers, in Kahn's order (ready jobs taken by rank).
  const layerOf = new Map<string, number>();
  const open = new Map(input.nodes.map((node) => [node.id, new Set(preds.get(node.id) ?? []).size]));
  let ready = input.nodes.filter((node) => open.get(node.id) === 0).map((node) => node.id);
  while (ready.length > 0) {
    const next: string[] = [];
    for (const id of ready) {
      layerOf.set(id, Math.max(0, ...(preds.get(id) ?? []).map((p) => (layerOf.get(p) ?? -1) + 1)));
      for (const s of new Set(succs.get(id) ?? [])) {
        const left = open.get(s)! - 1;
        open.set(s, left);
        if (left === 0) next.push(s);
      }
    }
    ready = next.sort((a, b) => rank.get(a)! - rank.get(b)!);
  }
  const deepest = Math.max(-1, ...layerOf.values());
  for (const node of input.nodes) if (!layerOf.has(node.id)) layerOf.set(node.id, deepest + 1);

  // 2. Order within each layer by the mean position of predecessors already placed.
  const layerCount = Math.max(0, ...layerOf.values()) + 1;
  const layers: string[][] = Array.from({ length: input.nodes.length === 0 ? 0 : layerCount }, () => []);
  for (const node of input.nodes) layers[layerOf.get(node.id)!]!.push(node.id);
  const position = new Map<string, number>();
  layers.forEach((ids, layer) => {
    const score = (id: string) => {
      const placed = (preds.get(id) ?? []).filter((p) => layerOf.get(p)! < layer && position.has(p));
      return placed.length === 0 ? Number.POSITIVE_INFINITY : placed.reduce((sum, p) => sum + position.get(p)!, 0) / placed.length;
    };
    const scores = new Map(ids.map((id) => [id, score(id)]));
    ids.sort((a, b) => {
      const sa = scores.get(a)!;
      const sb = scores.get(b)!;
      return sa === sb ? rank.get(a)! - rank.get(b)! : sa < sb ? -1 : 1;
    });
    // Positions as fractions of the layer, so layers of different sizes compare.
    ids.forEach((id, i) => position.set(id, ids.length === 1 ? 0.5 : i / (ids.length - 1)));
  });

  // 3. Fold what does not fit; every job maps to the key of the box that shows it.
  const boxOf = new Map<string, string>();
  const columns: Array<Array<Omit<PlacedNode<N>, 'x' | 'y'>>> = layers.map((ids, layer) => {
    const shown = ids.length > maxPerLayer ? ids.slice(0, maxPerLayer - 1) : ids;
    const column = shown.map((id) => {
      boxOf.set(id, id);
      return { key: id, layer, nodes: [byId.get(id)!], folded: false };
    });
    if (shown.length < ids.length) {
      const key = `more:${layer}`;
      const rest = ids.slice(shown.length);
      for (const id of rest) boxOf.set(id, key);
      column.push({ key, layer, nodes: rest.map((id) => byId.get(id)!), folded: true });
    }
    return column;
  });

  // 4. Coordinates: columns left to right, each centred on the tallest. An edge that skips
  //    layers passes each column it crosses through a gap between boxes (or above or below
  //    them), on a lane of its own, never under a box; a gap widens to hold its lanes.
  const { width: w, height: h, gapX, pad } = FLOW_NODE;
  const width = pad * 2 + Math.max(1, columns.length) * w + Math.max(0, columns.length - 1) * gapX;
  const columnX = (layer: number) => pad + layer * (w + gapX);
  const noLanes = columns.map((column) => Array.from({ length: column.length + 1 }, () => 0));
  const first = stack(columns, noLanes);
  const drawn: Array<{ key: string; from: string; to: string; kind: string; gaps: number[] }> = [];
  const seen = new Set<string>();
  for (const e of edges) {
    const from = first.placed.get(boxOf.get(e.from)!)!;
    const to = first.placed.get(boxOf.get(e.to)!)!;
    const key = `${from.key}->${to.key}:${e.kind}`;
    if (from === to || seen.has(key)) continue;
    seen.add(key);
    // The gap of each column crossed nearest the straight line from source to target.
    const gaps: number[] = [];
    for (let layer = from.layer + 1; layer < to.layer; layer++) {
      const along = from.y + ((to.y - from.y) * (layer - from.layer)) / (to.layer - from.layer) + h / 2;
      const middles = first.gaps[layer]!.map(([top, bottom]) => (top + bottom) / 2);
      gaps.push(middles.reduce((best, y, i) => (Math.abs(y - along) < Math.abs(middles[best]! - along) ? i : best), 0));
    }
    drawn.push({ key, from: from.key, to: to.key, kind: e.kind, gaps });
  }
  const lanes = columns.map((column) => Array.from({ length: column.length + 1 }, () => 0));
  for (const edge of drawn) edge.gaps.forEach((gap, i) => (lanes[first.placed.get(edge.from)!.layer + 1 + i]![gap]! += 1));
  const { placed, gaps, height } = stack(columns, lanes);

  // Lanes, column by column from the left: in each gap, ordered by where their edges come
  // from (then go to), so that edges sharing a gap do not cross in it.
  const centre = (key: string) => placed.get(key)!.y + h / 2;
  const ys = new Map(drawn.map((edge) => [edge, [centre(edge.from)]]));
  for (let layer = 1; layer < columns.length; layer++) {
    const inGap = new Map<number, typeof drawn>();
    for (const edge of drawn) {
      const gap = edge.gaps[layer - placed.get(edge.from)!.layer - 1];
      if (gap !== undefined) inGap.set(gap, [...(inGap.get(gap) ?? []), edge]);
    }
    for (const [gap, here] of inGap) {
      const [top, bottom] = gaps[layer]![gap]!;
      here.sort((a, b) => ys.get(a)!.at(-1)! - ys.get(b)!.at(-1)! || centre(a.to) - centre(b.to) || (a.key < b.key ? -1 : 1));
      here.forEach((edge, i) => ys.get(edge)!.push(top + ((bottom - top) * (i + 1)) / (here.length + 1)));
    }
  }

  const routed: PlacedEdge[] = drawn.map((edge) => {
    const from = placed.get(edge.from)!;
    const to = placed.get(edge.to)!;
    if (edge.gaps.length === 0) return { from: edge.from, to: edge.to, kind: edge.kind, d: curve(from, to) };
    const points = ys.get(edge)!.slice(1).flatMap((y, i) => [
      { x: columnX(from.layer + 1 + i), y },
      { x: columnX(from.layer + 1 + i) + w, y },
    ]);
    return { from: edge.from, to: edge.to, kind: edge.kind, d: through(from, points, to) };
  });
  return { width, height, nodes: [...placed.values()], edges: routed };
}

/** Room for each lane an edge runs on, and between a lane and a box. */
const LANE = 6;

/**
 * Each column stacked and centred on the tallest, its gaps widened for the lanes they hold
 * (`lanes[layer][gap]`: gap 0 above the first box, gap i above box i, the last one below
 * the last box). Returns where each box goes and each gap's band, [top, bottom], that its
 * lanes share out; above and below a column, the band next to the box.
 */
function stack<N>(
  columns: ReadonlyArray<ReadonlyArray<Omit<PlacedNode<N>, 'x' | 'y'>>>,
  lanes: readonly number[][],
): { placed: Map<string, PlacedNode<N>>; gaps: Array<Array<[number, number]>>; height: number } {
  const { width: w, height: h, gapX, gapY, pad } = FLOW_NODE;
  const band = (n: number) => Math.max(gapY, (n + 1) * LANE);
  // Above and below a column, lanes take room only when they run there, and move its boxes
  // only when the drawing has no room for them: the drawing grows by both sides, so that
  // the column stays centred.
  const outer = (n: number) => (n === 0 ? 0 : band(n));
  const heights = columns.map((column, layer) => column.length * h + lanes[layer]!.slice(1, -1).reduce((sum, n) => sum + band(n), 0));
  const needs = columns.map((_, layer) => heights[layer]! + 2 * Math.max(outer(lanes[layer]![0]!), outer(lanes[layer]!.at(-1)!)));
  const height = pad * 2 + Math.max(h, ...needs);
  const placed = new Map<string, PlacedNode<N>>();
  const gaps = columns.map((column, layer) => {
    const counts = lanes[layer]!;
    let y = (height - heights[layer]!) / 2;
    const bands: Array<[number, number]> = [[y - band(counts[0]!), y]];
    column.forEach((box, i) => {
      placed.set(box.key, { ...box, x: pad + layer * (w + gapX), y });
      y += h;
      bands.push([y, y + band(counts[i + 1]!)]);
      y += band(counts[i + 1]!);
    });
    return bands;
  });
  return { placed, gaps, height };
}

const r = (n: number) => Math.round(n * 10) / 10;

/** A cubic curve from the middle of one box's right side to the middle of the other's left. */
function curve(from: { x: number; y: number }, to: { x: number; y: number }): string {
  const x1 = from.x + FLOW_NODE.width;
  const y1 = from.y + FLOW_NODE.height / 2;
  const x2 = to.x;
  const y2 = to.y + FLOW_NODE.height / 2;
  const bend = Math.max(30, Math.abs(x2 - x1) / 2);
  return `M${r(x1)},${r(y1)} C${r(x1 + bend)},${r(y1)} ${r(x2 - bend)},${r(y2)} ${r(x2)},${r(y2)}`;
}

/** From one box to another through `points`, pairs that run straight across the columns in
 *  between: a curve across each gap between columns (which holds no box), a line along each
 *  column. */
function through(from: { x: number; y: number }, points: ReadonlyArray<{ x: number; y: number }>, to: { x: number; y: number }): string {
  const all = [{ x: from.x + FLOW_NODE.width, y: from.y + FLOW_NODE.height / 2 }, ...points, { x: to.x, y: to.y + FLOW_NODE.height / 2 }];
  let d = `M${r(all[0]!.x)},${r(all[0]!.y)}`;
  for (let i = 1; i < all.length; i++) {
    const a = all[i - 1]!;
    const b = all[i]!;
    const bend = (b.x - a.x) / 2;
    d += i % 2 === 1 ? ` C${r(a.x + bend)},${r(a.y)} ${r(b.x - bend)},${r(b.y)} ${r(b.x)},${r(b.y)}` : ` L${r(b.x)},${r(b.y)}`;
  }
  return d;
}
