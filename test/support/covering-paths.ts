/**
 * Few paths that between them take every edge (as `edgeKey` names it: a state, an event)
 * that the given paths take. Greedy: the path with the most new edges per step, until none
 * is left; an index from edge to paths keeps it fast for thousands of paths.
 */
export function coveringPaths<P extends { steps: ReadonlyArray<{ state: S; event: E }> }, S, E>(
  paths: readonly P[],
  edgeKey: (from: S, event: E) => string,
): P[] {
  const edges = paths.map((path) => new Set(path.steps.slice(1).map((step, i) => edgeKey(path.steps[i]!.state, step.event))));
  const pathsOf = new Map<string, number[]>();
  edges.forEach((set, i) => set.forEach((edge) => pathsOf.set(edge, [...(pathsOf.get(edge) ?? []), i])));
  const gain = edges.map((set) => set.size);
  const chosen: P[] = [];
  for (;;) {
    let best = -1;
    gain.forEach((g, i) => {
      if (g > 0 && (best < 0 || g / paths[i]!.steps.length > gain[best]! / paths[best]!.steps.length)) best = i;
    });
    if (best < 0) return chosen;
    chosen.push(paths[best]!);
    for (const edge of edges[best]!) {
      for (const i of pathsOf.get(edge) ?? []) gain[i]! -= 1;
      pathsOf.delete(edge);
    }
  }
}
