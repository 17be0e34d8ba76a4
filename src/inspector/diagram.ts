/** `jobvisor diagram`: the job and supervisor machines as Mermaid or JSON. */
import type { AnyStateMachine } from 'xstate';
import { jobMachine } from '../machines/job-machine.js';
import { supervisorMachine } from '../supervisor/supervisor-machine.js';
import { toMachineJson } from './machine-json.js';
import { toMermaid } from './mermaid.js';

export { toMachineJson } from './machine-json.js';
export { toMermaid } from './mermaid.js';

export const MACHINES: Record<'job' | 'supervisor', AnyStateMachine> = { job: jobMachine, supervisor: supervisorMachine };
export type MachineName = keyof typeof MACHINES;
export const DIAGRAM_FORMATS = ['mermaid', 'json'] as const;
export type DiagramFormat = (typeof DIAGRAM_FORMATS)[number];

export function machineDiagram(machine: MachineName, format: DiagramFormat): string {
  const definition = MACHINES[machine];
  return format === 'mermaid' ? toMermaid(definition) : `${JSON.stringify(toMachineJson(definition), null, 2)}\n`;
}
