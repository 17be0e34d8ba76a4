/**
 * The chaos run, short: 2,000 jobs on three worker processes and a PostgreSQL server of the
 * test's own, while four workers are killed with SIGKILL and restarted, one is paused past
 * its lease (a zombie) and resumed, and the server is crashed for two seconds. Every check
 * of `npm run chaos` must pass (see scripts/chaos/check-chaos.ts and RELIABILITY.md); the
 * counts are printed. Every wait inside polls with a deadline.
 */
import { expect, it } from 'vitest';
import { runChaos } from '../../scripts/chaos/run-chaos.js';
import { describeScratchPostgres } from '../support/scratch-postgres.js';

describeScratchPostgres('chaos (short run)', () => {
  it('kills, a zombie and a database crash: every job completed exactly once, nothing lost, the zombie refused', async () => {
    const lines: string[] = [];
    const report = await runChaos({
      jobs: 2_000,
      poisonEvery: 100,
      workers: 3,
      concurrency: 8,
      kills: 4,
      outageMs: 2_000,
      leaseMs: 2_000,
      reaperIntervalMs: 300,
      pollIntervalMs: 200,
      errorBackoffMs: 200,
      maxErrorBackoffMs: 1_000,
      writeRetryMs: 300,
      workMs: [5, 40],
      phaseTimeoutMs: 60_000,
      log: (line) => lines.push(line),
    });
    const counts = Object.fromEntries(report.counts);
    console.info(`[chaos] ${lines.join('\n[chaos] ')}\n${report.counts.map(([label, n]) => `  ${label}: ${n}`).join('\n')}`);
    expect(report.failures, lines.join('\n')).toEqual([]);
    expect(counts).toMatchObject({
      'jobs in the table': 2_000,
      'completed (expected: normal jobs)': 1_980,
      'dead (expected: poison jobs)': 20,
      'stuck: pending, retrying or running at the end': 0,
      'normal jobs completed other than exactly once': 0,
      '  of no claimed attempt': 0,
      'workers killed with SIGKILL (and restarted)': 4,
      'zombie: late results applied': 0,
      'zombie: handlers started after resuming on a lapsed lease': 0,
    });
    expect(counts['zombie: late results, finished after it resumed']).toBeGreaterThan(0);
  }, 240_000);
});
