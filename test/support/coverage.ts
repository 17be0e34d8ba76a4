/**
 * Which states and transitions of a machine real actors took. The full sets come from the
 * machine's definition (every state node; every `on`, `after`, `always`, `onDone` and
 * `onError` transition, one per branch), the taken ones from the actors' `@xstate.microstep`
 * inspection events, matched by identity. A test fails on what is left over.
 */
import type { AnyStateMachine, InspectionEvent, StateValue } from 'xstate';
import { getStateNodes } from 'xstate/graph';

type StateNode = ReturnType<typeof getStateNodes>[number];
type Transition = { eventType: string; target?: readonly StateNode[] | undefined; source: StateNode };

export class MachineCoverage {
  readonly #machine: AnyStateMachine;
  readonly #labels = new Map<unknown, string>();
  readonly #nodes: Array<{ label: string; value: StateValue }>;
  readonly #takenTransitions = new Set<string>();
  readonly #visitedStates = new Set<string>();

  constructor(machine: AnyStateMachine) {
    this.#machine = machine;
    const nodes = [machine.root, ...getStateNodes(machine.root)] as StateNode[];
    for (const node of nodes) {
      for (const [eventType, transitions] of node.transitions) {
        transitions.forEach((t: Transition, i: number) => this.#labels.set(t, label(node, eventType, i, transitions.length, t)));
      }
      node.always?.forEach((t: Transition, i: number, all: unknown[]) => this.#labels.set(t, label(node, 'always', i, all.length, t)));
    }
    this.#nodes = nodes.slice(1).map((node) => ({ label: node.id, value: toStateValue(node.path) }));
  }

  /** Pass as `inspect` to every actor whose steps count. Steps of other machines are ignored. */
  readonly inspect = (event: InspectionEvent): void => {
    if ((event.actorRef as { logic?: unknown }).logic !== this.#machine) return;
    if (event.type === '@xstate.microstep') {
      for (const t of (event as { _transitions: unknown[] })._transitions) {
        const known = this.#labels.get(t);
        if (known) this.#takenTransitions.add(known);
      }
    } else if (event.type !== '@xstate.snapshot') {
      return;
    }
    // Microsteps show the states passed through; snapshots also show the one started in.
    const snapshot = event.snapshot as unknown as { matches(value: StateValue): boolean };
    for (const node of this.#nodes) if (snapshot.matches(node.value)) this.#visitedStates.add(node.label);
  };

  get transitions(): number {
    return this.#labels.size;
  }

  get states(): number {
    return this.#nodes.length;
  }

  missingTransitions(): string[] {
    return [...this.#labels.values()].filter((l) => !this.#takenTransitions.has(l)).sort();
  }

  missingStates(): string[] {
    return this.#nodes.map((n) => n.label).filter((l) => !this.#visitedStates.has(l)).sort();
  }

  summary(): string {
    const t = this.transitions - this.missingTransitions().length;
    const s = this.states - this.missingStates().length;
    return `${t}/${this.transitions} transitions and ${s}/${this.states} states of "${this.#machine.id}"`;
  }
}

function label(node: StateNode, eventType: string, index: number, branches: number, t: Transition): string {
  const targets = t.target?.map((n) => n.id).join(',') ?? '(no target)';
  return `${node.id} --${eventType}${branches > 1 ? `[${index}]` : ''}--> ${targets}`;
}

/** ['running', 'claimer', 'waiting'] → { running: { claimer: 'waiting' } } */
function toStateValue(path: readonly string[]): StateValue {
  return path.slice(0, -1).reduceRight<StateValue>((inner, key) => ({ [key]: inner }), path.at(-1)!);
}
