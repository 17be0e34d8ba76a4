export { DEFAULT_INSPECTOR_PORT, startInspector } from './inspector.js';
export type { Inspector, InspectorOptions } from './inspector.js';
export { DIAGRAM_FORMATS, machineDiagram, MACHINES, toMachineJson, toMermaid } from './diagram.js';
export type { DiagramFormat, MachineName } from './diagram.js';
export { renderMachineSvg } from './machine-svg.js';
