/**
 * The database goes away while a supervisor runs four jobs: the server (one of the test's
 * own) is stopped for four seconds, longer than the jobs' lease. Claims, heartbeats and the
 * reaper fail meanwhile; the supervisor keeps running, gives up the lapsed leases itself
 * (aborting their handlers), and once the server is back claims again on its own. The four
 * jobs are rescued by its reaper and each completed exactly once, by a second attempt that
 * started only after the first had stopped. (npm run chaos keeps the server down a minute.)
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { postgresStore } from '../../src/adapters/postgres/index.js';
import type { JobStore } from '../../src/adapters/store.js';
import { createSupervisor, defineQueue, type Job, type Logger } from '../../src/index.js';
import { type ScratchPostgres, startScratchPostgres } from '../../scripts/chaos/scratch-postgres.js';
import { until } from '../../scripts/chaos/until.js';
import { describeScratchPostgres } from '../support/scratch-postgres.js';

const LEASE_MS = 1_500;
const OUTAGE_MS = 4_000;
const SLOW = 4;
const FAST = 20;

describeScratchPostgres('a database outage', () => {
  let server: ScratchPostgres;

  beforeAll(async () => {
    server = await startScratchPostgres();
  });

  afterAll(async () => {
    await server?.destroy();
  });

  it('the supervisor rides it out: lapsed leases rescued after, each job completed once, claims resumed unprompted', async () => {
    const store = postgresStore({ connectionString: server.url, schema: 'outage', connectTimeoutMs: 1_000 });
    await store.migrate();
    const failures = countFailures(store, ['claimJobs', 'renewLeases', 'rescueExpiredJobs']);
    const runs: Array<{ id: string; attempt: number; start: number; end?: number; aborted?: boolean }> = [];
    const queue = defineQueue('outage', {
      concurrency: SLOW,
      leaseMs: LEASE_MS,
      backoff: () => 100,
      handlers: {
        slow: async ({ id, attempt, signal }: Job<{ n: number }>) => {
          const run: (typeof runs)[number] = { id, attempt, start: performance.now() };
          runs.push(run);
          try {
            await sleep(2_000, undefined, { signal });
          } catch (error) {
            run.aborted = signal.aborted;
            throw error;
          } finally {
            run.end = performance.now();
          }
        },
        fast: async () => 'ok',
      },
    });
    const logs: string[] = [];
    const supervisor = createSupervisor({
      store,
      queues: [queue],
      logger: recordingLogger(logs),
      pollIntervalMs: 100,
      reaperIntervalMs: 200,
      errorBackoffMs: 100,
      maxErrorBackoffMs: 500,
      writeRetryMs: 200,
    });
    const counters = () => supervisor.counters.getSnapshot().context.queues['outage']!;
    const deadline = { timeoutMs: 20_000 };
    try {
      await supervisor.start();
      const slow = await queue.enqueueMany(store, Array.from({ length: SLOW }, (_, n) => ({ kind: 'slow' as const, payload: { n } })));
      await until('the slow jobs running', () => runs.length === SLOW, deadline);

      await server.stop('fast');
      const downAt = performance.now();
      // Down past the lease: the supervisor's own clock says the leases lapsed, so it aborts
      // the handlers and the actors end lost, writing nothing.
      await until('the four actors lost, their handlers aborted', () => counters().lost === SLOW && runs.every((run) => run.aborted), deadline);
      await sleep(Math.max(0, OUTAGE_MS - (performance.now() - downAt))); // the outage itself: a fault's length, not a wait
      // The server may take connections before start() resolves: "back" is when it was started.
      const upAt = performance.now();
      await server.start();

      // Nobody nudges the supervisor: the new jobs are claimed by its own polling.
      await queue.enqueueMany(store, Array.from({ length: FAST }, (_, n) => ({ kind: 'fast' as const, payload: { n } })));
      await until('every job completed', () => counters().completed === SLOW + FAST, deadline);

      expect(failures).toMatchObject({ claimJobs: expect.any(Number), renewLeases: expect.any(Number), rescueExpiredJobs: expect.any(Number) });
      expect(Object.values(failures).every((n) => n > 0), JSON.stringify(failures)).toBe(true);
      expect(counters()).toMatchObject({ claimed: 2 * SLOW + FAST, completed: SLOW + FAST, lost: SLOW, rescued: SLOW, dead: 0 });
      expect(supervisor.counters.getSnapshot().context.lastError?.message).toMatch(/^cannot reach the database at postgres:\/\//);
      expect(logs.filter((line) => line === 'claim failed; backing off').length).toBeGreaterThan(0);

      for (const { job } of slow) {
        const path = (await store.getJobEvents({ id: job.id })).map((e) => [e.fromState, e.toState, e.attempt, e.error?.code ?? null]);
        expect(path).toEqual([
          [null, 'pending', 0, null],
          ['pending', 'running', 1, null],
          ['running', 'retrying', 1, 'lease_expired'],
          ['retrying', 'running', 2, null],
          ['running', 'completed', 2, null],
        ]);
        const [first, second] = runs.filter((run) => run.id === job.id).sort((a, b) => a.attempt - b.attempt);
        expect([first?.attempt, second?.attempt]).toEqual([1, 2]);
        // Not duplicated: the second attempt started after the first had stopped, and not
        // before the server was started again.
        expect(second!.start).toBeGreaterThan(first!.end!);
        expect(second!.start).toBeGreaterThan(upAt);
      }
    } finally {
      await supervisor.stop({ graceMs: 1_000 });
      await store.close();
    }
  }, 60_000);
});

/** Wraps the store's methods to count the calls that threw, by name. */
function countFailures<K extends keyof JobStore>(store: JobStore, names: readonly K[]): Record<K, number> {
  const counts = Object.fromEntries(names.map((name) => [name, 0])) as Record<K, number>;
  for (const name of names) {
    const method = (store[name] as (...args: unknown[]) => Promise<unknown>).bind(store);
    (store as unknown as Record<K, unknown>)[name] = (...args: unknown[]) =>
      method(...args).catch((error: unknown) => {
        counts[name] += 1;
        throw error;
      });
  }
  return counts;
}

function recordingLogger(lines: string[]): Logger {
  const record = (_: object, message?: string) => void lines.push(message ?? '');
  return { debug: record, info: record, warn: record, error: record };
}

