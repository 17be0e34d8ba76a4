/**
 * Paths that take every edge of a model's graph (every event from every state it can happen
 * in), each from the initial state to an end state: the shortest way to the edge, the edge,
 * the shortest way from there to an end. For models whose simple paths are too many (parallel
 * regions multiply them). With `edgeKey`, edges it names alike count as one: only the
 * shortest path through one of them is kept.
 */
import type { AnyActorLogic, EventFromLogic, SnapshotFrom } from 'xstate';
import { type AdjacencyValue, getAdjacencyMap, type StatePath, type TraversalOptions } from 'xstate/graph';

type Path<L extends AnyActorLogic> = StatePath<SnapshotFrom<L>, EventFromLogic<L>>;
type Step<L extends AnyActorLogic> = Path<L>['steps'][number];

export function edgeCoveringPaths<L extends AnyActorLogic>(
  logic: L,
  options: TraversalOptions<SnapshotFrom<L>, EventFromLogic<L>, undefined> & {
    serializeState: (state: SnapshotFrom<L>) => string;
    isEnd: (state: SnapshotFrom<L>) => boolean;
    edgeKey?: (from: SnapshotFrom<L>, event: EventFromLogic<L>) => string;
  },
): Path<L>[] {
  // Keyed by serialized state, which the map's branded key type does not admit.
  const adjacency = getAdjacencyMap(logic, { ...options, stopWhen: options.isEnd }) as Record<
    string,
    AdjacencyValue<SnapshotFrom<L>, EventFromLogic<L>>
  >;
  const keys = Object.keys(adjacency);
  const stateOf = (key: string) => adjacency[key]!.state;
  type Edge = { from: string; to: string; event: EventFromLogic<L>; id: string };
  const outgoing = new Map<string, Edge[]>(keys.map((k) => [k, []]));
  const incoming = new Map<string, Edge[]>(keys.map((k) => [k, []]));
  for (const from of keys) {
    for (const [eventKey, { event, state }] of Object.entries(adjacency[from]!.transitions)) {
      const id = options.edgeKey ? options.edgeKey(stateOf(from), event) : `${from} ${eventKey}`;
      const edge = { from, to: options.serializeState(state), event, id };
      outgoing.get(from)!.push(edge);
      incoming.get(edge.to)!.push(edge);
    }
  }

  // Breadth first from the start (the map's first key), and backwards from every end. A
  // Map visits the entries added while it is iterated.
  const head = new Map<string, Step<L>[]>([[keys[0]!, [{ state: stateOf(keys[0]!), event: { type: 'xstate.init' } as never }]]]);
  for (const [key, steps] of head) {
    for (const edge of outgoing.get(key)!) {
      if (!head.has(edge.to)) head.set(edge.to, [...steps, { state: stateOf(edge.to), event: edge.event }]);
    }
  }
  const tail = new Map<string, Step<L>[]>(keys.filter((k) => options.isEnd(stateOf(k))).map((k) => [k, []]));
  for (const [key, steps] of tail) {
    for (const edge of incoming.get(key)!) {
      if (!tail.has(edge.from)) tail.set(edge.from, [{ state: stateOf(key), event: edge.event }, ...steps]);
    }
  }

  // One path per edge (per key); two edges may share a path.
  const paths = new Map<string, Path<L>>();
  for (const edges of outgoing.values()) {
    for (const edge of edges) {
      const before = head.get(edge.from);
      const after = tail.get(edge.to);
      if (!before || !after) continue;
      const steps = [...before, { state: stateOf(edge.to), event: edge.event }, ...after];
      const known = paths.get(edge.id);
      if (!known || known.steps.length > steps.length) paths.set(edge.id, { state: steps.at(-1)!.state, steps, weight: steps.length - 1 });
    }
  }
  return [...paths.values()];
}
