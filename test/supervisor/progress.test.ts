import { describe, expect, it } from 'vitest';
import type { ProgressUpdate } from '../../src/adapters/store.js';
import type { Job } from '../../src/index.js';
import { advance, deferred, settle, until } from '../support/sim.js';
import { supervisorHarness } from './harness.js';

const { setup } = supervisorHarness();

describe('supervisor: progress', () => {
  it('writes the first report at once, then at most one a second per job, the last winning', async () => {
    const step = deferred<void>();
    let report!: Job['progress'];
    const { clock, store, queue, supervisor } = setup({
      handlers: { j: async ({ progress }: Job) => { report = progress; await step.promise; return 'done'; } },
    });
    const writes: ProgressUpdate[][] = [];
    const setProgress = store.setProgressIfRunning.bind(store);
    store.setProgressIfRunning = (params) => {
      writes.push([...params.updates]);
      return setProgress(params);
    };
    const { job } = await queue.enqueue(store, 'j', {});
    const drained = supervisor.drain();
    await until('the handler runs', () => report !== undefined);
    const t0 = clock.now();
    report(10, 'fetching');
    await until('the first report written', () => writes.length === 1);
    expect((await store.getJob({ id: job.id }))?.progress).toEqual({ percent: 10, message: 'fetching', at: new Date(t0) });
    report(20);
    report(30, 'parsing');
    // Held until the window's end: the write's time in the row says when it went.
    clock.increment(999);
    clock.increment(1);
    await until('the held report written', () => writes.length === 2);
    expect(writes.map((w) => w.map((u) => [u.percent, u.message]))).toEqual([[[10, 'fetching']], [[30, 'parsing']]]);
    expect((await store.getJob({ id: job.id }))?.progress).toEqual({ percent: 30, message: 'parsing', at: new Date(t0 + 1_000) });
    // Nothing waits: the next report after the window is written at once.
    await advance(clock, 5_000);
    report(50);
    await until('the report after the window written', () => writes.length === 3);
    expect(writes).toHaveLength(3);
    // The last report, held by the throttle when the handler returns, goes with the outcome.
    report(100, 'done');
    step.resolve();
    await drained;
    expect(writes).toHaveLength(3);
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'completed', progress: { percent: 100, message: 'done' } });
  });

  it('sends the reports of many jobs in one store call', async () => {
    const go = deferred<void>();
    let started = 0;
    const { store, queue, supervisor } = setup({
      concurrency: 5,
      handlers: { j: async (job: Job) => { started += 1; await go.promise; job.progress(50); await go.promise; } },
    });
    const calls: number[] = [];
    const setProgress = store.setProgressIfRunning.bind(store);
    store.setProgressIfRunning = (params) => {
      calls.push(params.updates.length);
      return setProgress(params);
    };
    await queue.enqueueMany(store, Array.from({ length: 5 }, () => ({ kind: 'j' as const, payload: {} })));
    const drained = supervisor.drain();
    await until('five handlers run', () => started === 5);
    go.resolve();
    await drained;
    expect(calls).toEqual([5]);
    expect((await store.listJobs({})).map((j) => j.progress?.percent)).toEqual([50, 50, 50, 50, 50]);
  });

  it('refuses a percent outside 0..100, and cuts a long message', async () => {
    const errors: unknown[] = [];
    const { store, queue, supervisor } = setup({
      handlers: {
        j: (job: Job) => {
          for (const bad of [-1, 101, Number.NaN]) {
            try { job.progress(bad); } catch (error) { errors.push(error); }
          }
          job.progress(1, 'x'.repeat(5_000));
        },
      },
    });
    const { job } = await queue.enqueue(store, 'j', {});
    await supervisor.drain();
    expect(errors.map((e) => (e as { code: string }).code)).toEqual(['invalid_option', 'invalid_option', 'invalid_option']);
    expect((await store.getJob({ id: job.id }))?.progress?.message).toHaveLength(1_000);
  });

  it('ignores reports made after the handler ended', async () => {
    let late!: Job;
    const { store, queue, supervisor } = setup({ handlers: { j: (job: Job) => { late = job; return 'ok'; } } });
    const { job } = await queue.enqueue(store, 'j', {});
    await supervisor.drain();
    late.progress(77);
    // Nothing to wait for: settle() gives a wrong write the turns it would take.
    await settle();
    expect((await store.getJob({ id: job.id }))?.progress).toBeNull();
  });
});

describe('supervisor: progress of several jobs', () => {
  it('writes each job\'s held report when its own window ends, sooner or later than another job\'s', async () => {
    const go = deferred<void>();
    const reports: Job['progress'][] = [];
    const { clock, store, queue, supervisor } = setup({
      concurrency: 2,
      handlers: { j: async ({ progress }: Job) => { reports.push(progress); await go.promise; } },
    });
    const written: Array<[number, number]> = [];
    const setProgress = store.setProgressIfRunning.bind(store);
    store.setProgressIfRunning = (params) => {
      for (const u of params.updates) written.push([clock.now() - t0, u.percent]);
      return setProgress(params);
    };
    await queue.enqueueMany(store, [{ kind: 'j', payload: {} }, { kind: 'j', payload: {} }]);
    const drained = supervisor.drain();
    await until('both handlers run', () => reports.length === 2);
    const t0 = clock.now();
    const [a, b] = reports;
    // Each report sets its timer as it is made; each write is recorded when it is sent, by
    // the clock, which moves only here.
    b!(10);
    await until("b's first report written", () => written.length === 1);
    clock.increment(500);
    a!(1);
    await until("a's first report written", () => written.length === 2);
    clock.increment(100);
    a!(2); // held until 1 500
    clock.increment(100);
    b!(20); // held until 1 000: sooner than the timer already set for a's
    clock.increment(300);
    await until("b's held report written", () => written.length === 3);
    clock.increment(500);
    await until("a's held report written", () => written.length === 4);
    expect(written).toEqual([[0, 10], [500, 1], [1_000, 20], [1_500, 2]]);
    go.resolve();
    await drained;
  });
});
