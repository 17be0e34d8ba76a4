/**
 * A machine as JSON shaped like its XState config (`id`, `initial`, `states`, `on`, `after`,
 * `always`, `invoke` with `onDone`/`onError`), with guards and actions by name: what
 * Stately's tools and readers of the machine expect. Unlike `machine.definition`, it keeps
 * eventless transitions and guards combined with `and`/`or`/`not`.
 */
import type { AnyStateMachine } from 'xstate';
import { describeMachine, type StateInfo, type TransitionInfo } from './machine-graph.js';

export interface TransitionJson {
  /** `#id` of each target; none for a transition that only runs actions. */
  target?: string[];
  guard?: string;
  actions?: string[];
  reenter?: true;
}

export interface StateJson {
  type?: 'parallel' | 'final' | 'history';
  initial?: string;
  entry?: string[];
  exit?: string[];
  invoke?: Array<{ id: string; src: string; onDone?: TransitionJson[]; onError?: TransitionJson[] }>;
  on?: Record<string, TransitionJson[]>;
  after?: Record<string, TransitionJson[]>;
  always?: TransitionJson[];
  onDone?: TransitionJson[];
  states?: Record<string, StateJson>;
}

export function toMachineJson(machine: AnyStateMachine): StateJson & { id: string } {
  return { id: machine.id, ...stateJson(describeMachine(machine)) };
}

function stateJson(state: StateInfo): StateJson {
  const json: StateJson = {};
  if (state.type === 'parallel' || state.type === 'final' || state.type === 'history') json.type = state.type;
  if (state.initial !== null) json.initial = state.initial;
  if (state.entry.length > 0) json.entry = state.entry;
  if (state.exit.length > 0) json.exit = state.exit;
  const add = (group: Record<string, TransitionJson[]>, key: string, t: TransitionInfo) => {
    (group[key] ??= []).push(transitionJson(t));
  };
  const on: Record<string, TransitionJson[]> = {};
  const after: Record<string, TransitionJson[]> = {};
  const invokeDone: Record<string, Record<'onDone' | 'onError', TransitionJson[]>> = {};
  for (const t of state.transitions) {
    if (t.kind === 'event') add(on, t.eventType, t);
    else if (t.kind === 'after') add(after, String(t.delay), t);
    else if (t.kind === 'always') (json.always ??= []).push(transitionJson(t));
    else if (t.invokeId === undefined) (json.onDone ??= []).push(transitionJson(t));
    else {
      const handlers = (invokeDone[t.invokeId] ??= { onDone: [], onError: [] });
      handlers[t.kind === 'done' ? 'onDone' : 'onError'].push(transitionJson(t));
    }
  }
  if (state.invoke.length > 0) {
    json.invoke = state.invoke.map(({ id, src }) => {
      const handlers = invokeDone[id];
      return {
        id,
        src,
        ...(handlers?.onDone.length ? { onDone: handlers.onDone } : {}),
        ...(handlers?.onError.length ? { onError: handlers.onError } : {}),
      };
    });
  }
  if (Object.keys(on).length > 0) json.on = on;
  if (Object.keys(after).length > 0) json.after = after;
  if (state.children.length > 0) {
    json.states = Object.fromEntries(state.children.map((child) => [child.key, stateJson(child)]));
  }
  return json;
}

function transitionJson(t: TransitionInfo): TransitionJson {
  return {
    ...(t.targets.length > 0 ? { target: t.targets.map((id) => `#${id}`) } : {}),
    ...(t.guard === null ? {} : { guard: t.guard }),
    ...(t.actions.length > 0 ? { actions: t.actions } : {}),
    ...(t.reenter ? { reenter: true as const } : {}),
  };
}
