/**
 * Model-based tests of the supervisor machine: paths from a fresh supervisor to `stopped`
 * through start, claims, drain, store outages and stop, enumerated by xstate/graph over the
 * machine and a model of its runtime (supervisor-model.ts), each replayed on a real actor
 * against the memory store (supervisor-replay.ts). Fails if some state or transition of the
 * machine's definition was never taken.
 */
import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { supervisorMachine } from '../../src/supervisor/supervisor-machine.js';
import { MachineCoverage } from '../support/coverage.js';
import { describePath, supervisorPaths } from './supervisor-model.js';
import { replaySupervisorPath } from './supervisor-replay.js';

const PATHS = supervisorPaths();

describe('supervisor machine paths on the memory store', () => {
  const coverage = new MachineCoverage(supervisorMachine);

  for (const path of PATHS) {
    it(describePath(path), () => replaySupervisorPath(path, async (clock) => memoryStore({ clock }), coverage.inspect));
  }

  it(`took every state and transition of the supervisor machine in ${PATHS.length} paths`, () => {
    console.info(`[supervisor machine paths] memory: ${PATHS.length} paths replayed, ${coverage.summary()}`);
    expect(coverage.missingStates()).toEqual([]);
    expect(coverage.missingTransitions()).toEqual([]);
  });
});
