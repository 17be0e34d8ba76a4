/**
 * ThroughputStats (src/inspector/throughput.ts) on the memory store with a clock it is given:
 * the window's buckets aligned on the clock, the first read covering the whole window and the
 * later ones only the last two buckets, buckets kept as they were read, and the window refused
 * when unknown.
 */
import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import type { GetThroughputParams, JobStore } from '../../src/adapters/store.js';
import { HttpError } from '../../src/inspector/http.js';
import { parseThroughputWindow, ThroughputStats } from '../../src/inspector/throughput.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T0 = Date.parse('2026-12-01T10:00:00Z');

/** A memory store of its own on a clock the test sets, with its getThroughput calls recorded. */
function setup() {
  const clock = { at: T0, now: () => clock.at };
  const store = memoryStore({ clock });
  const reads: GetThroughputParams[] = [];
  const watched = new Proxy(store, {
    get(target, name, receiver) {
      if (name === 'getThroughput') return (params: GetThroughputParams) => (reads.push(params), target.getThroughput(params));
      const value = Reflect.get(target, name, receiver) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as JobStore;
  async function complete(runMs: number): Promise<void> {
    await store.enqueueJobs({ jobs: [{ queue: 'q', kind: 'k', payload: {}, maxAttempts: 1 }] });
    const [claimed] = await store.claimJobs({ workerId: 'w', leaseMs: HOUR, queues: [{ queue: 'q', limit: 1 }] });
    clock.at += runMs;
    await store.setStatesIfRunning({ outcomes: [{ id: claimed!.id, leaseToken: claimed!.leaseToken, state: 'completed', result: null }] });
  }
  return { clock, watched, reads, complete };
}

describe('ThroughputStats', () => {
  it('reads the whole window once, then only the last two buckets', async () => {
    const { clock, watched, reads, complete } = setup();
    const stats = new ThroughputStats(watched, 0, clock.now);
    clock.at = T0 + 30 * MINUTE + 5_000;
    await complete(1_000);
    clock.at = T0 + 59 * MINUTE + 30_000;
    const first = await stats.read('1h');
    expect(reads.at(-1)).toMatchObject({ since: new Date(T0), bucketMs: MINUTE });
    expect(first.buckets).toHaveLength(60);
    expect(first.buckets[0]).toEqual(new Date(T0));
    expect(first.queues).toHaveLength(1);
    expect(first.queues[0]!.completed[30]).toBe(1);
    expect(first.queues[0]!.p50Ms[30]).toBe(1_000);
    expect(first.queues[0]!.p50Ms[29]).toBeNull();

    // A minute on: the window moves by one, and only its last two minutes are read.
    clock.at = T0 + 60 * MINUTE + 10_000;
    await complete(2_000);
    const second = await stats.read('1h');
    expect(reads.at(-1)).toMatchObject({ since: new Date(T0 + 59 * MINUTE) });
    expect(second.buckets[0]).toEqual(new Date(T0 + MINUTE));
    expect(second.queues[0]!.completed[29]).toBe(1);
    expect(second.queues[0]!.completed[59]).toBe(1);
    expect(second.queues[0]!.p95Ms[59]).toBe(2_000);
    expect(second.queues[0]!.failed.every((n) => n === 0)).toBe(true);

    // The day, per hour: its own buckets, read whole the first time.
    const day = await stats.read('24h');
    expect(reads.at(-1)).toMatchObject({ since: new Date(T0 - 22 * HOUR), bucketMs: HOUR });
    expect(day.buckets.at(-1)).toEqual(new Date(T0 + HOUR));
    expect(day.queues[0]!.completed.slice(-2)).toEqual([1, 1]);
  });

  it('answers from its cache within cacheMs, until invalidated', async () => {
    const { clock, watched, reads } = setup();
    const stats = new ThroughputStats(watched, 5_000, clock.now);
    const before = reads.length;
    const a = await stats.read('1h');
    expect(await stats.read('1h')).toBe(a);
    expect(reads.length).toBe(before + 1);
    stats.invalidate();
    await stats.read('1h');
    expect(reads.length).toBe(before + 2);
  });

  it('knows two windows, 1h by default', () => {
    expect(parseThroughputWindow(null)).toBe('1h');
    expect(parseThroughputWindow('24h')).toBe('24h');
    expect(() => parseThroughputWindow('toString')).toThrow(HttpError);
    expect(() => parseThroughputWindow('7d')).toThrow('window: must be one of 1h, 24h, got "7d"');
  });
});
