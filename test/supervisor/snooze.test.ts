import { describe, expect, it } from 'vitest';
import { SnoozeJobError, type Job } from '../../src/index.js';
import { advance, settle } from '../support/sim.js';
import { pathOf, supervisorHarness } from './harness.js';

const { setup } = supervisorHarness();

describe('supervisor: snooze', () => {
  it('runs the job again after the delay without spending an attempt', async () => {
    const attempts: number[] = [];
    const { clock, store, queue, supervisor } = setup({
      maxAttempts: 1,
      handlers: {
        poll: async ({ attempt }: Job) => {
          attempts.push(attempt);
          if (attempt < 3) throw new SnoozeJobError(60_000);
          return 'ready';
        },
      },
    });
    const { job } = await queue.enqueue(store, 'poll', {});
    const t0 = clock.now();
    expect(await supervisor.drain()).toBe(1);
    expect(await store.getJob({ id: job.id })).toMatchObject({
      state: 'pending',
      attempt: 1,
      maxAttempts: 2,
      runAt: new Date(t0 + 60_000),
      error: { code: 'snoozed', message: 'snoozed for 60000 ms' },
    });
    expect(await supervisor.drain()).toBe(0);
    await advance(clock, 60_000, 10_000);
    await supervisor.drain();
    await advance(clock, 60_000, 10_000);
    await supervisor.drain();
    expect(attempts).toEqual([1, 2, 3]);
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'completed', attempt: 3, maxAttempts: 3, result: 'ready' });
    expect(await pathOf(store, job.id)).toEqual(['pending', 'running', 'pending', 'running', 'pending', 'running', 'completed']);
    await settle();
    expect(supervisor.counters.getSnapshot().context.queues.work).toMatchObject({ snoozed: 2, completed: 1, retrying: 0 });
  });

  it('a snooze of 0 runs the job again in the same drain', async () => {
    let runs = 0;
    const { store, queue, supervisor } = setup({
      handlers: { j: async () => { if (++runs === 1) throw new SnoozeJobError(0); return runs; } },
    });
    const { job } = await queue.enqueue(store, 'j', {});
    expect(await supervisor.drain()).toBe(2);
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'completed', result: 2 });
  });
});
