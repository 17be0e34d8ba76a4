import { describe, expect, it } from 'vitest';
import type { DeadJobAlert, Job } from '../../src/index.js';
import { advance, settle } from '../support/sim.js';
import { pathOf, supervisorHarness } from './harness.js';

const { setup } = supervisorHarness();
const DAY = 86_400_000;

function hang({ signal }: Job): Promise<never> {
  return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));
}

describe('supervisor: expiresAt, the deadline across all attempts', () => {
  it('aborts a running attempt when it comes: dead with code expired, whatever attempts remain', async () => {
    const alerts: DeadJobAlert[] = [];
    const { clock, store, queue, supervisor } = setup(
      { maxAttempts: 5, deadlineMs: 60_000, handlers: { j: hang } },
      { onDead: (alert) => void alerts.push(alert) },
    );
    const { job } = await queue.enqueue(store, 'j', {}, { expiresAt: new Date(clock.now() + 10_000) });
    const drained = supervisor.drain();
    await settle();
    await advance(clock, 9_999, 1_000);
    expect((await store.getJob({ id: job.id }))?.state).toBe('running');
    await advance(clock, 1);
    expect(await drained).toBe(1);
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'dead', attempt: 1, error: { code: 'expired', name: 'JobExpired' } });
    await settle();
    expect(alerts.map((a) => a.error?.code)).toEqual(['expired']);
  });

  it('never runs a job claimed past it', async () => {
    let ran = false;
    const { clock, store, queue, supervisor } = setup({ handlers: { j: () => { ran = true; } } });
    const { job } = await queue.enqueue(store, 'j', {}, { expiresAt: new Date(clock.now() + 1_000) });
    await advance(clock, 1_000);
    // The reaper runs first in a drain: skip it, as when the claim comes before the reaper.
    store.rescueExpiredJobs = async () => [];
    await supervisor.drain();
    expect(ran).toBe(false);
    expect(await pathOf(store, job.id)).toEqual(['pending', 'running', 'dead']);
    expect((await store.getJob({ id: job.id }))?.error?.code).toBe('expired');
  });

  it('a failure before it retries; a retry due after it is ended by the reaper', async () => {
    const { clock, store, queue, supervisor } = setup({
      backoff: () => 60_000,
      handlers: { j: async () => { throw new Error('upstream 503'); } },
    });
    const { job } = await queue.enqueue(store, 'j', {}, { expiresAt: new Date(clock.now() + 30_000) });
    await supervisor.drain();
    expect((await store.getJob({ id: job.id }))?.state).toBe('retrying');
    await advance(clock, 30_000, 10_000);
    expect(await supervisor.reap()).toBe(1);
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'dead', attempt: 1, error: { code: 'expired' } });
  });

  it('waits for an expiresAt further ahead than one timer can', async () => {
    const { clock, store, queue, supervisor } = setup({ leaseMs: 20 * DAY, deadlineMs: null, handlers: { j: hang } });
    const { job } = await queue.enqueue(store, 'j', {}, { expiresAt: new Date(clock.now() + 40 * DAY) });
    const drained = supervisor.drain();
    await settle();
    await advance(clock, 40 * DAY - 1, DAY / 4);
    expect((await store.getJob({ id: job.id }))?.state).toBe('running');
    await advance(clock, 1);
    await drained;
    expect((await store.getJob({ id: job.id }))?.error?.code).toBe('expired');
  });

  it('is refused at enqueue unless it is a valid date after runAt', async () => {
    const { store, queue } = setup({ handlers: { j: () => {} } });
    const runAt = new Date(Date.UTC(2030, 0, 1));
    await expect(queue.enqueue(store, 'j', {}, { runAt, expiresAt: runAt })).rejects.toMatchObject({ code: 'invalid_option', option: 'expiresAt' });
    await expect(queue.enqueue(store, 'j', {}, { expiresAt: new Date(Number.NaN) })).rejects.toMatchObject({ option: 'expiresAt' });
  });
});
