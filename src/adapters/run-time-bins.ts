/**
 * Run times in bins that merge. Throughput keeps, per queue and bucket, how many attempts'
 * run times fell in each bin and the longest of them: an hour's bins are then the sum of its
 * minutes', and its percentiles need no run time of its own (src/inspector/throughput.ts).
 * Every store bins alike: memory-throughput.ts with `runTimeBin`, SQL with `width_bucket`
 * over the same bounds (queries/get-throughput.ts).
 *
 * Bin i holds the run times t with RUN_TIME_BOUNDS[i - 1] <= t < RUN_TIME_BOUNDS[i]; bin 0
 * those under 1 ms. A run time is whole ms and never negative: the stores read an end stamped
 * before its start (two clocks' skew) as 0 ms, and so does binRunTimes, so that bin 0 holds
 * only 0 and a percentile under 16 ms stays exact. The bounds are
 * ceil(2^(k/8)) ms: every whole ms under 16 ms is a bin of its own, and past that each bound
 * is about 9 % above the one before, up to 2^36 ms (about two years; longer run times share
 * the last bin).
 */

/** [bin, attempts in it, the longest of their run times in ms], by bin; empty bins left out. */
export type RunTimeBins = Array<[bin: number, count: number, maxMs: number]>;

export const RUN_TIME_BOUNDS: readonly number[] = (() => {
  const bounds: number[] = [];
  for (let k = 0; k <= 8 * 36; k++) {
    const bound = Math.ceil(2 ** (k / 8));
    if (bound !== bounds.at(-1)) bounds.push(bound);
  }
  return bounds;
})();

/** The bin of a run time in ms: how many bounds are at or below it (SQL's width_bucket). */
export function runTimeBin(ms: number): number {
  let [low, high] = [0, RUN_TIME_BOUNDS.length];
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (RUN_TIME_BOUNDS[mid]! <= ms) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** The bins of run times given one by one, in any order. */
export function binRunTimes(runTimes: Iterable<number>): RunTimeBins {
  const byBin = new Map<number, [bin: number, count: number, maxMs: number]>();
  for (const given of runTimes) {
    const ms = Math.max(0, given);
    const bin = runTimeBin(ms);
    const entry = byBin.get(bin);
    if (entry) {
      entry[1] += 1;
      entry[2] = Math.max(entry[2], ms);
    } else byBin.set(bin, [bin, 1, ms]);
  }
  return [...byBin.values()].sort((a, b) => a[0] - b[0]);
}

/** The bins of two sets of run times together: counts added, the longest kept. */
export function mergeRunTimeBins(a: RunTimeBins, b: RunTimeBins): RunTimeBins {
  const byBin = new Map<number, [bin: number, count: number, maxMs: number]>(a.map(([bin, count, maxMs]) => [bin, [bin, count, maxMs]]));
  for (const [bin, count, maxMs] of b) {
    const entry = byBin.get(bin);
    if (entry) {
      entry[1] += count;
      entry[2] = Math.max(entry[2], maxMs);
    } else byBin.set(bin, [bin, count, maxMs]);
  }
  return [...byBin.values()].sort((x, y) => x[0] - y[0]);
}

/**
 * The nearest-rank percentile p (0 < p <= 1) read from bins: the longest run time of the bin
 * the rank falls in. A run time that happened, never below the exact nearest-rank percentile
 * of the same run times and less than one bin above it: exact under 16 ms, at most 9.1 % above
 * it past that (test/adapters/run-time-bins.test.ts). Null with no run time.
 */
export function runTimePercentile(bins: RunTimeBins, p: number): number | null {
  const total = bins.reduce((sum, [, count]) => sum + count, 0);
  if (total === 0) return null;
  // The rank as in memory-throughput.ts's exact percentile (SQL's percentile_disc).
  const rank = Math.max(1, Math.ceil(p * total));
  let seen = 0;
  for (const [, count, maxMs] of bins) {
    seen += count;
    if (seen >= rank) return maxMs;
  }
  return bins.at(-1)![2];
}
