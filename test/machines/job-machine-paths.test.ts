/**
 * Model-based tests of the job machine: paths from the claim to a final state, enumerated by
 * xstate/graph over the machine and a model of its world (job-model.ts), each replayed on a
 * real actor against a real store (job-replay.ts), on every store of test/support/test-stores.ts.
 * The memory store replays every simple path; the SQL stores, slower, the fewest of them that
 * still take every edge of the model (the covering paths).
 *
 * The coverage check stands alone: it replays the covering paths itself and fails if some
 * state or transition of the machine's definition was never taken. A replay checks the actor
 * against the model after every step and the store's answers against the path, so the
 * transitions a path takes are the same on every store: covering paths that take them all on
 * the memory store take them all on each store that replays them.
 */
import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { jobMachine } from '../../src/machines/job-machine.js';
import { MachineCoverage } from '../support/coverage.js';
import { describeEachStore } from '../support/test-stores.js';
import { CONFIGS, describePath, jobCoveringPaths, type JobModelConfig, type JobPath, jobPaths } from './job-model.js';
import { replayJobPath } from './job-replay.js';

type ConfiguredPath = { config: JobModelConfig; path: JobPath };
const byConfig = CONFIGS.map((config) => ({ config, paths: jobPaths(config) }));
const ALL: ConfiguredPath[] = byConfig.flatMap(({ config, paths }) => paths.map((path) => ({ config, path })));
const COVERING: ConfiguredPath[] = byConfig.flatMap(({ config, paths }) => jobCoveringPaths(paths).map((path) => ({ config, path })));

const ignore = () => {};

describeEachStore('job machine paths', (store) => {
  const paths = store.name === 'memory' ? ALL : COVERING;
  for (const { config, path } of paths) {
    it(`${config.name}: ${describePath(path)}`, () => replayJobPath(path, config, (clock) => store.create(clock), ignore));
  }
});

describe('job machine paths: coverage', () => {
  it(`the ${COVERING.length} covering paths take every state and transition of the job machine`, async () => {
    const coverage = new MachineCoverage(jobMachine);
    for (const { config, path } of COVERING) {
      await replayJobPath(path, config, async (clock) => memoryStore({ clock }), coverage.inspect);
    }
    console.info(`[job machine paths] ${COVERING.length} covering paths (of ${ALL.length}): ${coverage.summary()}`);
    expect(coverage.missingStates()).toEqual([]);
    expect(coverage.missingTransitions()).toEqual([]);
  });
});
