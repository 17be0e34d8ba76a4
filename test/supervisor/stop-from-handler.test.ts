/**
 * `await supervisor.stop()` from inside one of the supervisor's own handlers (issue 24): the
 * stop neither waits for nor aborts the job asking for it, the handler's call resolves once
 * every other job has ended, and the job's own answer is written as usual. Time is the
 * simulated clock's: a promise that resolves while the clock stands still did not wait out a
 * grace period.
 */
import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/index.js';
import type { Supervisor } from '../../src/supervisor/supervisor.js';
import { advance, deferred, settle, until } from '../support/sim.js';
import { pathOf, supervisorHarness } from './harness.js';

const { setup } = supervisorHarness();

describe('stop() called from inside a handler', () => {
  it('the job that asked ends completed with its answer, and both stops resolve without the grace period', async () => {
    let supervisor!: Supervisor;
    let inner: 'pending' | 'resolved' = 'pending';
    const h = setup({
      handlers: {
        shutdown: async () => {
          await supervisor.stop({ graceMs: 30_000 });
          inner = 'resolved';
          return { stopped: true };
        },
      },
    });
    supervisor = h.supervisor;
    const { job } = await h.queue.enqueue(h.store, 'shutdown', {});
    let outer = false;
    await supervisor.start();
    await until('the handler asked for the stop', () => supervisor.actor.getSnapshot().status === 'done');
    void supervisor.stop().then(() => {
      outer = true;
    });
    // The clock stands still: nothing waits for a timer.
    await until('both stops resolved', () => inner === 'resolved' && outer);
    expect(await h.store.getJob({ id: job.id })).toMatchObject({ state: 'completed', result: { stopped: true }, attempt: 1 });
    expect(await pathOf(h.store, job.id)).toEqual(['pending', 'running', 'completed']);
  });

  it('other jobs keep their grace period: one finishing in it completes, one past it is released; the call resolves after both', async () => {
    let supervisor!: Supervisor;
    const slow = deferred<string>();
    const started = new Set<string>();
    let innerAt: number | undefined;
    const h = setup({
      concurrency: 3,
      handlers: {
        shutdown: async () => {
          started.add('shutdown');
          await supervisor.stop({ graceMs: 10_000 });
          innerAt = h.clock.now();
          return 'bye';
        },
        slow: () => {
          started.add('slow');
          return slow.promise;
        },
        stuck: ({ signal }: Job) => {
          started.add('stuck');
          return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));
        },
      },
    });
    supervisor = h.supervisor;
    const { job: slowJob } = await h.queue.enqueue(h.store, 'slow', {});
    const { job: stuckJob } = await h.queue.enqueue(h.store, 'stuck', {});
    await supervisor.start();
    await until('slow and stuck run', () => started.has('slow') && started.has('stuck'));
    const { job: caller } = await h.queue.enqueue(h.store, 'shutdown', {});
    const startAt = h.clock.now();
    let outer = false;
    await until('the handler asked for the stop', async () => {
      await h.clock.increment(10);
      return started.has('shutdown') && (await h.store.getJob({ id: caller.id }))?.state === 'running';
    });
    await settle();
    void supervisor.stop().then(() => {
      outer = true;
    });
    await advance(h.clock, 2_000, 100);
    slow.resolve('in time');
    await settle();
    expect(await h.store.getJob({ id: slowJob.id })).toMatchObject({ state: 'completed', result: 'in time' });
    // stuck still runs within the grace period: the call has not resolved.
    expect(innerAt).toBeUndefined();
    expect(outer).toBe(false);
    await advance(h.clock, 10_000, 500);
    await until('both stops resolved', () => innerAt !== undefined && outer);
    expect(innerAt! - startAt).toBeGreaterThanOrEqual(10_000);
    expect(await h.store.getJob({ id: stuckJob.id })).toMatchObject({ state: 'retrying', error: { code: 'worker_shutdown' } });
    expect(await h.store.getJob({ id: caller.id })).toMatchObject({ state: 'completed', result: 'bye', attempt: 1 });
  });

  it('a stop asked from outside first, then from the handler: the handler is not aborted at the end of the grace period', async () => {
    let supervisor!: Supervisor;
    const go = deferred<void>();
    let running = false;
    const h = setup({
      handlers: {
        j: async () => {
          running = true;
          await go.promise;
          await supervisor.stop();
          return 'done';
        },
      },
    });
    supervisor = h.supervisor;
    const { job } = await h.queue.enqueue(h.store, 'j', {});
    await supervisor.start();
    await until('the handler runs', () => running);
    let outer = false;
    const stopAt = h.clock.now();
    const stopping = supervisor.stop({ graceMs: 5_000 });
    void stopping.then(() => {
      outer = true;
    });
    await advance(h.clock, 1_000);
    go.resolve();
    await until('the outer stop resolved', () => outer);
    expect(h.clock.now() - stopAt).toBeLessThan(5_000);
    expect(await h.store.getJob({ id: job.id })).toMatchObject({ state: 'completed', result: 'done' });
  });

  it('in a drain(): the drain resolves with the job run and completed', async () => {
    let supervisor!: Supervisor;
    const h = setup({
      handlers: {
        j: async () => {
          await supervisor.stop();
          return 'drained';
        },
      },
    });
    supervisor = h.supervisor;
    const { job } = await h.queue.enqueue(h.store, 'j', {});
    expect(await supervisor.drain()).toBe(1);
    expect(await h.store.getJob({ id: job.id })).toMatchObject({ state: 'completed', result: 'drained' });
  });

  it('a stop() of a supervisor from a handler of another keeps the outer semantics: it waits for that supervisor\'s jobs', async () => {
    const other = setup({ handlers: { j: () => new Promise(() => {}) } }, { workerId: 'w2' });
    const { job: otherJob } = await other.queue.enqueue(other.store, 'j', {});
    await other.supervisor.start();
    await until('the other supervisor runs its job', async () => (await other.store.getJob({ id: otherJob.id }))?.state === 'running');
    let inner = false;
    const h = setup({
      handlers: {
        j: async () => {
          await other.supervisor.stop({ graceMs: 3_000 });
          inner = true;
          return 'ok';
        },
      },
    });
    const { job } = await h.queue.enqueue(h.store, 'j', {});
    const drained = h.supervisor.drain();
    await until('the other supervisor is stopping', () => other.supervisor.actor.getSnapshot().matches('stopping'));
    await settle();
    expect(inner).toBe(false);
    await advance(other.clock, 3_000, 500);
    await until('the call resolved', () => inner);
    expect(await drained).toBe(1);
    expect(await other.store.getJob({ id: otherJob.id })).toMatchObject({ state: 'retrying' });
    expect(await h.store.getJob({ id: job.id })).toMatchObject({ state: 'completed', result: 'ok' });
  });
});
