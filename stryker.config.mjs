// @ts-check
/**
 * `npm run mutation`: StrykerJS mutates the core (backoff, job machine, claim planner, the
 * memory store's claim and fenced writes) and runs the tests of vitest.mutation.config.ts
 * (memory store only) against each mutant. Not part of `npm test` or .ci/run: a run takes
 * about 45 minutes on a busy two-core machine. `npm run mutation -- --incremental` reuses the last run's results for code and
 * tests that did not change. Score and notable survivors: test/README.md.
 *
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  // The decisions a wrong mutant would break silently: the retry policy and backoff, the job's
  // fate (job machine), which queues are asked for how many (claim planner, gates), and the
  // memory store's claim, fencing, renewal and rescue. The rest of src/supervisor is wiring.
  mutate: [
    'src/machines/backoff.ts',
    'src/machines/job-machine.ts',
    'src/supervisor/claim-planner.ts',
    'src/adapters/memory/memory-store.ts:116-254',
  ],
  // A mutant in a module-level constant is covered by every test: running them all for each
  // would double the run.
  ignoreStatic: true,
  // The sandbox copies the project: not what the tests never read (dist/ is rebuilt by the
  // full suite's global setup, which would race the copy).
  ignorePatterns: ['dist', 'docs', 'bench', 'reports', 'test-results', '.jobvisor'],
  concurrency: 2,
  timeoutMS: 10_000,
  incrementalFile: 'reports/mutation/incremental.json',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  tempDirName: '.stryker-tmp',
};
