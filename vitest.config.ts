import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Finds (or starts) the PostgreSQL server for the Postgres store tests; builds dist/ for
    // the CLI tests, which run it as a child process.
    globalSetup: ['test/support/postgres-server.ts', 'test/support/build-dist.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
