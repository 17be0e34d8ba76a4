/** held.ts: a running job's phase and a queue's split, from the workers' heartbeats. */
import { describe, expect, it } from 'vitest';
import type { WorkerInfo } from '../../src/adapters/store.js';
import { HeldJobs } from '../../src/inspector/held.js';

const worker = (workerId: string, held: WorkerInfo['held'], running = 0): WorkerInfo => ({
  workerId, host: 'h', pid: 1, queues: ['a', 'b'], running, held, startedAt: new Date(0), lastSeenAt: new Date(0),
});

describe('HeldJobs', () => {
  const held = new HeldJobs([worker('w1', [{ id: '1', queue: 'a' }, { id: '2', queue: 'b' }], 5), worker('w2', [{ id: '7', queue: 'a' }])]);

  it("tells a running job its worker holds for a slot from one whose handler runs, by the worker's heartbeat", () => {
    expect(held.phase({ id: '1', state: 'running', workerId: 'w1' })).toBe('held');
    expect(held.phase({ id: '3', state: 'running', workerId: 'w1' })).toBe('started');
    // Held on another worker's list is not this worker's.
    expect(held.phase({ id: '7', state: 'running', workerId: 'w1' })).toBe('started');
    expect(held.phase({ id: '1', state: 'pending', workerId: 'w1' })).toBeNull();
    expect(held.phase({ id: '1', state: 'running', workerId: null })).toBeNull();
    expect(held.phase({ id: '1', state: 'running', workerId: 'gone' })).toBeNull();
  });

  it("splits a queue's running count into started and held, held at most the count", () => {
    expect(held.split('a', 10)).toEqual({ started: 8, held: 2 });
    expect(held.split('b', 1)).toEqual({ started: 0, held: 1 });
    expect(held.split('a', 1)).toEqual({ started: 0, held: 1 });
    expect(held.split('c', 3)).toEqual({ started: 3, held: 0 });
  });

  it("does not split when a worker's row does not say (an older version wrote it)", () => {
    const mixed = new HeldJobs([worker('w1', [{ id: '1', queue: 'a' }]), worker('old', null)]);
    expect(mixed.complete).toBe(false);
    expect(mixed.split('a', 4)).toBeNull();
    expect(mixed.phase({ id: '9', state: 'running', workerId: 'old' })).toBeNull();
    expect(mixed.phase({ id: '1', state: 'running', workerId: 'w1' })).toBe('held');
  });
});
