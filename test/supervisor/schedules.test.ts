import { describe, expect, it } from 'vitest';
import type { SimulatedClock } from 'xstate';
import { memoryStore, type MemoryStore } from '../../src/adapters/memory/index.js';
import { defineQueue, defineSchedule, InvalidOptionError, type Job } from '../../src/index.js';
import { createSupervisor } from '../../src/supervisor/supervisor.js';
import { advance, createTestClock } from '../support/sim.js';
import { stopSupervisorsAfterEach } from './harness.js';

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
    const failing = new Proxy(store, {
      get(target, key) {
        if (key === 'enqueueScheduledJobs' && down) return () => Promise.reject(new Error('ECONNREFUSED'));
        const value = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
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

  it('refuse a bad name, cron expression, time zone or payload, and a name given twice', () => {
    const base = { name: 'digest', cron: '* * * * *', queue: reports, kind: 'render' as const, payload: { account: 'a' } };
    expect(() => defineSchedule({ ...base, name: 'no spaces' })).toThrow(InvalidOptionError);
    expect(() => defineSchedule({ ...base, cron: 'every minute' })).toThrow(/schedule "digest" cron/);
    expect(() => defineSchedule({ ...base, timezone: 'Mars/Olympus' })).toThrow(/schedule "digest" timezone/);
    expect(() => defineSchedule({ ...base, payload: { account: 1n } as never })).toThrow(/BigInt|bigint/);
    expect(() =>
      createSupervisor({ store: memoryStore(), queues: [reports], schedules: [defineSchedule(base), defineSchedule(base)] }),
    ).toThrow(/given twice/);
  });
});
