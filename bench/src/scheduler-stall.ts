/**
 * The longest single check of the scheduler when 10,000 schedules come due together, on the
 * memory store (no I/O, so a check's time is the event loop's stall): the scheduler of this
 * tree against another tree's (`npx tsx bench/src/scheduler-stall.ts [other tree root]`).
 * Not part of `npm run bench`; numbers in BENCHMARKS.md ("Schedules").
 */
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const COUNT = 10_000;
const ROUNDS = 5;

async function measure(root: string): Promise<{ checks: number; maxMs: number; totalMs: number }[]> {
  const load = (path: string) => import(pathToFileURL(join(root, path)).href);
  const api = await load('src/index.ts');
  const { memoryStore } = await load('src/adapters/memory/index.ts');
  const { Scheduler } = await load('src/supervisor/scheduler.ts');
  const results = [];
  for (let round = 0; round < ROUNDS; round++) {
    let now = Date.UTC(2030, 0, 1, 0, 0, 30);
    const clock = { now: () => now };
    const store = memoryStore({ clock });
    const ticks = api.defineQueue('ticks', { handlers: { tick: async () => {} } });
    const schedules = Array.from({ length: COUNT }, (_, i) => api.defineSchedule({ name: `s${i}`, cron: '* * * * *', queue: ticks, kind: 'tick', payload: { i } }));
    const scheduler = new Scheduler(store, schedules, clock);
    await scheduler.check(); // registers every one
    now += 60_000;
    let checks = 0;
    let maxMs = 0;
    let totalMs = 0;
    for (;;) {
      const start = performance.now();
      const wait = await scheduler.check();
      const ms = performance.now() - start;
      checks++;
      maxMs = Math.max(maxMs, ms);
      totalMs += ms;
      if (wait > 0) break;
    }
    results.push({ checks, maxMs, totalMs });
  }
  return results;
}

const here = resolve(import.meta.dirname, '../..');
const other = process.argv[2];
for (const [name, root] of [...(other ? [['other', resolve(other)]] : []), ['this tree', here]] as const) {
  const runs = await measure(root);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(
    `${name}: ${runs[0]!.checks} checks; longest check median ${median(runs.map((r) => r.maxMs)).toFixed(0)} ms ` +
      `[${Math.min(...runs.map((r) => r.maxMs)).toFixed(0)}–${Math.max(...runs.map((r) => r.maxMs)).toFixed(0)}], ` +
      `all checks median ${median(runs.map((r) => r.totalMs)).toFixed(0)} ms`,
  );
}
