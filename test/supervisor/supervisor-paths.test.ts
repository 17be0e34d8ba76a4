/**
 * Model-based tests of the supervisor machine: paths from a fresh supervisor to `stopped`
 * through start, claims, drain, store outages and stop, enumerated by xstate/graph over the
 * machine and a model of its runtime (supervisor-model.ts), each replayed on a real actor
 * (supervisor-replay.ts) on every store of test/support/test-stores.ts.
 *
 * The coverage check stands alone: it replays the paths itself and fails if some state or
 * transition of the machine's definition was never taken.
 */
import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { supervisorMachine } from '../../src/supervisor/supervisor-machine.js';
import { MachineCoverage } from '../support/coverage.js';
import { describeEachStore } from '../support/test-stores.js';
import { describePath, supervisorPaths } from './supervisor-model.js';
import { replaySupervisorPath } from './supervisor-replay.js';

const PATHS = supervisorPaths();

const ignore = () => {};

describeEachStore('supervisor machine paths', (store) => {
  // Every replay works in the same queue: a SQL store's tables are emptied first.
  const create = async (clock: Parameters<typeof store.create>[0]) => {
    await store.reset();
    return store.create(clock);
  };
  for (const path of PATHS) {
    it(describePath(path), () => replaySupervisorPath(path, create, ignore));
  }
});

describe('supervisor machine paths: coverage', () => {
  it(`the ${PATHS.length} paths take every state and transition of the supervisor machine`, async () => {
    const coverage = new MachineCoverage(supervisorMachine);
    for (const path of PATHS) await replaySupervisorPath(path, async (clock) => memoryStore({ clock }), coverage.inspect);
    console.info(`[supervisor machine paths] ${PATHS.length} paths: ${coverage.summary()}`);
    expect(coverage.missingStates()).toEqual([]);
    expect(coverage.missingTransitions()).toEqual([]);
  });
});
