import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // JOBVISOR_TEST_INCLUDE: the runner's own check of its exit status runs this config on a
    // fixture outside the suite (test/support/exit-status.test.ts).
    include: process.env.JOBVISOR_TEST_INCLUDE ? [process.env.JOBVISOR_TEST_INCLUDE] : ['test/**/*.test.ts'],
    // Finds (or starts) the PostgreSQL server for the Postgres store tests; builds dist/ for
    // the CLI tests, which run it as a child process.
    globalSetup: ['test/support/postgres-server.ts', 'test/support/build-dist.ts'],
    // Files and the tests in them run in a random order (vitest prints the seed; rerun one
    // with --sequence.seed=N): a test that needs another to run first fails. The few stories
    // told in order say so with { shuffle: false } (test/README.md).
    sequence: { shuffle: true },
    // Two workers on the 2-core machine: most files wait on Postgres or child processes, so a
    // second worker nearly halves the suite (745 s → ~10 min under load) at no cost to the rest.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
