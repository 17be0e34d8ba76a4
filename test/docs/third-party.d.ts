/**
 * The packages the docs' examples import that jobvisor does not depend on, typed as far as the
 * examples use them, so that the examples still type-check (doc-examples.test.ts).
 */
declare module '@statelyai/inspect' {
  export function createInspector(options: { send: (event: { type: string }) => void }): {
    inspect: import('xstate').InspectionEvent extends infer E ? (event: E) => void : never;
  };
}

declare module '@opentelemetry/sdk-node' {
  export class NodeSDK {
    constructor(options: { traceExporter: unknown });
    start(): void;
  }
}
