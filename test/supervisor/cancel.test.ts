import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/index.js';
import { advance, until } from '../support/sim.js';
import { supervisorHarness } from './harness.js';

const { setup } = supervisorHarness();

/** A handler that runs until its signal aborts, noting the jobs it started and the aborts. */
function untilAborted() {
  const started: string[] = [];
  const aborted: string[] = [];
  const handler = ({ id, signal }: Job) =>
    new Promise((_, reject) => {
      started.push(id);
      signal.addEventListener('abort', () => {
        aborted.push(id);
        reject(new Error('aborted'));
      });
    });
  return { started, aborted, handler };
}

describe('supervisor: cancel a running job from anywhere', () => {
  it("another supervisor's cancel() reaches the one holding the job, which aborts it and writes cancelled", async () => {
    const { started, aborted, handler } = untilAborted();
    const holder = setup({ deadlineMs: null, handlers: { j: handler } });
    const other = setup({ handlers: { j: handler } }, { store: holder.store, clock: holder.clock, workerId: 'w2' });
    const { job } = await holder.queue.enqueue(holder.store, 'j', {});
    await holder.supervisor.start();
    await until('the handler runs', () => started.length === 1);
    expect((await holder.store.getJob({ id: job.id }))?.workerId).toBe('w1');
    expect(await other.supervisor.cancel(job.id)).toBe(true);
    await until('the job is cancelled', async () => (await holder.store.getJob({ id: job.id }))?.state === 'cancelled');
    expect(aborted).toEqual([job.id]);
    expect(await holder.store.getJob({ id: job.id })).toMatchObject({ state: 'cancelled', error: { code: 'cancelled', message: 'cancelled while running' } });
    expect((await holder.store.getJobEvents({ id: job.id })).at(-1)).toMatchObject({ fromState: 'running', toState: 'cancelled', workerId: 'w1' });
    expect(holder.supervisor.counters.getSnapshot().context.queues.work).toMatchObject({ cancelled: 1, running: 0 });
  });

  it('store.cancelJob (the CLI, the inspector) on a running job reaches its supervisor the same way', async () => {
    const { started, aborted, handler } = untilAborted();
    const { store, queue, supervisor } = setup({ handlers: { j: handler } });
    const { job } = await queue.enqueue(store, 'j', {});
    await supervisor.start();
    await until('the handler runs', () => started.length === 1);
    expect(await store.cancelJob({ id: job.id })).toMatchObject({ cancelled: false, job: { state: 'running' } });
    await until('the job is cancelled', async () => (await store.getJob({ id: job.id }))?.state === 'cancelled');
    expect(aborted).toEqual([job.id]);
    expect((await store.getJob({ id: job.id }))?.state).toBe('cancelled');
  });

  it('without the notification, the next lease renewal reports the request', async () => {
    const { started, aborted, handler } = untilAborted();
    const { clock, store, queue, supervisor } = setup({ leaseMs: 30_000, heartbeatMs: 10_000, deadlineMs: null, handlers: { j: handler } });
    // A store whose cancel notifications never arrive (a dropped LISTEN connection).
    const subscribe = store.subscribe.bind(store);
    store.subscribe = (onWake) => subscribe(onWake);
    const { job } = await queue.enqueue(store, 'j', {});
    await supervisor.start();
    await until('the handler runs', () => started.length === 1);
    await store.cancelJob({ id: job.id });
    await advance(clock, 9_000);
    expect(aborted).toEqual([]);
    await advance(clock, 1_000);
    expect(aborted).toEqual([job.id]);
    expect((await store.getJob({ id: job.id }))?.state).toBe('cancelled');
  });

  it('cancel() of a job no one holds cancels it in the store; of a finished one does nothing', async () => {
    const { store, queue, supervisor } = setup({ handlers: { j: async () => 'ok' } });
    const { job: pending } = await queue.enqueue(store, 'j', {}, { runAt: new Date(Date.UTC(2100, 0, 1)) });
    expect(await supervisor.cancel(pending.id)).toBe(true);
    expect((await store.getJob({ id: pending.id }))?.state).toBe('cancelled');
    const { job: done } = await queue.enqueue(store, 'j', {});
    await supervisor.drain();
    expect(await supervisor.cancel(done.id)).toBe(false);
    expect(await supervisor.cancel('987654')).toBe(false);
  });
});
