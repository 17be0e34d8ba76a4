/**
 * Run time bins (src/adapters/run-time-bins.ts), against the exact nearest-rank percentile
 * written here from its definition (a negative run time read as 0 ms): a percentile read from bins is a run time that happened,
 * never below the exact one, equal to it under 16 ms and at most 9.1 % above it past that; the
 * bins of two sets of run times merged are the bins of both together.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { binRunTimes, mergeRunTimeBins, RUN_TIME_BOUNDS, runTimeBin, runTimePercentile } from '../../src/adapters/run-time-bins.js';

/** The smallest run time that at least p of them do not exceed. */
function exactPercentile(runTimes: readonly number[], p: number): number {
  const sorted = [...runTimes].sort((a, b) => a - b);
  return sorted.find((_, i) => (i + 1) / sorted.length >= p - 1e-12)!;
}

const runTimes = fc.array(fc.oneof(fc.integer({ min: -5, max: 40 }), fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 0, max: 10 ** 9 })), {
  minLength: 1,
  maxLength: 60,
});

describe('run time bins', () => {
  it('has a bin per whole ms under 16 ms, then bounds about 9 % apart', () => {
    expect(RUN_TIME_BOUNDS.slice(0, 17)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18]);
    for (let i = 1; i < RUN_TIME_BOUNDS.length; i++) {
      const [low, high] = [RUN_TIME_BOUNDS[i - 1]!, RUN_TIME_BOUNDS[i]!];
      expect(high).toBeGreaterThan(low);
      // The widest gap between two whole ms of one bin, relative to its lower bound.
      expect((high - 1 - low) / low).toBeLessThanOrEqual(0.091);
    }
    expect(RUN_TIME_BOUNDS.at(-1)).toBe(2 ** 36);
  });

  it('puts a run time in the bin of the bounds at or below it (SQL width_bucket)', () => {
    expect([-3, 0, 0.5, 1, 15, 16, 17, 18, 2 ** 36, 2 ** 40].map(runTimeBin)).toEqual([0, 0, 0, 1, 15, 16, 16, 17, RUN_TIME_BOUNDS.length, RUN_TIME_BOUNDS.length]);
  });

  it('reads percentiles from bins within a bin of the exact ones', () => {
    fc.assert(
      fc.property(runTimes, fc.constantFrom(0.5, 0.95), (given, p) => {
        // A negative run time (two clocks' skew) is read as 0 ms, as the stores read it.
        const times = given.map((t) => Math.max(0, t));
        const exact = exactPercentile(times, p);
        const binned = runTimePercentile(binRunTimes(given), p)!;
        expect(times).toContain(binned);
        expect(binned).toBeGreaterThanOrEqual(exact);
        if (exact < 16) expect(binned).toBe(exact);
        else expect(binned).toBeLessThanOrEqual(exact * 1.091);
      }),
      { numRuns: 500 },
    );
    expect(runTimePercentile([], 0.5)).toBeNull();
  });

  it('merges bins as the run times of both together', () => {
    fc.assert(
      fc.property(runTimes, runTimes, (a, b) => {
        expect(mergeRunTimeBins(binRunTimes(a), binRunTimes(b))).toEqual(binRunTimes([...a, ...b]));
      }),
      { numRuns: 300 },
    );
  });
});
