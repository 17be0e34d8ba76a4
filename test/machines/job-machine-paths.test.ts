/**
 * Model-based tests of the job machine: paths from the claim to a final state, enumerated by
 * xstate/graph over the machine and a model of its world (job-model.ts), each replayed on a
 * real actor against a real store (job-replay.ts). The memory store replays every simple
 * path; PGlite, slower, the fewest of them that still take every edge of the model. Each
 * store's run fails if some state or transition of the machine's definition was never taken.
 */
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { pgliteStore } from '../../src/adapters/pglite/index.js';
import { jobMachine } from '../../src/machines/job-machine.js';
import { MachineCoverage } from '../support/coverage.js';
import { CONFIGS, describePath, jobCoveringPaths, type JobModelConfig, type JobPath, jobPaths } from './job-model.js';
import { replayJobPath, type StoreFactory } from './job-replay.js';

type ConfiguredPath = { config: JobModelConfig; path: JobPath };
const byConfig = CONFIGS.map((config) => ({ config, paths: jobPaths(config) }));
const ALL: ConfiguredPath[] = byConfig.flatMap(({ config, paths }) => paths.map((path) => ({ config, path })));
const COVERING: ConfiguredPath[] = byConfig.flatMap(({ config, paths }) => jobCoveringPaths(paths).map((path) => ({ config, path })));

const schema = 'jv_job_paths';
let db: PGlite;

const stores: Array<{ name: string; create: StoreFactory; paths: ConfiguredPath[] }> = [
  { name: 'memory', create: async (clock) => memoryStore({ clock }), paths: ALL },
  { name: 'pglite', create: async (clock) => pgliteStore({ db, schema, clock }), paths: COVERING },
];

beforeAll(async () => {
  db = await PGlite.create();
  await pgliteStore({ db, schema }).migrate();
});

afterAll(async () => {
  await db.close();
});

for (const { name, create, paths } of stores) {
  describe(`job machine paths on the ${name} store`, () => {
    const coverage = new MachineCoverage(jobMachine);

    for (const { config, path } of paths) {
      it(`${config.name}: ${describePath(path)}`, () => replayJobPath(path, config, create, coverage.inspect));
    }

    it(`took every state and transition of the job machine in ${paths.length} paths`, () => {
      console.info(`[job machine paths] ${name}: ${paths.length} paths replayed, ${coverage.summary()}`);
      expect(coverage.missingStates()).toEqual([]);
      expect(coverage.missingTransitions()).toEqual([]);
    });
  });
}
