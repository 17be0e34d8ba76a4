import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { notifyDebounceOption, WakeHub } from '../../../src/adapters/sql/wake-hub.js';
import { InvalidOptionError } from '../../../src/errors.js';

/** A listen function that the test drives: `send(queue)` is a NOTIFY arriving. */
function fakeListen() {
  const state = { starts: 0, stops: 0, send: (_queue: string) => {}, reconnect: () => {} };
  const listen = async (onQueue: (queue: string) => void, onReconnect: () => void) => {
    state.starts += 1;
    state.send = onQueue;
    state.reconnect = onReconnect;
    return async () => {
      state.stops += 1;
    };
  };
  return { state, listen };
}

async function flush(): Promise<void> {
  await vi.advanceTimersByTimeAsync(0);
}

describe('WakeHub', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('delivers the first wake-up of a queue at once and collapses the rest of the window into one', async () => {
    const { state, listen } = fakeListen();
    const hub = new WakeHub(listen, 10);
    const woken: string[] = [];
    await hub.subscribe((queue) => woken.push(queue ?? '(any queue)'));

    state.send('a');
    await flush();
    expect(woken).toEqual(['a']);

    state.send('a');
    state.send('a');
    state.send('b');
    await flush();
    expect(woken).toEqual(['a', 'b']);

    await vi.advanceTimersByTimeAsync(10);
    expect(woken).toEqual(['a', 'b', 'a']);
    await vi.advanceTimersByTimeAsync(100);
    expect(woken).toEqual(['a', 'b', 'a']);

    state.send('a');
    await flush();
    expect(woken).toEqual(['a', 'b', 'a', 'a']);
    await hub.close();
  });

  it('delivers every wake-up with a debounce of 0', async () => {
    const { state, listen } = fakeListen();
    const hub = new WakeHub(listen, 0);
    const woken: string[] = [];
    await hub.subscribe((queue) => woken.push(queue ?? '(any queue)'));
    state.send('a');
    state.send('a');
    await flush();
    expect(woken).toEqual(['a', 'a']);
    await hub.close();
  });

  it('wakes every subscriber for any queue when it listens again after a lost connection, even within a window', async () => {
    const { state, listen } = fakeListen();
    const hub = new WakeHub(listen, 10);
    const woken: string[] = [];
    await hub.subscribe((queue) => woken.push(queue ?? '(any queue)'));
    state.send('a');
    state.reconnect();
    await flush();
    expect(woken).toEqual(['a', '(any queue)']);
  });

  it('listens once for all subscribers and stops after the last one leaves', async () => {
    const { state, listen } = fakeListen();
    const hub = new WakeHub(listen, 0);
    const first: string[] = [];
    const second: string[] = [];
    const leaveFirst = await hub.subscribe((queue) => first.push(queue ?? '(any queue)'));
    const leaveSecond = await hub.subscribe((queue) => second.push(queue ?? '(any queue)'));
    expect(state.starts).toBe(1);
    state.send('a');
    await flush();
    await leaveFirst();
    await leaveFirst();
    expect(state.stops).toBe(0);
    state.send('b');
    await flush();
    expect(first).toEqual(['a']);
    expect(second).toEqual(['a', 'b']);
    await leaveSecond();
    expect(state.stops).toBe(1);
    await hub.subscribe(() => {});
    expect(state.starts).toBe(2);
    await hub.close();
    expect(state.stops).toBe(2);
  });

  it('rejects a subscribe whose listen failed, and tries again on the next one', async () => {
    let fail = true;
    const hub = new WakeHub(async () => {
      if (fail) throw new Error('no connection');
      return async () => {};
    }, 0);
    await expect(hub.subscribe(() => {})).rejects.toThrow('no connection');
    fail = false;
    await expect(hub.subscribe(() => {})).resolves.toBeTypeOf('function');
    await hub.close();
  });
});

describe('notifyDebounceOption', () => {
  it('defaults to 10 ms and refuses what is not a finite number >= 0', () => {
    expect(notifyDebounceOption(undefined)).toBe(10);
    expect(notifyDebounceOption(0)).toBe(0);
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, '5']) {
      expect(() => notifyDebounceOption(bad)).toThrow(InvalidOptionError);
    }
  });
});
