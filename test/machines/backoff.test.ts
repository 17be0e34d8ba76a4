/**
 * exponentialBackoff, through the public API: base·2^(attempt−1), capped, the top `jitter`
 * fraction drawn at random. The expected delays are worked out by hand from the README's
 * promise ("1 s doubling, capped at 1 h, jittered"), not from the code.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { exponentialBackoff, InvalidOptionError } from '../../src/index.js';

const lowest = () => 0;
const highest = () => 1;

describe('exponentialBackoff', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('doubles from 1 s by default, the lower half of each delay fixed and the upper half drawn', () => {
    const atLowest = exponentialBackoff({ random: lowest });
    const atHighest = exponentialBackoff({ random: highest });
    expect([1, 2, 3, 4, 5].map(atLowest)).toEqual([500, 1_000, 2_000, 4_000, 8_000]);
    expect([1, 2, 3, 4, 5].map(atHighest)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000]);
    expect(exponentialBackoff({ random: () => 0.5 })(3)).toBe(3_000);
  });

  it('caps every delay at one hour by default, however many attempts', () => {
    const backoff = exponentialBackoff({ random: highest });
    // 2^11 s = 2,048 s is under the hour, 2^12 s is over it.
    expect(backoff(12)).toBe(2_048_000);
    expect(backoff(13)).toBe(3_600_000);
    expect(backoff(1_000)).toBe(3_600_000);
    expect(exponentialBackoff({ random: lowest })(1_000)).toBe(1_800_000);
  });

  it('takes baseMs, capMs and jitter', () => {
    const backoff = exponentialBackoff({ baseMs: 200, capMs: 1_000, jitter: 0, random: highest });
    expect([1, 2, 3, 4, 5].map(backoff)).toEqual([200, 400, 800, 1_000, 1_000]);
    // jitter 0: the random source does not matter.
    expect(exponentialBackoff({ baseMs: 200, jitter: 0, random: lowest })(3)).toBe(800);
    // jitter 1: anywhere from 0 to the whole delay.
    expect(exponentialBackoff({ baseMs: 200, jitter: 1, random: lowest })(3)).toBe(0);
    expect(exponentialBackoff({ baseMs: 200, jitter: 1, random: () => 0.25 })(3)).toBe(200);
    // A cap equal to the base is allowed: every delay is the base.
    expect(exponentialBackoff({ baseMs: 300, capMs: 300, jitter: 0 })(9)).toBe(300);
  });

  it('rounds to whole milliseconds', () => {
    // 3·0.5 + 3·0.5·0.5 = 2.25 ms; 5·0.5 + 5·0.5·0.5 = 3.75 ms.
    expect(exponentialBackoff({ baseMs: 3, random: () => 0.5 })(1)).toBe(2);
    expect(exponentialBackoff({ baseMs: 5, random: () => 0.5 })(1)).toBe(4);
  });

  it('treats an attempt below 1 as the first', () => {
    const backoff = exponentialBackoff({ random: highest });
    expect(backoff(0)).toBe(1_000);
    expect(backoff(-3)).toBe(1_000);
  });

  it('draws from Math.random unless given a source', () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    expect(exponentialBackoff()(2)).toBe(1_000);
  });

  it.each([
    [{ baseMs: 0 }, 'backoff.baseMs', 'must be > 0, got 0'],
    [{ baseMs: Number.NaN }, 'backoff.baseMs', 'must be > 0, got NaN'],
    [{ baseMs: 2_000, capMs: 1_999 }, 'backoff.capMs', 'must be >= baseMs (2000), got 1999'],
    [{ jitter: -0.1 }, 'backoff.jitter', 'must be within 0..1, got -0.1'],
    [{ jitter: 1.5 }, 'backoff.jitter', 'must be within 0..1, got 1.5'],
  ])('refuses %j with an InvalidOptionError naming %s', (options, option, message) => {
    expect(() => exponentialBackoff(options)).toThrow(InvalidOptionError);
    expect(() => exponentialBackoff(options)).toThrow(expect.objectContaining({ option, code: 'invalid_option', message: `${option}: ${message}` }));
  });
});
