/**
 * The embedded stores read the process's clock: a step of it (a laptop resuming, NTP) must
 * keep every held lease, as PostgreSQL's clock does, while leases still lapse after their
 * length of real time. An injected wall clock steps against an injected monotonic one.
 */
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClockSteps } from '../../src/adapters/clock-steps.js';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { pgliteStore } from '../../src/adapters/pglite/index.js';
import type { JobStore } from '../../src/adapters/store.js';
import type { ClaimedJob, Clock } from '../../src/types.js';

const HOUR = 3_600_000;
const LEASE_MS = 60_000;

/** Real time passing (`pass`) moves both clocks; `step` moves the wall clock alone. */
function clocks() {
  let elapsed = 1_000;
  let stepped = 0;
  const start = Date.parse('2027-03-01T12:00:00Z');
  return {
    wall: { now: () => start + elapsed + stepped } satisfies Clock,
    elapsed: { now: () => elapsed } satisfies Clock,
    pass: (ms: number) => void (elapsed += ms),
    step: (ms: number) => void (stepped += ms),
  };
}

it('reports a step once, not drift within the tolerance, and gives back a step not applied', () => {
  const c = clocks();
  const steps = new ClockSteps(c.wall, c.elapsed);
  c.pass(5_000);
  c.step(300);
  expect(steps.take()).toBe(0);
  c.step(25 * HOUR);
  expect(steps.take()).toBe(25 * HOUR + 300);
  expect(steps.take()).toBe(0);
  c.step(-10 * 60_000);
  const back = steps.take();
  expect(back).toBe(-10 * 60_000);
  steps.untake(back);
  expect(steps.take()).toBe(-10 * 60_000);
});

const stores: Array<{ name: string; open: (c: ReturnType<typeof clocks>) => Promise<JobStore>; reset?: () => Promise<void> }> = [
  { name: 'memory', open: async (c) => memoryStore({ clock: c.wall, elapsed: c.elapsed }) },
];

let db: PGlite;
const SCHEMA = 'jv_steps';
stores.push({
  name: 'pglite',
  open: async (c) => pgliteStore({ db, schema: SCHEMA, clock: c.wall, elapsed: c.elapsed }),
  reset: async () => void (await db.query(`truncate ${SCHEMA}.jobs cascade`)),
});

beforeAll(async () => {
  db = await PGlite.create();
  await pgliteStore({ db, schema: SCHEMA }).migrate();
}, 120_000);
afterAll(() => db?.close());

async function runningJobs(store: JobStore): Promise<ClaimedJob[]> {
  await store.enqueueJobs({ jobs: Array.from({ length: 5 }, (_, i) => ({ queue: 'q', kind: 'k', payload: i, maxAttempts: 3 })) });
  return store.claimJobs({ workerId: 'w1', leaseMs: LEASE_MS, queues: [{ queue: 'q', limit: 5 }] });
}

for (const { name, open, reset } of stores) {
  describe(`a stepped clock keeps every lease (${name})`, () => {
    it('+25 h: the reaper rescues none, renewals apply; the leases lapse a lease length later', async () => {
      await reset?.();
      const c = clocks();
      const store = await open(c);
      const claimed = await runningJobs(store);
      expect(claimed).toHaveLength(5);
      c.pass(30_000);
      c.step(25 * HOUR);
      expect(await store.rescueExpiredJobs()).toEqual([]);
      for (const job of claimed) expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'running', leaseToken: job.leaseToken });
      // Half a lease was left: it lapses 30 s of real time later, not before.
      c.pass(29_000);
      expect(await store.rescueExpiredJobs()).toEqual([]);
      const renewed = await store.renewLeases({ leases: claimed.slice(0, 2).map(({ id, leaseToken }) => ({ id, leaseToken })), leaseMs: LEASE_MS });
      expect(renewed).toEqual(['renewed', 'renewed']);
      c.pass(2_000);
      expect((await store.rescueExpiredJobs()).map((j) => j.id)).toEqual(claimed.slice(2).map((j) => j.id));
    });

    it('−10 min: leases do not last ten minutes longer', async () => {
      await reset?.();
      const c = clocks();
      const store = await open(c);
      const claimed = await runningJobs(store);
      c.step(-10 * 60_000);
      c.pass(LEASE_MS + 1_000);
      expect((await store.rescueExpiredJobs()).map((j) => j.id)).toEqual(claimed.map((j) => j.id));
    });

    it('an injected clock without `elapsed` is time passing: its move lets leases lapse', async () => {
      await reset?.();
      const c = clocks();
      const store = name === 'memory' ? memoryStore({ clock: c.wall }) : pgliteStore({ db, schema: SCHEMA, clock: c.wall });
      const claimed = await runningJobs(store);
      c.step(LEASE_MS + 1_000);
      expect(await store.rescueExpiredJobs()).toHaveLength(claimed.length);
    });
  });
}
