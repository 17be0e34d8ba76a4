import { defineConfig } from 'vitest/config';

/**
 * The tests `npm run mutation` (stryker.config.mjs) runs against each mutant of the core, on
 * the memory store only (JOBVISOR_TEST_STORES=memory), so no database server or build is set
 * up. Not part of `npm test`.
 */
process.env.JOBVISOR_TEST_STORES = 'memory';
// The same generated scenarios for every mutant, so a score does not move with the draw.
process.env.JOBVISOR_ORACLE_SEED ??= '20261201';

export default defineConfig({
  test: {
    // The fast tests of the mutated code: a mutant that makes a drain hang costs a test's
    // timeout, so the slow end-to-end files (claim liveness, results, reaper, schedules) and the
    // path replays (about 15 s per job-machine mutant; the reference model in test/oracle
    // checks the same fates for a fraction of it) are left out.
    include: [
      'test/machines/backoff.test.ts',
      'test/machines/job-machine.test.ts',
      'test/machines/lapsed-lease.test.ts',
      'test/supervisor/claim-planner.test.ts',
      'test/supervisor/supervisor.test.ts',
      'test/supervisor/limits.test.ts',
      'test/supervisor/cancel.test.ts',
      'test/supervisor/expiry.test.ts',
      'test/supervisor/snooze.test.ts',
      'test/adapters/memory/memory-store.test.ts',
      // The reference model of a job's fate against the real supervisor (a few seconds).
      'test/oracle/**/*.test.ts',
      'test/adapters/conformance.test.ts',
      'test/testing/testing.test.ts',
    ],
    testTimeout: 5_000,
    hookTimeout: 10_000,
  },
});
