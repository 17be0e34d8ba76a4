import { describe, expect, it } from 'vitest';
import type { SimulatedClock } from 'xstate';
import { memoryStore, type MemoryStore } from '../../src/adapters/memory/index.js';
import { defineQueue, defineSchedule, InvalidOptionError, type Job } from '../../src/index.js';
import { createSupervisor } from '../../src/supervisor/supervisor.js';
import { advance, createTestClock } from '../support/sim.js';
import { stopSupervisorsAfterEach } from './harness.js';
import { interceptStore } from '../support/store-proxy.js';

const track = stopSupervisorsAfterEach();

const MINUTE = 60_000;
// 2026-11-29T12:00:00Z, on a tick of every schedule below.
const START = Date.UTC(2026, 10, 29, 12, 0, 0);

const reports = defineQueue('reports', {
  handlers: { render: async ({ payload }: Job<{ account: string }>) => payload.account },
});

function every5Minutes(options: { catchUp?: boolean } = {}) {
  return defineSchedule({ name: 'digest', cron: '*/5 * * * *', queue: reports, kind: 'render', payload: { account: 'acme' }, ...options });
}

function startSupervisor(store: MemoryStore, clock: SimulatedClock, schedule = every5Minutes(), workerId = 'w1') {
  const supervisor = createSupervisor({ store, queues: [reports], schedules: [schedule], clock, workerId });
  track(supervisor, clock);
  return supervisor;
}

async function ticksEnqueued(store: MemoryStore): Promise<string[]> {
  return (await store.listJobs({ queue: 'reports', limit: 500 })).map((job) => job.runAt.toISOString()).reverse();
}

const at = (minutes: number) => new Date(START + minutes * MINUTE).toISOString();

describe('schedules', () => {
  it('enqueue each tick once, due at the tick, from the first tick after the schedule was first seen', async () => {
    const clock = createTestClock(START);
    const store = memoryStore({ clock });
    await startSupervisor(store, clock).start();
    await advance(clock, 1_000);
    expect(await ticksEnqueued(store)).toEqual([]);
    await advance(clock, 11 * MINUTE - 1_000, 10_000);
    expect(await ticksEnqueued(store)).toEqual([at(5), at(10)]);
    const [job] = await store.listJobs({ queue: 'reports', limit: 1 });
    expect(job).toMatchObject({ state: 'completed', kind: 'render', payload: { account: 'acme' }, result: 'acme', uniqueKey: `digest@${at(10)}` });
  });

  it('two supervisors on one store enqueue each tick once', async () => {
    const clock = createTestClock(START);
    const store = memoryStore({ clock });
    await startSupervisor(store, clock, every5Minutes(), 'w1').start();
    await startSupervisor(store, clock, every5Minutes(), 'w2').start();
    await advance(clock, 31 * MINUTE, 10_000);
    expect(await ticksEnqueued(store)).toEqual([5, 10, 15, 20, 25, 30].map(at));
  });

  it('after a time with no supervisor, enqueue only the latest missed tick by default', async () => {
    const clock = createTestClock(START);
    const store = memoryStore({ clock });
    const first = startSupervisor(store, clock);
    await first.start();
    await advance(clock, 6 * MINUTE, 10_000);
    await first.stop({ graceMs: 0 });
    await advance(clock, 30 * MINUTE, 60_000);
    await startSupervisor(store, clock, every5Minutes(), 'w2').start();
    await advance(clock, 1_000);
    expect(await ticksEnqueued(store)).toEqual([at(5), at(35)]);
  });

  it('with catchUp, enqueue every missed tick, oldest first', async () => {
    const clock = createTestClock(START);
    const store = memoryStore({ clock });
    const first = startSupervisor(store, clock, every5Minutes({ catchUp: true }));
    await first.start();
    await advance(clock, 1_000);
    await first.stop({ graceMs: 0 });
    await advance(clock, 20 * MINUTE, 60_000);
    await startSupervisor(store, clock, every5Minutes({ catchUp: true }), 'w2').start();
    await advance(clock, 1_000);
    expect(await ticksEnqueued(store)).toEqual([5, 10, 15, 20].map(at));
  });

  it('read the expression in the schedule\'s time zone', async () => {
    const clock = createTestClock(START);
    const store = memoryStore({ clock });
    const nineInNewYork = defineSchedule({
      name: 'morning', cron: '0 9 * * *', timezone: 'America/New_York', queue: reports, kind: 'render', payload: { account: 'ny' },
    });
    await startSupervisor(store, clock, nineInNewYork).start();
    await advance(clock, 2 * 60 * MINUTE + 1_000, 30_000);
    // 9:00 in New York in November (EST, UTC-5) is 14:00 UTC.
    expect(await ticksEnqueued(store)).toEqual([at(120)]);
  });

  it('keep running when the store fails, and enqueue the tick once it answers', async () => {
    const clock = createTestClock(START);
    const store = memoryStore({ clock });
    let down = false;
    const failing = interceptStore(store, {
      enqueueScheduledJobs: (params) => (down ? Promise.reject(new Error('ECONNREFUSED')) : store.enqueueScheduledJobs(params)),
    });
    const supervisor = createSupervisor({ store: failing, queues: [reports], schedules: [every5Minutes()], clock, workerId: 'w1' });
    track(supervisor, clock);
    await supervisor.start();
    await advance(clock, 1_000);
    down = true;
    await advance(clock, 5 * MINUTE, 10_000);
    expect(supervisor.counters.getSnapshot().context.lastError?.message).toBe('ECONNREFUSED');
    down = false;
    await advance(clock, 5_000);
    expect(await ticksEnqueued(store)).toEqual([at(5)]);
  });

  it('enqueue every tick of 1,000 every-second schedules over a minute, however late the checks run', async () => {
    const clock = createTestClock(START);
    const store = memoryStore({ clock });
    const ticks = defineQueue('ticks', { handlers: { tick: async () => {} } });
    const enqueued: string[] = [];
    // Each check's write takes 400 ms of the clock (a busy database or event loop).
    const slow = new Proxy(store, {
      get(target, key) {
        if (key === 'enqueueScheduledJobs') {
          return async (params: Parameters<MemoryStore['enqueueScheduledJobs']>[0]) => {
            const applied = await target.enqueueScheduledJobs(params);
            params.advances.forEach((a, i) => applied[i] && enqueued.push(...a.jobs.map((job) => job.uniqueKey!)));
            clock.increment(400);
            return applied;
          };
        }
        const value = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const schedules = Array.from({ length: 1_000 }, (_, i) =>
      defineSchedule({ name: `s${i}`, cron: '* * * * * *', queue: ticks, kind: 'tick', payload: {} }),
    );
    // The ticks' queue is not run here: the test counts what is enqueued.
    const supervisor = createSupervisor({ store: slow, queues: [reports], schedules, clock, workerId: 'w1' });
    track(supervisor, clock);
    await supervisor.start();
    // Uneven strides: a timer fires up to 1.7 s after it was due.
    for (let moved = 0, i = 0; moved < MINUTE; i++) {
      const stride = [300, 1_700, 900, 1_300][i % 4]!;
      await advance(clock, stride, stride);
      moved += stride;
    }
    const expected = schedules.flatMap((s) => Array.from({ length: 60 }, (_, k) => `${s.name}@${new Date(START + (k + 1) * 1_000).toISOString()}`));
    const due = new Set(expected);
    expect(enqueued.filter((key) => due.has(key)).sort()).toEqual(expected.sort());
    expect(new Set(enqueued).size).toBe(enqueued.length);
    expect((await store.countJobs()).find((c) => c.queue === 'ticks')?.count).toBe(enqueued.length);
  });

  it('enqueue ticks due while running even without catchUp, when the store was down for a while', async () => {
    const clock = createTestClock(START);
    const store = memoryStore({ clock });
    let down = false;
    const failing = interceptStore(store, {
      enqueueScheduledJobs: (params) => (down ? Promise.reject(new Error('ECONNREFUSED')) : store.enqueueScheduledJobs(params)),
    });
    const supervisor = createSupervisor({ store: failing, queues: [reports], schedules: [every5Minutes()], clock, workerId: 'w1' });
    track(supervisor, clock);
    await supervisor.start();
    await advance(clock, 1_000);
    down = true;
    await advance(clock, 16 * MINUTE, 10_000);
    down = false;
    await advance(clock, 5_000);
    expect(await ticksEnqueued(store)).toEqual([at(5), at(10), at(15)]);
  });

  for (const skew of [10 * MINUTE, -10 * MINUTE]) {
    it(`compute and write ticks by the store's clock with the worker's clock ${skew > 0 ? 'ahead' : 'behind'} by 10 minutes`, async () => {
      // The supervisor's clock reads START + skew when the store's reads START.
      const clock = createTestClock(START + skew);
      const store = memoryStore({ clock: { now: () => clock.now() - skew } });
      await startSupervisor(store, clock).start();
      await advance(clock, 11 * MINUTE, 10_000);
      expect(await ticksEnqueued(store)).toEqual([at(5), at(10)]);
      expect((await store.getSchedules({ names: ['digest'] })).schedules).toEqual([{ name: 'digest', lastTickAt: new Date(at(10)), pausedAt: null }]);
    });
  }

  it('refuse a bad name, cron expression, time zone, kind or payload, and a name given twice', () => {
    const base = { name: 'digest', cron: '* * * * *', queue: reports, kind: 'render' as const, payload: { account: 'a' } };
    expect(() => defineSchedule({ ...base, name: 'no spaces' })).toThrow(InvalidOptionError);
    expect(() => defineSchedule({ ...base, cron: 'every minute' })).toThrow(/schedule "digest" cron/);
    expect(() => defineSchedule({ ...base, timezone: 'Mars/Olympus' })).toThrow(/schedule "digest" timezone/);
    expect(() => defineSchedule({ ...base, payload: { account: 1n } as never })).toThrow(/BigInt|bigint/);
    expect(() => defineSchedule({ ...base, kind: 'fax' } as never)).toThrow('kind: queue "reports" has no handler for kind "fax" (it has render)');
    expect(() =>
      createSupervisor({ store: memoryStore(), queues: [reports], schedules: [defineSchedule(base), defineSchedule(base)] }),
    ).toThrow(/given twice/);
  });
});
