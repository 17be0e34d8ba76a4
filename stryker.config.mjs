// @ts-check
/**
 * `npm run mutation`: StrykerJS mutates the core (job machine, backoff, claim planner, job
 * runtime, supervisor, memory store) and runs the tests of vitest.mutation.config.ts (memory
 * store only) against each mutant. Not part of `npm test` or .ci/run: a run takes tens of
 * minutes. `npm run mutation -- --incremental` reuses the last run's results for code and
 * tests that did not change. Score and notable survivors: test/README.md.
 *
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  mutate: [
    'src/machines/backoff.ts',
    'src/machines/job-machine.ts',
    'src/supervisor/claim-planner.ts',
    'src/supervisor/job-runtime.ts',
    'src/supervisor/supervisor.ts',
    'src/adapters/memory/memory-store.ts',
  ],
  // A mutant in a module-level constant is covered by every test: running them all for each
  // would double the run.
  ignoreStatic: true,
  // The sandbox copies the project: not what the tests never read (dist/ is rebuilt by the
  // full suite's global setup, which would race the copy).
  ignorePatterns: ['dist', 'docs', 'bench', 'reports', 'test-results', '.jobvisor'],
  concurrency: 2,
  timeoutMS: 20_000,
  incrementalFile: 'reports/mutation/incremental.json',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  tempDirName: '.stryker-tmp',
};
