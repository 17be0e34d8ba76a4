/**
 * ThroughputStats (src/inspector/throughput.ts) on the memory store with a clock it is given:
 * the window's buckets aligned on the clock; what each read takes from the history (the open
 * minutes, then the closed buckets nobody saved, newest first, in runs of 1, 2, 4 …) and from
 * the throughput summary; the day's hours made from minutes; a read that hits its limit; a
 * save that fails; the cache; the window refused when unknown.
 */
import { describe, expect, it, vi } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import type { GetThroughputParams, JobStore, SaveThroughputSummaryParams, ThroughputBucket } from '../../src/adapters/store.js';
import { HttpError } from '../../src/inspector/http.js';
import { parseThroughputWindow, ThroughputStats } from '../../src/inspector/throughput.js';
import type { Logger } from '../../src/types.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T0 = Date.parse('2026-12-01T10:00:00Z');

/** A memory store of its own on a clock the test sets, with its getThroughput and
 *  saveThroughputSummary calls recorded, and the answers of getThroughput open to a change. */
function setup() {
  const clock = { at: T0, now: () => clock.at };
  const store = memoryStore({ clock });
  const reads: GetThroughputParams[] = [];
  const saves: SaveThroughputSummaryParams[] = [];
  const hooks = {
    history: (_params: GetThroughputParams, answer: ThroughputBucket[]) => answer,
    save: (params: SaveThroughputSummaryParams) => store.saveThroughputSummary(params),
  };
  const watched = new Proxy(store, {
    get(target, name, receiver) {
      if (name === 'getThroughput') {
        return async (params: GetThroughputParams) => (reads.push(params), hooks.history(params, await target.getThroughput(params)));
      }
      if (name === 'saveThroughputSummary') return (params: SaveThroughputSummaryParams) => (saves.push(params), hooks.save(params));
      const value = Reflect.get(target, name, receiver) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as JobStore;
  async function complete(runMs: number, queue = 'q'): Promise<void> {
    await store.enqueueJobs({ jobs: [{ queue, kind: 'k', payload: {}, maxAttempts: 1 }] });
    const [claimed] = await store.claimJobs({ workerId: 'w', leaseMs: HOUR, queues: [{ queue, limit: 1 }] });
    clock.at += runMs;
    await store.setStatesIfRunning({ outcomes: [{ id: claimed!.id, leaseToken: claimed!.leaseToken, state: 'completed', result: null }] });
  }
  /** The ranges read from the history since the last call, in minutes from T0 (null: no end). */
  function ranges(): Array<[number, number | null]> {
    const taken = reads.splice(0);
    return taken.map((p) => [(p.since.getTime() - T0) / MINUTE, p.until === undefined ? null : (p.until.getTime() - T0) / MINUTE]);
  }
  const stats = () => new ThroughputStats(watched, 0, clock.now);
  return { clock, store, watched, reads, saves, hooks, complete, ranges, stats };
}

describe('ThroughputStats', () => {
  it('on a fresh store: the open minutes, then the closed ones newest first, in runs of 1, 2, 4 …, each saved', async () => {
    const { clock, store, saves, complete, ranges, stats } = setup();
    clock.at = T0 + 30 * MINUTE + 5_000;
    await complete(1_000);
    clock.at = T0 + 59 * MINUTE + 30_000;
    const view = await stats().read('1h');
    expect(ranges()).toEqual([
      [58, null],
      [57, 58],
      [55, 57],
      [51, 55],
      [43, 51],
      [27, 43],
      [0, 27],
    ]);
    expect(view.buckets).toHaveLength(60);
    expect(view.buckets[0]).toEqual(new Date(T0));
    expect(view.partial).toBe(false);
    expect(view.queues).toHaveLength(1);
    expect(view.queues[0]!.completed[30]).toBe(1);
    expect(view.queues[0]!.p50Ms[30]).toBe(1_000);
    expect(view.queues[0]!.p50Ms[29]).toBeNull();

    // The 58 closed minutes are saved, idle ones too; the open ones are not.
    expect(saves.map((s) => [s.bucketMs, s.buckets.length])).toEqual([[MINUTE, 58]]);
    const saved = await store.getThroughputSummary({ bucketMs: MINUTE, since: new Date(T0 - HOUR), until: new Date(T0 + 2 * HOUR) });
    expect(saved.map((b) => (b.start.getTime() - T0) / MINUTE)).toEqual(Array.from({ length: 58 }, (_, i) => i));
    expect(saved[30]!.queues).toEqual([expect.objectContaining({ queue: 'q', completed: 1, p50Ms: 1_000 })]);
  });

  it('refreshes read the open minutes, and once a minute that was open has closed, it again', async () => {
    const { clock, complete, ranges, stats } = setup();
    clock.at = T0 + 59 * MINUTE + 30_000;
    const first = stats();
    await first.read('1h');
    ranges();
    // Read while open: half of minute 59.
    await complete(1_000);
    expect((await first.read('1h')).queues[0]!.completed[59]).toBe(1);
    expect(ranges()).toEqual([[58, null]]);
    // Minute 59 fills up; minute 60 begins. Minute 58 has closed: read once more, and saved.
    clock.at = T0 + 59 * MINUTE + 50_000;
    await complete(2_000);
    clock.at = T0 + 60 * MINUTE + 10_000;
    const second = await first.read('1h');
    expect(ranges()).toEqual([
      [59, null],
      [58, 59],
    ]);
    expect(second.buckets[0]).toEqual(new Date(T0 + MINUTE));
    expect(second.queues[0]!.completed[58]).toBe(2);
    expect(second.queues[0]!.p95Ms[58]).toBe(2_000);
    // Minute 59 closes: what was read of it while open is not kept.
    clock.at = T0 + 61 * MINUTE + 5_000;
    await first.read('1h');
    expect(ranges()).toEqual([
      [60, null],
      [59, 60],
    ]);
  });

  it('a fresh inspector on a filled summary reads from the history only the open minutes, and shows the same', async () => {
    const { clock, complete, ranges, stats } = setup();
    clock.at = T0 + 30 * MINUTE;
    await complete(700, 'a');
    clock.at = T0 + 3 * HOUR + 20 * MINUTE;
    await complete(1_300, 'b');
    clock.at = T0 + 3 * HOUR + 59 * MINUTE;
    await complete(400, 'a');
    clock.at = T0 + 3 * HOUR + 59 * MINUTE + 30_000;
    const earlier = stats();
    const [hour, day] = [await earlier.read('1h'), await earlier.read('24h')];
    ranges();

    const fresh = stats();
    expect(await fresh.read('1h')).toEqual(hour);
    expect(await fresh.read('24h')).toEqual(day);
    expect(ranges()).toEqual([
      [3 * 60 + 58, null],
      [3 * 60 + 58, null],
    ]);
    expect(day.queues.map((q) => [q.queue, q.completed.slice(-4)])).toEqual([
      ['a', [1, 0, 0, 1]],
      ['b', [0, 0, 0, 1]],
    ]);
  });

  it('the day: older hours from the history, the open ones and the one that closed last made from minutes, and that one saved', async () => {
    const { clock, store, complete, ranges, stats } = setup();
    clock.at = T0 - 5 * HOUR + 10 * MINUTE;
    await complete(90);
    clock.at = T0 - 90 * MINUTE;
    await complete(110);
    clock.at = T0 + 20 * MINUTE;
    await complete(130);
    clock.at = T0 + 59 * MINUTE + 30_000;
    const day = stats();
    const first = await day.read('24h');
    expect(first.buckets[0]).toEqual(new Date(T0 - 23 * HOUR));
    expect(first.queues[0]!.completed.slice(-6)).toEqual([1, 0, 0, 1, 0, 1]);
    expect(first.queues[0]!.p50Ms.slice(-6)).toEqual([90, null, null, 110, null, 130]);
    // The open minutes; the minutes of the open hour and of the two before it (the one before
    // the current hour is open too, the one before that closed and is made from them), newest
    // first; then the older hours.
    expect(ranges()).toEqual([
      [58, null],
      [57, 58],
      [55, 57],
      [51, 55],
      [43, 51],
      [27, 43],
      [-5, 27],
      [-69, -5],
      [-120, -69],
      [-180, -120],
      [-300, -180],
      [-540, -300],
      [-1020, -540],
      [-1380, -1020],
    ]);
    const savedHours = await store.getThroughputSummary({ bucketMs: HOUR, since: new Date(T0 - 24 * HOUR), until: new Date(T0 + HOUR) });
    expect(savedHours.map((b) => (b.start.getTime() - T0) / HOUR)).toEqual(Array.from({ length: 22 }, (_, i) => i - 23));

    // The next hour: the hour that closed is made from the minutes read before; only the
    // minutes that closed since and the open ones come from the history.
    clock.at = T0 + HOUR + 30_000;
    const next = await day.read('24h');
    expect(ranges()).toEqual([
      [59, null],
      [58, 59],
    ]);
    expect(next.queues[0]!.completed.slice(-4)).toEqual([1, 0, 1, 0]);
    const saved = await store.getThroughputSummary({ bucketMs: HOUR, since: new Date(T0 - HOUR), until: new Date(T0 + HOUR) });
    expect(saved.map((b) => (b.start.getTime() - T0) / HOUR)).toEqual([-1]);
  });

  it('a read that hits its limit gives lower bounds and saves only what it read whole; the next read goes on', async () => {
    const { clock, store, hooks, complete, ranges, stats } = setup();
    clock.at = T0 + 30 * MINUTE + 5_000;
    await complete(1_000);
    clock.at = T0 + 59 * MINUTE + 30_000;
    // The minutes before 45 hold more history than a read may take.
    hooks.history = (params, answer) =>
      params.until !== undefined && params.until.getTime() <= T0 + 45 * MINUTE
        ? [...answer, { queue: 'q', bucket: 0, completed: 0, retried: 0, dead: 0, attempts: 0, p50Ms: null, p95Ms: null, runTimes: [], events: params.maxEvents! }]
        : answer;
    const stats1 = stats();
    const cut = await stats1.read('1h');
    expect(cut.partial).toBe(true);
    expect(cut.queues[0]!.completed[30]).toBe(1);
    expect(ranges()).toEqual([
      [58, null],
      [57, 58],
      [55, 57],
      [51, 55],
      [43, 51],
      [27, 43],
    ]);
    const saved = await store.getThroughputSummary({ bucketMs: MINUTE, since: new Date(T0), until: new Date(T0 + HOUR) });
    expect(saved.map((b) => (b.start.getTime() - T0) / MINUTE)).toEqual(Array.from({ length: 15 }, (_, i) => 43 + i));

    hooks.history = (_params, answer) => answer;
    const whole = await stats1.read('1h');
    expect(whole.partial).toBe(false);
    expect(whole.queues[0]!.completed[30]).toBe(1);
    expect(ranges()).toEqual([
      [58, null],
      [42, 43],
      [40, 42],
      [36, 40],
      [28, 36],
      [12, 28],
      [0, 12],
    ]);
  });

  it('a save that fails is logged once, and every view is still answered', async () => {
    const { clock, hooks, complete, watched } = setup();
    hooks.save = () => Promise.reject(new Error('cannot execute INSERT in a read-only transaction'));
    const warn = vi.fn<Logger['warn']>();
    const stats = new ThroughputStats(watched, 0, clock.now, { debug() {}, info() {}, warn, error() {} });
    clock.at = T0 + 30 * MINUTE + 5_000;
    await complete(1_000);
    clock.at = T0 + 59 * MINUTE + 30_000;
    expect((await stats.read('1h')).queues[0]!.completed[30]).toBe(1);
    clock.at += 2 * MINUTE;
    expect((await stats.read('1h')).queues[0]!.completed[28]).toBe(1);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![1]).toContain('throughput summary not saved');
  });

  it('answers from its cache within cacheMs, until invalidated', async () => {
    const { clock, watched, reads } = setup();
    const stats = new ThroughputStats(watched, 5_000, clock.now);
    const a = await stats.read('1h');
    const before = reads.length;
    expect(await stats.read('1h')).toBe(a);
    expect(reads.length).toBe(before);
    stats.invalidate();
    await stats.read('1h');
    expect(reads.length).toBe(before + 1);
  });

  it('knows two windows, 1h by default', () => {
    expect(parseThroughputWindow(null)).toBe('1h');
    expect(parseThroughputWindow('24h')).toBe('24h');
    expect(() => parseThroughputWindow('toString')).toThrow(HttpError);
    expect(() => parseThroughputWindow('7d')).toThrow('window: must be one of 1h, 24h, got "7d"');
  });
});
