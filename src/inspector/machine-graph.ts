/**
 * A machine's states and transitions as plain data, read from its state nodes (the live form
 * of `machine.definition`), for the diagrams: Mermaid, JSON and the inspector's SVG.
 *
 * Read from `machine.root` rather than `machine.definition` or xstate/graph's
 * `toDirectedGraph`: both leave out eventless (`always`) transitions, and the definition
 * drops guards built with `and`/`or`/`not`.
 */
import type { AnyStateMachine, AnyStateNode } from 'xstate';

export type TransitionKind = 'event' | 'after' | 'always' | 'done' | 'error';

export interface TransitionInfo {
  kind: TransitionKind;
  /** The XState event type, e.g. `job.start`, `xstate.after.writeRetry.job.completing.retryWait`; '' for always. */
  eventType: string;
  /** Short, for a diagram: `job.start`, `after writeRetry`, `always`, `done claim`. */
  label: string;
  /** e.g. `hasDeadline && attemptsLeft`; null when unguarded. */
  guard: string | null;
  /** State ids (`job.running`); empty for a targetless transition (actions only). */
  targets: string[];
  reenter: boolean;
  actions: string[];
  /** The delay's name or ms, for `after`. */
  delay?: string | number;
  /** The invoked actor's id, for `done` and `error` of an invoke. */
  invokeId?: string;
}

export interface StateInfo {
  /** e.g. `job.running.working` */
  id: string;
  key: string;
  /** Keys from the root down; empty for the root. */
  path: string[];
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  /** The key of the initial child, for a compound state. */
  initial: string | null;
  entry: string[];
  exit: string[];
  invoke: Array<{ id: string; src: string }>;
  transitions: TransitionInfo[];
  children: StateInfo[];
}

export function describeMachine(machine: AnyStateMachine): StateInfo {
  return describeNode(machine.root);
}

function describeNode(node: AnyStateNode): StateInfo {
  const transitions: TransitionInfo[] = [];
  for (const list of node.transitions.values()) for (const t of list) transitions.push(describeTransition(t));
  for (const t of node.always ?? []) transitions.push(describeTransition(t));
  const initialTarget = node.type === 'compound' ? node.initial.target[0] : undefined;
  return {
    id: node.id,
    key: node.key,
    path: [...node.path],
    type: node.type,
    initial: initialTarget ? initialTarget.key : null,
    entry: ownActions(node.entry),
    exit: ownActions(node.exit),
    invoke: node.invoke.map((invoke) => ({ id: invoke.id, src: typeof invoke.src === 'string' ? invoke.src : invoke.id })),
    transitions,
    children: Object.values(node.states).map((child) => describeNode(child as AnyStateNode)),
  };
}

interface RawTransition {
  eventType: string;
  guard?: unknown;
  target?: ReadonlyArray<{ id: string }> | undefined;
  reenter: boolean;
  actions: readonly unknown[];
  delay?: unknown;
}

function describeTransition(t: RawTransition): TransitionInfo {
  const base = {
    eventType: t.eventType,
    guard: t.guard === undefined ? null : guardName(t.guard),
    targets: (t.target ?? []).map((target) => target.id),
    reenter: t.reenter,
    actions: t.actions.map(actionName),
  };
  if (t.eventType === '') return { ...base, kind: 'always', label: 'always' };
  if (t.eventType.startsWith('xstate.after.')) {
    const delay = typeof t.delay === 'number' || typeof t.delay === 'string' ? t.delay : 'delay';
    return { ...base, kind: 'after', label: `after ${typeof delay === 'number' ? `${delay}ms` : delay}`, delay };
  }
  for (const [prefix, kind] of [['xstate.done.actor.', 'done'], ['xstate.error.actor.', 'error']] as const) {
    if (t.eventType.startsWith(prefix)) {
      const invokeId = t.eventType.slice(prefix.length);
      return { ...base, kind, label: `${kind} ${invokeId}`, invokeId };
    }
  }
  if (t.eventType.startsWith('xstate.done.state.')) return { ...base, kind: 'done', label: 'done' };
  return { ...base, kind: 'event', label: t.eventType };
}

/** `and`/`or`/`not` guards are functions carrying their operands in `guards`. */
function guardName(guard: unknown): string {
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') {
    const operands = (guard as { guards?: unknown[] }).guards;
    if (Array.isArray(operands)) {
      const names = operands.map(guardName);
      if (guard.name === 'not') return `!${wrap(names[0] ?? '')}`;
      return names.map(wrap).join(guard.name === 'or' ? ' || ' : ' && ');
    }
    return guard.name || 'inline';
  }
  if (guard && typeof guard === 'object' && 'type' in guard) return String(guard.type);
  return 'inline';
}

function wrap(name: string): string {
  return /[ &|]/.test(name) ? `(${name})` : name;
}

/** Leaves out the raise/cancel pairs XState adds to a state's entry and exit for its `after`
 *  timers: the `after` transitions already say that. */
function ownActions(actions: readonly unknown[]): string[] {
  return actions.map(actionName).filter((name) => name !== 'xstate.raise' && name !== 'xstate.cancel');
}

function actionName(action: unknown): string {
  if (typeof action === 'string') return action;
  if (action && (typeof action === 'object' || typeof action === 'function') && 'type' in action) {
    return String((action as { type: unknown }).type);
  }
  return typeof action === 'function' && action.name ? action.name : 'inline';
}

/** Every state of the tree, parents before children. */
export function allStates(root: StateInfo): StateInfo[] {
  return [root, ...root.children.flatMap(allStates)];
}
