/**
 * npm run chaos [-- --jobs 10000 --workers 4 --kills 8 --outage-ms 60000 …]
 *
 * Drains jobs with worker processes on a PostgreSQL server of its own while killing workers
 * (SIGKILL), pausing one past its lease (SIGSTOP, a zombie) and crashing the server for a
 * while, then checks that every job completed exactly once, that every execution belongs to
 * a claimed attempt, that nothing was lost or stuck, and that the zombie's late results did
 * not apply. Prints what it did and the counts it checked; exits 1 if a check failed.
 * See RELIABILITY.md. test/reliability/chaos.test.ts runs a short version.
 */
import { parseArgs } from 'node:util';
import { type ChaosOptions, runChaos } from './chaos/run-chaos.js';

/** The full run: 10,000 jobs, a one-minute outage, the supervisor's default backoffs. */
const FULL_RUN: Omit<ChaosOptions, 'log'> = {
  jobs: 10_000,
  poisonEvery: 100,
  workers: 4,
  concurrency: 10,
  kills: 8,
  outageMs: 60_000,
  leaseMs: 5_000,
  reaperIntervalMs: 1_000,
  pollIntervalMs: 1_000,
  errorBackoffMs: 1_000,
  maxErrorBackoffMs: 30_000,
  writeRetryMs: 1_000,
  workMs: [5, 50],
  phaseTimeoutMs: 300_000,
};

const NUMERIC = ['jobs', 'poison-every', 'workers', 'concurrency', 'kills', 'outage-ms', 'lease-ms', 'reaper-interval-ms'] as const;

const { values } = parseArgs({
  options: Object.fromEntries(NUMERIC.map((name) => [name, { type: 'string' }])) as Record<(typeof NUMERIC)[number], { type: 'string' }>,
});
const number = (name: (typeof NUMERIC)[number], fallback: number): number => {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be an integer >= 0, got ${raw}`);
  return n;
};

const options: ChaosOptions = {
  ...FULL_RUN,
  jobs: number('jobs', FULL_RUN.jobs),
  poisonEvery: number('poison-every', FULL_RUN.poisonEvery),
  workers: number('workers', FULL_RUN.workers),
  concurrency: number('concurrency', FULL_RUN.concurrency),
  kills: number('kills', FULL_RUN.kills),
  outageMs: number('outage-ms', FULL_RUN.outageMs),
  leaseMs: number('lease-ms', FULL_RUN.leaseMs),
  reaperIntervalMs: number('reaper-interval-ms', FULL_RUN.reaperIntervalMs),
  log: (line) => console.log(line),
};

console.log(`chaos: ${JSON.stringify({ ...options, log: undefined })}`);
const report = await runChaos(options);
const width = Math.max(...report.counts.map(([label]) => label.length));
console.log(`\nchecked, after ${(report.durationMs / 1000).toFixed(1)} s:`);
for (const [label, value] of report.counts) console.log(`  ${label.padEnd(width)}  ${value}`);
if (report.failures.length > 0) {
  console.log('\nFAILED:');
  for (const failure of report.failures) console.log(`  ${failure}`);
  process.exitCode = 1;
} else {
  console.log('\nall checks passed');
}
