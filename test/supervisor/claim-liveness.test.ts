/**
 * Liveness of the claim decision through the public API: a slot freed while its queue has due
 * jobs is filled in the next claim round, never left for the poll, whatever the supervisor's
 * other queues (idle, gated, sharing the global limit) last answered. The simulated clock
 * never moves here, so no poll, backoff or reaper timer ever fires: every claim after the
 * first comes from a slot freed or a wake-up.
 */
import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { defineQueue, type Queue } from '../../src/index.js';
import { createSupervisor, type SupervisorOptions } from '../../src/supervisor/supervisor.js';
import { createTestClock, settle } from '../support/sim.js';
import { stopSupervisorsAfterEach } from './harness.js';

const track = stopSupervisorsAfterEach();
const JOBS = 200;

/** `work` ends a turn of the event loop later (as I/O would), after the claim round that
 *  started it has answered; `sync` returns at once. */
const noop = { work: () => new Promise((resolve) => setImmediate(resolve)), sync: () => null };

interface Config {
  name: string;
  queues: () => Queue<any>[];
  options?: Partial<SupervisorOptions>;
}

const CONFIGS: Config[] = [
  { name: 'one busy queue alone', queues: () => [defineQueue('busy', { concurrency: 10, handlers: noop })] },
  {
    name: 'one busy and one idle queue',
    queues: () => [defineQueue('busy', { concurrency: 10, handlers: noop }), defineQueue('idle', { concurrency: 2, handlers: noop })],
  },
  {
    name: 'one busy and three idle queues, two of them sharing a gate',
    queues: () => [
      defineQueue('busy', { concurrency: 10, handlers: noop }),
      defineQueue('idle1', { concurrency: 2, handlers: noop }),
      defineQueue('idle2', { concurrency: 2, gate: 'gpu', handlers: noop }),
      defineQueue('idle3', { concurrency: 2, gate: 'gpu', handlers: noop }),
    ],
    options: { gates: { gpu: 1 } },
  },
  {
    name: 'a busy gated queue beside an idle one on the same gate',
    queues: () => [
      defineQueue('busy', { concurrency: 4, gate: 'gpu', handlers: noop }),
      defineQueue('idle', { concurrency: 4, gate: 'gpu', handlers: noop }),
    ],
    options: { gates: { gpu: 2 } },
  },
  {
    name: 'a busy and an idle queue under a global limit below their sum',
    queues: () => [defineQueue('busy', { concurrency: 10, handlers: noop }), defineQueue('idle', { concurrency: 10, handlers: noop })],
    options: { concurrency: 3 },
  },
];

describe('no free slot waits for a poll while its queue has due jobs', () => {
  for (const config of CONFIGS) {
    for (const kind of ['work', 'sync'] as const) {
      it(`${config.name} (${kind === 'sync' ? 'synchronous' : 'async'} handlers): every job runs with the clock standing still`, async () => {
        const clock = createTestClock();
        const store = memoryStore({ clock });
        const queues = config.queues();
        const busy = queues[0]!;
        const supervisor = createSupervisor({ store, queues, clock, workerId: 'w1', ...config.options });
        track(supervisor, clock);
        await busy.enqueueMany(store, Array.from({ length: JOBS }, (_, n) => ({ kind, payload: { n } })));
        await supervisor.start();
        const completed = async () => (await store.countJobs()).find((c) => c.state === 'completed')?.count ?? 0;
        // Bounds only a hang: each round lets every promise settle.
        for (let round = 0; round < 5_000 && (await completed()) < JOBS; round++) await settle(1);
        expect(await store.countJobs()).toEqual([{ queue: 'busy', state: 'completed', count: JOBS }]);
      });
    }
  }
});

describe('queues that share a limit take turns', () => {
  type Record = (queue: string) => void;
  const handlersOf = (name: string, record: Record) => ({
    work: () => {
      record(name);
      return new Promise((resolve) => setImmediate(resolve));
    },
  });
  const FAIR: { name: string; queues: (record: Record) => Queue<any>[]; options: Partial<SupervisorOptions> }[] = [
    {
      name: 'two busy queues on one gate',
      queues: (record) => ['a', 'b'].map((q) => defineQueue(q, { concurrency: 4, gate: 'gpu', handlers: handlersOf(q, record) })),
      options: { gates: { gpu: 2 } },
    },
    {
      name: 'two busy queues under a global limit below their sum',
      queues: (record) => ['a', 'b'].map((q) => defineQueue(q, { concurrency: 4, handlers: handlersOf(q, record) })),
      options: { concurrency: 2 },
    },
  ];
  for (const config of FAIR) {
    it(`${config.name}: neither waits out the other's backlog`, async () => {
      const clock = createTestClock();
      const store = memoryStore({ clock });
      const starts: string[] = [];
      const queues = config.queues((queue) => starts.push(queue));
      const supervisor = createSupervisor({ store, queues, clock, workerId: 'w1', ...config.options });
      track(supervisor, clock);
      // a runs alone long enough for its start rate to earn it jobs claimed ahead (the clock
      // moves 2 ms a round), then b's backlog arrives.
      await queues[0]!.enqueueMany(store, Array.from({ length: 300 }, (_, n) => ({ kind: 'work', payload: { n } })));
      await supervisor.start();
      const round = async () => {
        clock.increment(2);
        await settle(1);
      };
      for (let i = 0; i < 5_000 && starts.length < 60; i++) await round();
      await queues[1]!.enqueueMany(store, Array.from({ length: 100 }, (_, n) => ({ kind: 'work', payload: { n } })));
      const before = starts.length;
      for (let i = 0; i < 20_000 && starts.length < 400; i++) await round();
      expect(starts).toHaveLength(400);
      // From b's arrival the shared slots alternate: of the next 200 starts, b has about half
      // (before the fix: the 19 it had claimed early, then none until a's backlog was gone).
      expect(starts.slice(before, before + 200).filter((q) => q === 'b').length).toBeGreaterThanOrEqual(80);
    });
  }
});

describe('an idle queue beside a busy one', () => {
  it('a job of it that becomes due without a wake-up starts within a poll interval, not after the busy backlog', async () => {
    const clock = createTestClock();
    const store = memoryStore({ clock });
    let idleStartedAt: number | undefined;
    let busyDone = 0;
    // Busy jobs take 20 ms of the clock: the busy queue claims more often than the poll.
    const busy = defineQueue('busy', {
      concurrency: 2,
      handlers: { work: () => new Promise<void>((resolve) => clock.setTimeout(() => (busyDone++, resolve()), 20)) },
    });
    const idle = defineQueue('idle', { concurrency: 2, handlers: { work: () => void (idleStartedAt = clock.now()) } });
    const supervisor = createSupervisor({ store, queues: [busy, idle], clock, workerId: 'w1', pollIntervalMs: 1_000 });
    track(supervisor, clock);
    await busy.enqueueMany(store, Array.from({ length: 400 }, (_, n) => ({ kind: 'work', payload: { n } })));
    // Due 300 ms after the start: the first claim round finds it not due yet, and no
    // notification comes when it becomes due.
    const dueAt = clock.now() + 300;
    await idle.enqueue(store, 'work', {}, { runAt: new Date(dueAt) });
    await supervisor.start();
    for (let i = 0; i < 5_000 && idleStartedAt === undefined; i++) {
      clock.increment(5);
      await settle(1);
    }
    expect(idleStartedAt).toBeDefined();
    // The 400 busy jobs take 4 s at two at a time; before the fix the idle job waited for them.
    expect(busyDone).toBeLessThan(400);
    expect(idleStartedAt! - dueAt).toBeLessThanOrEqual(1_000 + 100);
  });
});

describe('stop', () => {
  it('starts no job claimed ahead once it is called: each is given back at once, no attempt spent', async () => {
    const clock = createTestClock();
    const store = memoryStore({ clock });
    const starts: number[] = [];
    let blocked: (() => void)[] | undefined;
    const queue = defineQueue('q', {
      concurrency: 2,
      handlers: {
        work: ({ payload }: { payload: { n: number } }) => {
          starts.push(payload.n);
          return new Promise<void>((resolve) => (blocked ? blocked.push(resolve) : setImmediate(resolve)));
        },
      },
    });
    const supervisor = createSupervisor({ store, queues: [queue], clock, workerId: 'w1' });
    track(supervisor, clock);
    await queue.enqueueMany(store, Array.from({ length: 300 }, (_, n) => ({ kind: 'work', payload: { n } })));
    await supervisor.start();
    const round = async () => {
      clock.increment(2);
      await settle(1);
    };
    // Fast jobs earn the queue jobs claimed ahead; then two handlers hang, and jobs wait held.
    for (let i = 0; i < 5_000 && starts.length < 100; i++) await round();
    blocked = [];
    const leased = async () => (await store.listJobs({ queue: 'q', state: 'running' })).length;
    for (let i = 0; i < 500 && (blocked.length < 2 || (await leased()) <= 2); i++) await round();
    expect(blocked).toHaveLength(2);
    expect(await leased()).toBeGreaterThan(2);
    const startedBeforeStop = starts.length;
    const stopped = supervisor.stop({ graceMs: 10_000 });
    for (let i = 0; i < 50; i++) await round();
    // Only the two hanging handlers still hold their jobs; nothing else started.
    expect(starts).toHaveLength(startedBeforeStop);
    expect(await leased()).toBe(2);
    for (const resolve of blocked) resolve();
    await stopped;
    const count = async (state: 'completed' | 'running' | 'pending' | 'retrying') =>
      (await store.countJobs()).find((c) => c.state === state)?.count ?? 0;
    expect(await count('completed')).toBe(startedBeforeStop);
    expect(await count('running')).toBe(0);
    // The rest wait again, none of them with an attempt spent.
    expect((await count('pending')) + (await count('retrying'))).toBe(300 - startedBeforeStop);
    const released = await store.listJobs({ queue: 'q', state: 'retrying', limit: 300 });
    expect(released.filter((j) => j.attempt >= j.maxAttempts)).toEqual([]);
  });
});
