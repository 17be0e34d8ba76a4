/** The durable scenario's shapes (durable-load.ts says what each measures), named apart from
 *  the scenario so that the options can list them without loading it. */
export const DURABLE_SHAPES = ['plain', 'steps', 'dbos', 'wake', 'idle', 'sleepers'] as const;
export type DurableShape = (typeof DURABLE_SHAPES)[number];
export const durableScenario = (shape: DurableShape) => `durable-${shape}`;
