/**
 * The path one job took through the job machine, read from its persisted history: the row
 * records what each attempt ended in (and the error code says how), the machine says which
 * states lie between. Each attempt is a walk from the machine's initial state through
 * waypoints, each leg the shortest path in the drawn graph, so a state added in between
 * (say, a wait for a gate) shows up without a change here.
 */
import type { JobEvent } from '../types.js';
import type { FlatGraph } from './machine-layout.js';

export interface MachinePath {
  /** Top-level machine states visited, in any attempt. */
  states: string[];
  /** Edges taken, as `source->target`. */
  edges: string[];
  /** Where the latest attempt is or ended; null before the first claim. */
  current: string | null;
}

/** What an attempt passed through, after the claim, by the row state it ended in and the
 *  error code written. A rescue by the reaper ended outside the machine: its path stops at
 *  `running`, where the worker was last seen. */
function waypoints(toState: JobEvent['toState'] | null, code: string | undefined): string[] {
  switch (toState) {
    case null:
    case 'running':
      return ['running'];
    case 'completed':
      return ['running', 'completed'];
    case 'retrying':
      if (code === 'worker_shutdown') return ['releasing', 'retrying'];
      if (code === 'lease_expired') return ['running'];
      return ['running', 'failing', 'retrying'];
    case 'dead':
      if (code === 'lease_expired') return ['running'];
      // The claim found a time no job can have in the row and ended it: no actor ran.
      if (code === 'invalid_row') return [];
      return ['running', 'dying', 'dead'];
    case 'skipped':
      return code === 'unknown_kind' ? ['skipping', 'skipped'] : ['running', 'skipping', 'skipped'];
    case 'cancelled':
      return ['running', 'cancelling', 'cancelled'];
    case 'waiting':
      // The handler asked to continue once the children it added are done (src/flows).
      return ['running', 'suspending', 'waiting'];
    case 'sleeping':
      // The handler slept or waits for a signal (docs/durable-jobs.md).
      return ['running', 'sleeping'];
    case 'pending':
      // A snooze: the row waits again, no attempt spent (SnoozeJobError).
      return code === 'snoozed' ? ['running', 'snoozing', 'snoozed'] : [];
  }
}

export function jobMachinePath(graph: FlatGraph, events: readonly JobEvent[]): MachinePath {
  const states = new Set<string>();
  const edges = new Set<string>();
  let current: string | null = null;
  events.forEach((event, i) => {
    if (event.toState !== 'running') return;
    // The attempt's outcome is the next event of the same attempt, if any yet.
    const next = events[i + 1];
    const outcome = next && next.fromState === 'running' && next.attempt === event.attempt ? next : null;
    const walk = [graph.initial];
    for (const waypoint of waypoints(outcome?.toState ?? null, outcome?.error?.code)) {
      const leg = shortestPath(graph, walk.at(-1)!, waypoint);
      if (leg === null) break; // a state this machine does not have: draw what is known
      walk.push(...leg.slice(1));
    }
    walk.forEach((state, j) => {
      states.add(state);
      if (j > 0) edges.add(`${walk[j - 1]}->${state}`);
    });
    current = walk.at(-1)!;
  });
  return { states: [...states], edges: [...edges], current };
}

function shortestPath(graph: FlatGraph, from: string, to: string): string[] | null {
  const previous = new Map<string, string | null>([[from, null]]);
  const queue = [from];
  while (queue.length > 0) {
    const key = queue.shift()!;
    if (key === to) {
      const path = [key];
      for (let step = previous.get(key); step != null; step = previous.get(step)) path.unshift(step);
      return path;
    }
    for (const edge of graph.edges) {
      if (edge.source === key && !previous.has(edge.target)) {
        previous.set(edge.target, key);
        queue.push(edge.target);
      }
    }
  }
  return null;
}
