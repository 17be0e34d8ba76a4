import { describe, expect, it } from 'vitest';
import { defineQueue } from '../../src/queue.js';
import { ClaimPlanner } from '../../src/supervisor/claim-planner.js';

function clock(start = 0) {
  let now = start;
  return { now: () => now, advance: (ms: number) => { now += ms; } };
}

const handlers = { j: async () => null };

describe('claim planner', () => {
  it('asks for free slots only until a start rate is measured', () => {
    const c = clock();
    const q = defineQueue('q', { concurrency: 4, handlers });
    const slots = new ClaimPlanner([q], 10, {}, { windowMs: 50, max: 500 }, c);
    expect(slots.plan()).toEqual([{ queue: 'q', limit: 4, leaseMs: 120_000 }]);
  });

  it('prefetches what the queue starts in the window, up to the maximum, minus what it holds', () => {
    const c = clock();
    const q = defineQueue('q', { concurrency: 4, handlers });
    const slots = new ClaimPlanner([q], 10, {}, { windowMs: 50, max: 30 }, c);
    // 200 starts in 100 ms: 2 per ms. The first window averages with zero: 1 per ms → 50.
    for (let i = 0; i < 200; i++) { slots.start(q); slots.release(q); }
    c.advance(100);
    expect(slots.plan()).toEqual([{ queue: 'q', limit: 4 + 30, leaseMs: 120_000 }]);
    for (let i = 0; i < 10; i++) slots.hold(q);
    expect(slots.plan()[0]!.limit).toBe(4 + 30 - 10);
  });

  it('tops up its prefetch only once it holds a quarter of its window or less, then for the whole window', () => {
    const c = clock();
    const q = defineQueue('q', { concurrency: 4, handlers });
    const slots = new ClaimPlanner([q], 10, {}, { windowMs: 50, max: 40 }, c);
    for (let i = 0; i < 200; i++) { slots.start(q); slots.release(q); }
    c.advance(100);
    for (let i = 0; i < 4; i++) slots.start(q);
    // Every slot busy, 11 held beyond them: over a quarter of the window of 40, so no claim yet.
    for (let i = 0; i < 11; i++) slots.hold(q);
    expect(slots.wantsClaim()).toBe(false);
    expect(slots.plan()).toEqual([]);
    // 10 held: a quarter of the window. The claim asks for the rest of it.
    slots.unhold(q);
    expect(slots.plan()).toEqual([{ queue: 'q', limit: 30, leaseMs: 120_000 }]);
    // A freed slot goes to a held job: still no claim while over a quarter of the window is held.
    for (let i = 0; i < 15; i++) slots.hold(q);
    slots.release(q);
    expect(slots.plan()).toEqual([]);
    // Nothing held: the free slot is claimed for at once, with the whole window.
    for (let i = 0; i < 25; i++) slots.unhold(q);
    expect(slots.plan()).toEqual([{ queue: 'q', limit: 1 + 40, leaseMs: 120_000 }]);
  });

  it('gives no prefetch to jobs that start fast and then hold their slots: the rate is of slots freed', () => {
    const c = clock();
    const q = defineQueue('q', { concurrency: 4, handlers });
    const slots = new ClaimPlanner([q], 10, {}, { windowMs: 500, max: 500 }, c);
    // Four long jobs start at once and run on: nothing frees a slot for a held job to take.
    for (let i = 0; i < 4; i++) slots.start(q);
    c.advance(100);
    expect(slots.plan()).toEqual([]);
    expect(slots.wantsClaim()).toBe(false);
    // One ends: its slot is claimed for, and the one freed slot in 100 ms buys a little prefetch.
    slots.release(q);
    c.advance(100);
    expect(slots.plan()).toEqual([{ queue: 'q', limit: 1 + 2, leaseMs: 120_000 }]);
  });

  it('measures the rate over at least 100 ms, each window averaged with the last', () => {
    const c = clock();
    const q = defineQueue('q', { concurrency: 4, handlers });
    const slots = new ClaimPlanner([q], 10, {}, { windowMs: 50, max: 500 }, c);
    for (let i = 0; i < 200; i++) { slots.start(q); slots.release(q); }
    // 99 ms: too short a window to measure; nothing ahead yet.
    c.advance(99);
    expect(slots.plan()).toEqual([{ queue: 'q', limit: 4, leaseMs: 120_000 }]);
    // 100 ms, 200 freed: 2 per ms, averaged with the 0 before it: 1 per ms, 50 in the window.
    c.advance(1);
    expect(slots.plan()).toEqual([{ queue: 'q', limit: 4 + 50, leaseMs: 120_000 }]);
    // Read again within the window: the same rate, not measured again.
    c.advance(50);
    expect(slots.plan()).toEqual([{ queue: 'q', limit: 4 + 50, leaseMs: 120_000 }]);
    // 100 ms more, 20 freed: 0.2 per ms, averaged with 1: 0.6 per ms, 30 in the window.
    for (let i = 0; i < 20; i++) { slots.start(q); slots.release(q); }
    c.advance(50);
    expect(slots.plan()).toEqual([{ queue: 'q', limit: 4 + 30, leaseMs: 120_000 }]);
  });

  it('prefetches nothing for a rate-limited queue, whatever its rate (a claim is what the limit counts)', () => {
    const c = clock();
    const q = defineQueue('q', { concurrency: 4, rateLimit: { max: 1_000, intervalMs: 1_000 }, handlers });
    const slots = new ClaimPlanner([q], 10, {}, { windowMs: 50, max: 500 }, c);
    for (let i = 0; i < 200; i++) { slots.start(q); slots.release(q); }
    c.advance(100);
    expect(slots.plan()).toEqual([{ queue: 'q', limit: 4, leaseMs: 120_000 }]);
  });

  it('gives a slow queue no prefetch', () => {
    const c = clock();
    const q = defineQueue('q', { concurrency: 2, handlers });
    const slots = new ClaimPlanner([q], 10, {}, { windowMs: 50, max: 500 }, c);
    for (let i = 0; i < 3; i++) { slots.start(q); slots.release(q); c.advance(1_000); slots.plan(); }
    expect(slots.plan()).toEqual([{ queue: 'q', limit: 2, leaseMs: 120_000 }]);
  });

  it('counts held jobs against the running slots they will take, globally and per gate', () => {
    const c = clock();
    const a = defineQueue('a', { concurrency: 3, gate: 'gpu', handlers });
    const b = defineQueue('b', { concurrency: 3, gate: 'gpu', handlers });
    const slots = new ClaimPlanner([a, b], 10, { gpu: 2 }, { windowMs: 0, max: 0 }, c);
    // a takes the gate's two places; b, kept out only by the gate, one job to wait in line.
    expect(slots.plan()).toEqual([
      { queue: 'a', limit: 2, leaseMs: 120_000 },
      { queue: 'b', limit: 1, leaseMs: 120_000 },
    ]);
    slots.hold(a);
    slots.hold(a);
    // The gate's two places are spoken for by a's held jobs, and b has a job in line: no claim.
    expect(slots.plan()).toEqual([{ queue: 'b', limit: 1, leaseMs: 120_000 }]);
    slots.hold(b);
    expect(slots.plan()).toEqual([]);
    slots.unhold(b);
    expect(slots.canStart(a)).toBe(true);
    slots.unhold(a); slots.start(a);
    slots.unhold(a); slots.start(a);
    expect(slots.canStart(b)).toBe(false);
    slots.release(a);
    expect(slots.canStart(b)).toBe(true);
  });
});

/** Written from the limits a user sets (README: per queue, global, per gate), to kill the
 *  claim planner's surviving mutants (test/README.md). */
describe('claim planner: limits and work', () => {
  const noPrefetch = { windowMs: 0, max: 0 };

  it('a queue at its own concurrency starts nothing more, though the global limit has room', () => {
    const q = defineQueue('q', { concurrency: 2, handlers });
    const slots = new ClaimPlanner([q], 10, {}, noPrefetch, clock());
    slots.start(q);
    expect(slots.plan()).toEqual([{ queue: 'q', limit: 1, leaseMs: 120_000 }]);
    expect(slots.canStart(q)).toBe(true);
    slots.start(q);
    expect(slots.canStart(q)).toBe(false);
    expect(slots.hasRoom()).toBe(false);
    expect(slots.plan()).toEqual([]);
    slots.release(q);
    expect(slots.canStart(q)).toBe(true);
    expect(slots.hasRoom()).toBe(true);
  });

  it('the global limit stops every queue, though each has room of its own', () => {
    const a = defineQueue('a', { concurrency: 5, handlers });
    const b = defineQueue('b', { concurrency: 5, handlers });
    const slots = new ClaimPlanner([a, b], 3, {}, noPrefetch, clock());
    slots.start(a);
    slots.start(a);
    // One global slot left, shared: the queue first in turn (a) takes it, b claims one to wait
    // in line; the next plan starts with b.
    expect(slots.plan().map((r) => [r.queue, r.limit])).toEqual([['a', 1], ['b', 1]]);
    expect(slots.plan().map((r) => [r.queue, r.limit])).toEqual([['b', 1], ['a', 1]]);
    slots.start(b);
    expect(slots.canStart(a)).toBe(false);
    expect(slots.canStart(b)).toBe(false);
    slots.release(a);
    expect(slots.canStart(b)).toBe(true);
  });

  it('a gate no supervisor declared lets nothing start', () => {
    const q = defineQueue('q', { concurrency: 2, gate: 'missing', handlers });
    const slots = new ClaimPlanner([q], 10, {}, noPrefetch, clock());
    expect(slots.canStart(q)).toBe(false);
  });

  it('a job that ends frees its gate place, and only its own gate', () => {
    const a = defineQueue('a', { concurrency: 3, gate: 'gpu', handlers });
    const b = defineQueue('b', { concurrency: 3, gate: 'net', handlers });
    const slots = new ClaimPlanner([a, b], 10, { gpu: 1, net: 1 }, noPrefetch, clock());
    slots.start(a);
    expect(slots.canStart(a)).toBe(false);
    expect(slots.canStart(b)).toBe(true);
    slots.release(a);
    expect(slots.canStart(a)).toBe(true);
    expect(slots.plan().map((r) => [r.queue, r.limit]).sort()).toEqual([['a', 1], ['b', 1]]);
  });

  it('asks a queue whose claim came back short again only when something says it has work', () => {
    const a = defineQueue('a', { concurrency: 2, handlers });
    const b = defineQueue('b', { concurrency: 2, handlers });
    const slots = new ClaimPlanner([a, b], 10, {}, noPrefetch, clock());
    const asked = slots.plan();
    slots.claimAnswered(asked, { got: new Map([['a', 1]]), keyed: new Set() });
    expect(slots.wantsClaim()).toBe(false);
    slots.noteWork('elsewhere');
    expect(slots.wantsClaim()).toBe(false);
    slots.noteWork('b');
    expect(slots.plan().map((r) => r.queue)).toEqual(['b']);
    slots.noteWork();
    expect(slots.plan().map((r) => r.queue).sort()).toEqual(['a', 'b']);
  });

  it('keeps a queue woken while its claim was on its way: that claim may have read the store before the new work', () => {
    const a = defineQueue('a', { concurrency: 2, handlers });
    const b = defineQueue('b', { concurrency: 2, handlers });
    const slots = new ClaimPlanner([a, b], 10, {}, noPrefetch, clock());
    const asked = slots.plan();
    // An enqueue's (or a signal's) notification for a, heard before the claim answers nothing.
    slots.noteWork('a');
    slots.claimAnswered(asked, { got: new Map(), keyed: new Set() });
    expect(slots.plan().map((r) => r.queue)).toEqual(['a']);
    // That next claim came back short with no wake-up meanwhile: a has no work until told.
    slots.claimAnswered([{ queue: 'a', limit: 2, leaseMs: 120_000 }], { got: new Map(), keyed: new Set() });
    expect(slots.wantsClaim()).toBe(false);
  });

  it('asks a queue not asked for a poll interval again, in the claim a busier queue makes', () => {
    const c = clock();
    const busy = defineQueue('busy', { concurrency: 2, handlers });
    const idle = defineQueue('idle', { concurrency: 2, handlers });
    const slots = new ClaimPlanner([busy, idle], 10, {}, noPrefetch, c, 1_000);
    const answer = (got: number) => ({ got: new Map([['busy', got]]), keyed: new Set<string>() });
    // The first round asks both; busy gives all it was asked for, idle nothing.
    const first = slots.plan();
    expect(first.map((r) => r.queue).sort()).toEqual(['busy', 'idle']);
    slots.claimAnswered(first, answer(2));
    slots.start(busy);
    slots.start(busy);
    // busy's slots free and are claimed for as they do, more often than the poll interval: idle
    // stays out while it was asked within one.
    c.advance(999);
    slots.release(busy);
    const second = slots.plan();
    expect(second.map((r) => r.queue)).toEqual(['busy']);
    slots.claimAnswered(second, answer(1));
    slots.start(busy);
    // A poll interval after idle was last asked (a job of it may have become due without a
    // wake-up), busy's next claim asks idle too; idle's answer resets its turn.
    c.advance(1);
    slots.release(busy);
    const third = slots.plan();
    expect(third.map((r) => r.queue).sort()).toEqual(['busy', 'idle']);
    slots.claimAnswered(third, answer(1));
    slots.start(busy);
    c.advance(500);
    slots.release(busy);
    expect(slots.plan().map((r) => r.queue)).toEqual(['busy']);
  });

  it('keeps asking a queue that gave all it was asked for, or gave keyed jobs', () => {
    const a = defineQueue('a', { concurrency: 2, handlers });
    const b = defineQueue('b', { concurrency: 2, handlers });
    const slots = new ClaimPlanner([a, b], 10, {}, noPrefetch, clock());
    const asked = slots.plan();
    slots.claimAnswered(asked, { got: new Map([['a', 2], ['b', 1]]), keyed: new Set(['b']) });
    expect(slots.plan().map((r) => r.queue).sort()).toEqual(['a', 'b']);
    slots.claimAnswered(asked, { got: new Map([['a', 3]]), keyed: new Set() });
    expect(slots.plan().map((r) => r.queue)).toEqual(['a']);
  });
});
