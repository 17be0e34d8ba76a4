import { describe, expect, it } from 'vitest';
import type { SimulatedClock } from 'xstate';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { defineQueue, InvalidOptionError, type Job } from '../../src/index.js';
import { createSupervisor } from '../../src/supervisor/supervisor.js';
import { advance, createTestClock, deferred, settle } from '../support/sim.js';
import { stopSupervisorsAfterEach } from './harness.js';

const track = stopSupervisorsAfterEach();

/** Handlers that wait until the test releases them, recording what runs at once. */
function gatedHandlers(clock: SimulatedClock) {
  const waiting = new Map<string, () => void>();
  const started: Array<{ name: string; at: number }> = [];
  const handler = async ({ payload }: Job<{ name: string }>) => {
    started.push({ name: payload.name, at: clock.now() });
    const gate = deferred<void>();
    waiting.set(payload.name, gate.resolve);
    await gate.promise;
  };
  const release = async (name: string) => {
    waiting.get(name)!();
    waiting.delete(name);
    await settle();
  };
  return { handler, started, release, running: () => [...waiting.keys()].sort() };
}

describe('concurrency keys in the supervisor', () => {
  it('run one job per key across two supervisors; a freed key\'s next job starts at once, with no poll', async () => {
    const clock = createTestClock();
    const store = memoryStore({ clock });
    const gated = gatedHandlers(clock);
    const queue = defineQueue('sync', { concurrency: 5, handlers: { run: gated.handler } });
    for (const workerId of ['w1', 'w2']) {
      const supervisor = createSupervisor({ store, queues: [queue], clock, workerId, pollIntervalMs: 60_000 });
      track(supervisor, clock);
      await supervisor.start();
    }
    await queue.enqueueMany(store, [
      { kind: 'run', payload: { name: 'a1' }, concurrencyKey: 'customer-a' },
      { kind: 'run', payload: { name: 'a2' }, concurrencyKey: 'customer-a' },
      { kind: 'run', payload: { name: 'a3' }, concurrencyKey: 'customer-a' },
      { kind: 'run', payload: { name: 'b1' }, concurrencyKey: 'customer-b' },
      { kind: 'run', payload: { name: 'free' } },
    ]);
    await settle();
    expect(gated.running()).toEqual(['a1', 'b1', 'free']);
    await gated.release('a1');
    expect(gated.running()).toEqual(['a2', 'b1', 'free']);
    await gated.release('a2');
    await gated.release('b1');
    expect(gated.running()).toEqual(['a3', 'free']);
    expect(gated.started.every(({ at }) => at === gated.started[0]!.at)).toBe(true);
  });

  it('run up to perKeyConcurrency per key', async () => {
    const clock = createTestClock();
    const store = memoryStore({ clock });
    const gated = gatedHandlers(clock);
    const queue = defineQueue('sync', { concurrency: 5, perKeyConcurrency: 2, handlers: { run: gated.handler } });
    const supervisor = createSupervisor({ store, queues: [queue], clock, workerId: 'w1' });
    track(supervisor, clock);
    await supervisor.start();
    await queue.enqueueMany(store, ['a1', 'a2', 'a3'].map((name) => ({ kind: 'run' as const, payload: { name }, concurrencyKey: 'a' })));
    await settle();
    expect(gated.running()).toEqual(['a1', 'a2']);
    await gated.release('a2');
    expect(gated.running()).toEqual(['a1', 'a3']);
  });
});

describe('rate limits in the supervisor', () => {
  it('start at most max jobs per interval, with nothing claimed ahead, and the rest as the window moves', async () => {
    const clock = createTestClock();
    const store = memoryStore({ clock });
    const starts: number[] = [];
    const queue = defineQueue('mail', {
      concurrency: 10,
      rateLimit: { max: 2, intervalMs: 1_000 },
      handlers: { send: async () => { starts.push(clock.now()); } },
    });
    const supervisor = createSupervisor({ store, queues: [queue], clock, workerId: 'w1', pollIntervalMs: 250 });
    track(supervisor, clock);
    await supervisor.start();
    const t0 = clock.now();
    await queue.enqueueMany(store, Array.from({ length: 5 }, () => ({ kind: 'send' as const, payload: {} })));
    await settle();
    expect(starts.map((at) => at - t0)).toEqual([0, 0]);
    expect((await store.countJobs()).find((c) => c.state === 'running')).toBeUndefined();
    await advance(clock, 2_500, 250);
    expect(starts.map((at) => at - t0)).toEqual([0, 0, 1_000, 1_000, 2_000]);
  });

  it('refuse a bad rate limit or per-key limit, and an empty concurrency key', async () => {
    const handlers = { send: async () => {} };
    expect(() => defineQueue('q', { handlers, rateLimit: { max: 0, intervalMs: 1_000 } })).toThrow(InvalidOptionError);
    expect(() => defineQueue('q', { handlers, rateLimit: { max: 1, intervalMs: 0.5 } })).toThrow(/rateLimit.intervalMs/);
    expect(() => defineQueue('q', { handlers, perKeyConcurrency: 0 })).toThrow(/perKeyConcurrency/);
    const queue = defineQueue('q', { handlers });
    await expect(queue.enqueue(memoryStore(), 'send', {}, { concurrencyKey: '' })).rejects.toThrow(/concurrencyKey/);
  });
});
