/**
 * For tests that crash, stop or restart PostgreSQL: they run on a server of their own
 * (scripts/chaos/scratch-postgres.ts), never the shared one. Like describePostgres: on CI a
 * server that cannot be started fails the tests; elsewhere they are skipped, loudly.
 */
import { describe, it } from 'vitest';
import { scratchPostgresProblem } from '../../scripts/chaos/scratch-postgres.js';

const problem = await scratchPostgresProblem();

export function describeScratchPostgres(title: string, body: () => void): void {
  if (problem === undefined) {
    describe(title, body);
  } else if (process.env.CI === 'true') {
    describe(title, () => {
      it('starts a PostgreSQL server of its own', () => {
        throw new Error(`CI=true and no PostgreSQL server of our own can start: ${problem}`);
      });
    });
  } else {
    console.warn(`[jobvisor tests] SKIPPED "${title}": no PostgreSQL server of our own can start: ${problem}`);
    describe.skip(title, body);
  }
}
