import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Finds (or starts) the PostgreSQL server for the Postgres store tests.
    globalSetup: ['test/support/postgres-server.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
