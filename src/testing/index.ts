/**
 * `jobvisor/testing`: what your own handler tests need, for any test framework. The memory
 * store, a simulated clock that drives every timer, `drain`, `runJob` (one job through its
 * handler to its end, with its history) and assertions that throw plain Errors.
 */
export type { SimulatedClock } from 'xstate';
export { MemoryStore, memoryStore } from '../adapters/memory/index.js';
export type { MemoryStoreOptions } from '../adapters/memory/index.js';
export { advance, createTestClock, settle, TEST_EPOCH } from './clock.js';
export { drain } from './drain.js';
export type { DrainOptions } from './drain.js';
export { runJob } from './run-job.js';
export { runFlow } from './run-flow.js';
export type { FlowRun, RunFlowOptions } from './run-flow.js';
export type { JobRun, RunJobOptions } from './run-job.js';
export { assertEnqueued, assertJobState, assertManyEnqueued, assertNotEnqueued } from './assertions.js';
export type { EnqueuedMatch, ExpectedJob } from './assertions.js';
