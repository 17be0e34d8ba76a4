/**
 * A check advances at most 1,000 due schedules and asks for the next check at once, so that the
 * event loop gets a turn between (10,000 due at once stalled it for up to 715 ms in one check;
 * bench/ measures the stall).
 */
import { expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { defineQueue, defineSchedule, type Job } from '../../src/index.js';
import { Scheduler } from '../../src/supervisor/scheduler.js';

it('advances at most 1,000 due schedules per check, the rest in the next checks at once', async () => {
  let now = Date.UTC(2030, 0, 1, 0, 0, 30);
  const clock = { now: () => now };
  const store = memoryStore({ clock });
  const ticks = defineQueue('ticks', { handlers: { tick: async (_job: Job<null>) => {} } });
  const schedules = Array.from({ length: 2_500 }, (_, i) => defineSchedule({ name: `s${i}`, cron: '* * * * *', queue: ticks, kind: 'tick', payload: null }));
  const scheduler = new Scheduler(store, schedules, clock);
  expect(await scheduler.check()).toBeGreaterThan(0); // registers every one
  now += 60_000;
  const enqueued = async () => (await store.countJobs()).filter((c) => c.queue === 'ticks').reduce((sum, c) => sum + c.count, 0);
  const waits: number[] = [];
  const counts: number[] = [];
  for (let i = 0; i < 3; i++) {
    waits.push(await scheduler.check());
    counts.push(await enqueued());
  }
  expect(counts).toEqual([1_000, 2_000, 2_500]);
  expect(waits.slice(0, 2)).toEqual([0, 0]);
  expect(waits[2]).toBeGreaterThan(0);
});
