/** The keys scenario's shapes (keys-load.ts says what each measures), named apart from the
 *  scenario so that the options can list them without loading it, as durable-shapes.ts. */
export const KEYS_SHAPES = ['drain-off', 'drain-on', 'enqueue-plain', 'enqueue-debounce-one-key', 'enqueue-debounce-key-each', 'enqueue-fair'] as const;
export type KeysShape = (typeof KEYS_SHAPES)[number];
export const keysScenario = (shape: KeysShape) => `keys-${shape}`;
