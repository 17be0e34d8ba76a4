/** The steady scenario's shapes (steady-load.ts says what each measures), named apart from the
 *  scenario so that the options can list them without loading it, as keys-shapes.ts. */
export const STEADY_SHAPES = ['rate-100', 'rate-500', 'rate-2000', 'drain'] as const;
export type SteadyShape = (typeof STEADY_SHAPES)[number];
export const steadyScenario = (shape: SteadyShape) => `steady-${shape}`;
/** Jobs a second the enqueuer offers in a rate shape; undefined for the drain. */
export const steadyRate = (shape: SteadyShape): number | undefined => (shape.startsWith('rate-') ? Number(shape.slice('rate-'.length)) : undefined);
