import { describe, expect, it } from 'vitest';
import { memoryStore, type MemoryStore } from '../../src/adapters/memory/index.js';
import type { RescueParams } from '../../src/adapters/store.js';
import { Reaper } from '../../src/supervisor/reaper.js';
import { createTestClock } from '../support/sim.js';
import { supervisorHarness } from './harness.js';

const { setup } = supervisorHarness();
const LEASE_MS = 30_000;

/** `count` running jobs of queue `work` whose leases expired. */
async function expiredLeases(store: MemoryStore, clock: { increment(ms: number): void }, count: number): Promise<void> {
  await store.enqueueJobs({ jobs: Array.from({ length: count }, () => ({ queue: 'work', kind: 'j', payload: {}, maxAttempts: 3 })) });
  await store.claimJobs({ workerId: 'gone', leaseMs: LEASE_MS, queues: [{ queue: 'work', limit: count }] });
  clock.increment(LEASE_MS + 1);
}

/** Records each rescue call's limit and answer size; `timesOut(limit)` makes a call fail
 *  as PostgreSQL's statement_timeout does. */
function recordRescues(store: MemoryStore, timesOut: (limit: number) => boolean = () => false) {
  const calls: Array<[number, number | 'timeout']> = [];
  const rescue = store.rescueExpiredJobs.bind(store);
  store.rescueExpiredJobs = async (params: RescueParams = {}) => {
    const limit = params.limit!;
    if (timesOut(limit)) {
      calls.push([limit, 'timeout']);
      throw Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    }
    const rescued = await rescue(params);
    calls.push([limit, rescued.length]);
    return rescued;
  };
  return calls;
}

describe('reaper', () => {
  it('rescues in bounded batches until one comes back short', async () => {
    const { clock, store, supervisor } = setup({ handlers: { j: async () => {} } });
    await expiredLeases(store, clock, 2_500);
    const calls = recordRescues(store);
    expect(await supervisor.reap()).toBe(2_500);
    expect(calls).toEqual([
      [1_000, 1_000],
      [1_000, 1_000],
      [1_000, 500],
    ]);
    expect(await store.countJobs()).toEqual([{ queue: 'work', state: 'retrying', count: 2_500 }]);
    expect(supervisor.counters.getSnapshot().context.queues.work?.rescued).toBe(2_500);
  });

  it('halves the batch when a statement times out, and keeps the smaller batch', async () => {
    const clock = createTestClock();
    const store = memoryStore({ clock });
    await expiredLeases(store, clock, 600);
    const calls = recordRescues(store, (limit) => limit > 250);
    const reaper = new Reaper(store);
    const shrunk: number[] = [];
    expect(await reaper.reap(() => {}, (batch) => shrunk.push(batch))).toBe(600);
    expect(calls).toEqual([
      [1_000, 'timeout'],
      [500, 'timeout'],
      [250, 250],
      [250, 250],
      [250, 100],
    ]);
    expect(shrunk).toEqual([500, 250]);
    expect(reaper.batch).toBe(250);
    await expiredLeases(store, clock, 10);
    expect(await reaper.reap(() => {})).toBe(10);
    expect(calls.at(-1)).toEqual([250, 10]);
  });

  it('gives up when even the smallest batch times out', async () => {
    const clock = createTestClock();
    const store = memoryStore({ clock });
    await expiredLeases(store, clock, 20);
    recordRescues(store, () => true);
    await expect(new Reaper(store).reap(() => {})).rejects.toMatchObject({ code: '57014' });
  });
});
