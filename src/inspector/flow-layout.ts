/**
 * A flow's jobs laid out as a layered DAG, left to right, for the inspector (flow-svg.ts).
 * Deliberately plain and deterministic (the same flow always gives the same picture):
 * 1. layers by longest path from the jobs that wait for nothing (Kahn's order, ties by id);
 * 2. within a layer, jobs ordered by the mean position of their predecessors (one sweep
 *    from the left), ties by id;
 * 3. a layer wider than `maxPerLayer` shows its first jobs and folds the rest into one
 *    "more" node that takes their edges and counts their states;
 * 4. each column stacked and centred on the tallest.
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

  // 4. Coordinates: columns left to right, each centred on the tallest.
  const { width: w, height: h, gapX, gapY, pad } = FLOW_NODE;
  const tallest = Math.max(0, ...columns.map((c) => c.length));
  const height = pad * 2 + Math.max(1, tallest) * h + Math.max(0, tallest - 1) * gapY;
  const width = pad * 2 + Math.max(1, columns.length) * w + Math.max(0, columns.length - 1) * gapX;
  const placed = new Map<string, PlacedNode<N>>();
  columns.forEach((column, layer) => {
    const columnHeight = column.length * h + Math.max(0, column.length - 1) * gapY;
    const top = (height - columnHeight) / 2;
    column.forEach((box, i) => placed.set(box.key, { ...box, x: pad + layer * (w + gapX), y: top + i * (h + gapY) }));
  });

  const seen = new Set<string>();
  const drawn: PlacedEdge[] = [];
  for (const e of edges) {
    const from = placed.get(boxOf.get(e.from)!)!;
    const to = placed.get(boxOf.get(e.to)!)!;
    const key = `${from.key}->${to.key}:${e.kind}`;
    if (from === to || seen.has(key)) continue;
    seen.add(key);
    drawn.push({ from: from.key, to: to.key, kind: e.kind, d: curve(from, to) });
  }
  return { width, height, nodes: [...placed.values()], edges: drawn };
}

/** A cubic curve from the middle of one box's right side to the middle of the other's left. */
function curve(from: { x: number; y: number }, to: { x: number; y: number }): string {
  const x1 = from.x + FLOW_NODE.width;
  const y1 = from.y + FLOW_NODE.height / 2;
  const x2 = to.x;
  const y2 = to.y + FLOW_NODE.height / 2;
  const bend = Math.max(30, Math.abs(x2 - x1) / 2);
  const r = (n: number) => Math.round(n * 10) / 10;
  return `M${r(x1)},${r(y1)} C${r(x1 + bend)},${r(y1)} ${r(x2 - bend)},${r(y2)} ${r(x2)},${r(y2)}`;
}
