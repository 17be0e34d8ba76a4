/**
 * A machine as a Mermaid `stateDiagram-v2`, for docs. Mermaid cannot draw a transition
 * between states of different composite states, so such a transition is drawn between their
 * ancestors that share a parent (`running.working → lost` becomes `running → lost`), in the
 * block of that parent. Transitions defined on the machine itself (taken from any state)
 * become a note on their target.
 */
import type { AnyStateMachine } from 'xstate';
import { allStates, describeMachine, type StateInfo } from './machine-graph.js';

export function toMermaid(machine: AnyStateMachine): string {
  const root = describeMachine(machine);
  const states = allStates(root);
  const byId = new Map(states.map((state) => [state.id, state]));
  // Not by id: a state may have an id of its own instead of its path.
  const byPath = new Map(states.map((state) => [state.path.join('.'), state]));
  const ids = mermaidIds(states);

  // Edges by the block (state id) they are declared in.
  const blocks = new Map<string, string[]>();
  const notes: string[] = [];
  for (const state of states) {
    for (const t of state.transitions) {
      const label = t.guard ? `${t.label} [${t.guard}]` : t.label;
      for (const targetId of t.targets) {
        const target = byId.get(targetId);
        if (!target) continue;
        if (state === root) {
          notes.push(`  note right of ${ids.get(byPath.get(target.path[0]!)!)} : ${clean(label)} from any state`);
          continue;
        }
        const [source, dest, block] = lift(state, target, byPath);
        const lines = blocks.get(block.id) ?? [];
        const line = `${ids.get(source)} --> ${ids.get(dest)} : ${clean(label)}`;
        if (!lines.includes(line)) lines.push(line);
        blocks.set(block.id, lines);
      }
    }
  }

  const out = ['stateDiagram-v2'];
  const emit = (block: StateInfo, indent: string) => {
    for (const child of block.children) {
      if (ids.get(child) !== child.key) out.push(`${indent}state "${clean(child.key)}" as ${ids.get(child)}`);
    }
    if (block.type === 'parallel') {
      block.children.forEach((child, i) => {
        if (i > 0) out.push(`${indent}--`);
        emitChild(child, indent);
      });
    } else {
      if (block.initial !== null) {
        out.push(`${indent}[*] --> ${ids.get(block.children.find((c) => c.key === block.initial)!)}`);
      }
      for (const child of block.children) emitChild(child, indent);
    }
    for (const line of blocks.get(block.id) ?? []) out.push(`${indent}${line}`);
    for (const child of block.children) if (child.type === 'final') out.push(`${indent}${ids.get(child)} --> [*]`);
  };
  const emitChild = (child: StateInfo, indent: string) => {
    if (child.children.length === 0) return;
    out.push(`${indent}state ${ids.get(child)} {`);
    emit(child, `${indent}  `);
    out.push(`${indent}}`);
  };
  emit(root, '  ');
  out.push(...notes);
  return `${out.join('\n')}\n`;
}

/** Mermaid ids are global: a nested state is named by its path (`running_working`). */
function mermaidIds(states: StateInfo[]): Map<StateInfo, string> {
  const ids = new Map<StateInfo, string>();
  const used = new Set<string>();
  for (const state of states) {
    if (state.path.length === 0) continue;
    const base = state.path.join('_').replace(/[^A-Za-z0-9_]/g, '_');
    let id = base;
    for (let n = 2; used.has(id); n++) id = `${base}_${n}`;
    used.add(id);
    ids.set(state, id);
  }
  return ids;
}

/** The two states to draw the edge between, and the state whose block holds it. */
function lift(source: StateInfo, target: StateInfo, byPath: Map<string, StateInfo>): [StateInfo, StateInfo, StateInfo] {
  const a = source.path;
  const b = target.path;
  let shared = 0;
  // The block must be a proper ancestor of both ends.
  while (shared < Math.min(a.length, b.length) - 1 && a[shared] === b[shared]) shared++;
  const at = (path: string[]) => byPath.get(path.join('.'))!;
  return [at(a.slice(0, shared + 1)), at(b.slice(0, shared + 1)), at(a.slice(0, shared))];
}

/** Labels end at the line; Mermaid reads `:` and `;` there as syntax. */
function clean(text: string): string {
  return text.replace(/[\n\r:;"]/g, ' ');
}
