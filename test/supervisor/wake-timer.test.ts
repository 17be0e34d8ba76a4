import { describe, expect, it } from 'vitest';
import type { WakeEvent } from '../../src/machines/job-machine.js';
import { WakeTimer } from '../../src/supervisor/wake-timer.js';
import { createTestClock } from '../support/sim.js';

/** A simulated clock that counts the timers armed on it and those still pending. */
function countingClock() {
  const clock = createTestClock(0);
  const pending = new Set<unknown>();
  let armed = 0;
  return {
    clock,
    get armed() { return armed; },
    get pending() { return pending.size; },
    timerClock: {
      now: () => clock.now(),
      setTimeout: (fn: () => void, ms: number) => {
        armed += 1;
        const id = clock.setTimeout(() => (pending.delete(id), fn()), ms);
        pending.add(id);
        return id;
      },
      clearTimeout: (id: unknown) => (pending.delete(id), clock.clearTimeout(id as never)),
    },
  };
}

/** An actor that notes what it was sent, and when. */
function target(name: string, log: string[], clock: { now(): number }) {
  return { send: (event: { type: WakeEvent }) => void log.push(`${clock.now()} ${name} ${event.type}`) };
}

describe('WakeTimer', () => {
  it('wakes many actors with one clock timer, each at its time, the earliest first', () => {
    const c = countingClock();
    const wakes = new WakeTimer(c.timerClock);
    const log: string[] = [];
    const [a, b, d] = ['a', 'b', 'd'].map((n) => target(n, log, c.clock));
    wakes.wakeAt(a!, 'lease.beat', 300);
    wakes.wakeAt(b!, 'lease.beat', 100);
    wakes.wakeAt(d!, 'attempt.deadline', 200);
    wakes.wakeAt(a!, 'attempt.deadline', 100);
    expect(c.pending).toBe(1);
    c.clock.increment(99);
    expect(log).toEqual([]);
    c.clock.increment(1);
    expect(log).toEqual(['100 b lease.beat', '100 a attempt.deadline']);
    c.clock.increment(200);
    expect(log.slice(2)).toEqual(['300 d attempt.deadline', '300 a lease.beat']);
    expect([wakes.size, c.pending]).toEqual([0, 0]);
  });

  it('a later ask for the same actor and event replaces the earlier; Infinity drops it', () => {
    const c = countingClock();
    const wakes = new WakeTimer(c.timerClock);
    const log: string[] = [];
    const a = target('a', log, c.clock);
    wakes.wakeAt(a, 'lease.beat', 100);
    wakes.wakeAt(a, 'lease.beat', 500);
    wakes.wakeAt(a, 'attempt.deadline', 50);
    wakes.wakeAt(a, 'attempt.deadline', Infinity);
    c.clock.increment(499);
    expect(log).toEqual([]);
    c.clock.increment(1);
    expect(log).toEqual(['500 a lease.beat']);
  });

  it('an actor woken may ask again, sooner than any other ask: the timer follows', () => {
    const c = countingClock();
    const wakes = new WakeTimer(c.timerClock);
    const log: string[] = [];
    const other = target('other', log, c.clock);
    const again = { send: (event: { type: WakeEvent }) => { log.push(`${c.clock.now()} again ${event.type}`); if (log.length === 1) wakes.wakeAt(again, 'lease.beat', 150); } };
    wakes.wakeAt(again, 'lease.beat', 100);
    wakes.wakeAt(other, 'lease.beat', 1_000);
    c.clock.increment(100);
    c.clock.increment(50);
    expect(log).toEqual(['100 again lease.beat', '150 again lease.beat']);
    c.clock.increment(850);
    expect(log[2]).toBe('1000 other lease.beat');
  });

  it('drops an actor\'s asks, and its timer with the last of them (it would hold the process open)', () => {
    const c = countingClock();
    const wakes = new WakeTimer(c.timerClock);
    const log: string[] = [];
    const [a, b] = ['a', 'b'].map((n) => target(n, log, c.clock));
    wakes.wakeAt(a!, 'lease.beat', 100);
    wakes.wakeAt(a!, 'attempt.deadline', 100);
    wakes.wakeAt(b!, 'lease.beat', 200);
    wakes.drop(a!);
    expect([wakes.size, c.pending]).toEqual([1, 1]);
    c.clock.increment(100);
    // Woken early by the dropped ask: nothing due, armed again for b.
    expect([log, c.pending]).toEqual([[], 1]);
    wakes.drop(b!);
    expect([wakes.size, c.pending]).toEqual([0, 0]);
    c.clock.increment(1_000);
    expect(log).toEqual([]);
  });

  it('waits past the longest delay a timer can take, in steps', () => {
    const c = countingClock();
    const wakes = new WakeTimer(c.timerClock);
    const log: string[] = [];
    const a = target('a', log, c.clock);
    const month = 30 * 24 * 3_600_000;
    wakes.wakeAt(a, 'attempt.deadline', month);
    c.clock.increment(month - 1);
    expect(log).toEqual([]);
    c.clock.increment(1);
    expect(log).toEqual([`${month} a attempt.deadline`]);
  });
});
