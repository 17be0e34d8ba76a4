/**
 * stop() past its grace period waits for the store's answers (the released jobs' writes, a
 * claim on its way, the worker's row removed) for `storeWaitMs` at most: a store that never
 * answers must not hold the process past its shutdown. What it gave up on is left to the
 * reaper, and a claim that answers later starts nothing.
 */
import { describe, expect, it } from 'vitest';
import type { ClaimParams } from '../../src/adapters/store.js';
import { InvalidOptionError } from '../../src/errors.js';
import type { MemoryStore } from '../../src/adapters/memory/index.js';
import type { Queue } from '../../src/index.js';
import { createSupervisor, type Supervisor } from '../../src/supervisor/supervisor.js';
import { advance, deferred, until } from '../support/sim.js';
import { supervisorHarness } from './harness.js';

const GRACE_MS = 1_000;
const STORE_WAIT_MS = 5_000;
const GAVE_UP = "the store has not answered the stop in time (jobs' writes, a claim); stopping without it: their rows stay running until their leases end, then the reaper gives them back";

/** The writes that release stop()'s aborted jobs are never answered. */
function hangReleases(store: MemoryStore): void {
  const write = store.setStatesIfRunning.bind(store);
  store.setStatesIfRunning = (params) => (params.outcomes.some((o) => o.state === 'released') ? new Promise(() => {}) : write(params));
}

/** Enqueues a job of kind `k`, starts the supervisor, and resolves with the job once it runs. */
async function startRunning(store: MemoryStore, queue: Queue<any>, supervisor: Supervisor): Promise<{ id: string }> {
  const { job } = await queue.enqueue(store, 'k', {});
  await supervisor.start();
  await until('the job runs', async () => (await store.getJob({ id: job.id }))?.state === 'running');
  return job;
}

describe('supervisor: stop() gives up on a store that does not answer', () => {
  const { setup } = supervisorHarness();

  function withLog(queueOptions: Parameters<typeof setup>[0]) {
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, error() {}, warn: (_: object, msg?: string) => void warnings.push(msg ?? '') };
    return { ...setup(queueOptions, { logger, prefetchWindowMs: 0 }), warnings };
  }

  /** Calls stop() and drives the clock in steps of 100 ms until it resolves; answers when. */
  async function stopAndTime(supervisor: { stop(o: object): Promise<void> }, clock: { now(): number }, advanceBy: (ms: number) => Promise<void>) {
    const began = clock.now();
    let stoppedAt: number | undefined;
    void supervisor.stop({ graceMs: GRACE_MS, storeWaitMs: STORE_WAIT_MS }).then(() => (stoppedAt = clock.now()));
    for (let i = 0; i < 200 && stoppedAt === undefined; i++) await advanceBy(100);
    return stoppedAt === undefined ? undefined : stoppedAt - began;
  }

  it('a release the store never answers: stop() resolves after the grace period and storeWaitMs, the row left running', async () => {
    const { clock, store, queue, supervisor, warnings } = withLog({ handlers: { k: () => new Promise(() => {}) } });
    hangReleases(store);
    const job = await startRunning(store, queue, supervisor);
    const tookMs = await stopAndTime(supervisor, clock, (ms) => advance(clock, ms));
    expect(tookMs).toBe(GRACE_MS + STORE_WAIT_MS);
    expect(warnings).toContain(GAVE_UP);
    expect((await store.getJob({ id: job.id }))?.state).toBe('running');
  });

  it('a claim the store answers only after the stop gave up: its jobs start nothing and stay for the reaper', async () => {
    let ran = 0;
    const { clock, store, queue, supervisor, warnings } = withLog({ handlers: { k: async () => void (ran += 1) } });
    const claim = store.claimJobs.bind(store);
    const answer = deferred<void>();
    let asked = 0;
    store.claimJobs = async (params: ClaimParams) => {
      asked += 1;
      await answer.promise;
      return claim(params);
    };
    await supervisor.start();
    await until('a claim is on its way', () => asked === 1);
    const { job } = await queue.enqueue(store, 'k', {});
    const tookMs = await stopAndTime(supervisor, clock, (ms) => advance(clock, ms));
    expect(tookMs).toBe(GRACE_MS + STORE_WAIT_MS);
    expect(warnings).toContain(GAVE_UP);
    answer.resolve();
    await until('the late claim took the job', async () => (await store.getJob({ id: job.id }))?.state === 'running');
    await advance(clock, 1_000);
    expect(ran).toBe(0);
    expect((await store.getJob({ id: job.id }))?.state).toBe('running');
  });

  it('a store that answers in time: stop() waits for it, and does not warn', async () => {
    const { clock, store, queue, supervisor, warnings } = withLog({ handlers: { k: () => new Promise(() => {}) } });
    const write = store.setStatesIfRunning.bind(store);
    // The release is answered 3 s into the store wait.
    store.setStatesIfRunning = async (params) => {
      if (params.outcomes.some((o) => o.state === 'released')) {
        const at = clock.now() + 3_000;
        await until('3 s passed', () => clock.now() >= at, 100_000);
      }
      return write(params);
    };
    const job = await startRunning(store, queue, supervisor);
    const tookMs = await stopAndTime(supervisor, clock, (ms) => advance(clock, ms));
    expect(tookMs).toBe(GRACE_MS + 3_000);
    expect(warnings).toEqual([]);
    expect((await store.getJob({ id: job.id }))?.state).toBe('retrying');
  });

  it('a worker row the store never removes: stop() resolves after storeWaitMs', async () => {
    const { clock, store, supervisor, warnings } = withLog({ handlers: { k: async () => {} } });
    store.removeWorker = () => new Promise(() => {});
    await supervisor.start();
    const tookMs = await stopAndTime(supervisor, clock, (ms) => advance(clock, ms));
    // Counted from when the machine stopped: with nothing to wait for, within the first step.
    expect(tookMs).toBeGreaterThanOrEqual(STORE_WAIT_MS);
    expect(tookMs).toBeLessThanOrEqual(STORE_WAIT_MS + 100);
    expect(warnings).toContain("the store has not answered the unsubscribe or the worker row's removal in time; stopped without it");
  });

  it('one wait in all: a worker row not removed after releases not answered adds nothing to it', async () => {
    const { clock, store, queue, supervisor, warnings } = withLog({ handlers: { k: () => new Promise(() => {}) } });
    hangReleases(store);
    store.removeWorker = () => new Promise(() => {});
    const job = await startRunning(store, queue, supervisor);
    const tookMs = await stopAndTime(supervisor, clock, (ms) => advance(clock, ms));
    expect(tookMs).toBe(GRACE_MS + STORE_WAIT_MS);
    expect(warnings).toContain(GAVE_UP);
  });

  it('a handler that called stop() itself is not waited for once the stop gave up: the outer stop() resolves', async () => {
    let supervisor!: { stop(o?: object): Promise<void> };
    let innerStopped = false;
    const harness = withLog({
      handlers: {
        long: () => new Promise(() => {}),
        shutdown: async () => {
          await supervisor.stop({ graceMs: GRACE_MS, storeWaitMs: STORE_WAIT_MS });
          innerStopped = true;
        },
      },
      concurrency: 2,
    });
    supervisor = harness.supervisor;
    const { clock, store, queue } = harness;
    hangReleases(store);
    const { job: long } = await queue.enqueue(store, 'long', {});
    await harness.supervisor.start();
    await until('the long job runs', async () => (await store.getJob({ id: long.id }))?.state === 'running');
    const began = clock.now();
    await queue.enqueue(store, 'shutdown', {});
    await until('the stop from inside began', () => harness.supervisor.actor.getSnapshot().matches('stopping'), 10_000);
    let outerAt: number | undefined;
    void supervisor.stop().then(() => (outerAt = clock.now()));
    for (let i = 0; i < 200 && outerAt === undefined; i++) await advance(clock, 100);
    expect(innerStopped).toBe(true);
    expect(outerAt! - began).toBeLessThanOrEqual(GRACE_MS + STORE_WAIT_MS + 100);
    expect(harness.warnings).toContain(GAVE_UP);
  });

  it('a release the store throws at: once the stop gave up, it is not tried again', async () => {
    const { clock, store, queue, supervisor, warnings } = withLog({ handlers: { k: () => new Promise(() => {}) } });
    const write = store.setStatesIfRunning.bind(store);
    let releases = 0;
    store.setStatesIfRunning = (params) => {
      if (!params.outcomes.some((o) => o.state === 'released')) return write(params);
      releases += 1;
      return Promise.reject(new Error('ECONNRESET'));
    };
    const job = await startRunning(store, queue, supervisor);
    const tookMs = await stopAndTime(supervisor, clock, (ms) => advance(clock, ms));
    expect(tookMs).toBe(GRACE_MS + STORE_WAIT_MS);
    expect(warnings).toContain(GAVE_UP);
    // Tried every writeRetryMs (1 s) while the stop waited; none after it gave up.
    const tried = releases;
    expect(tried).toBeGreaterThan(1);
    await advance(clock, 10_000);
    expect(releases).toBe(tried);
    expect((await store.getJob({ id: job.id }))?.state).toBe('running');
  });

  it('a storeWaitMs that is not a number of ms is refused, naming it, and so is what is not an option of stop()', async () => {
    const { supervisor } = withLog({ handlers: { k: async () => {} } });
    await expect(supervisor.stop({ storeWaitMs: -1 })).rejects.toThrow(InvalidOptionError);
    await expect(supervisor.stop({ storeWaitMs: Number.NaN })).rejects.toThrow(/storeWaitMs/);
    await expect(supervisor.stop({ storeWaitMs: '300' } as never)).rejects.toThrow('storeWaitMs: must be a number of ms from 0 to 2147483647, got "300"');
    await expect(supervisor.stop({ storeWait: 10 } as never)).rejects.toThrow('storeWait: is not an option of stop() (they are graceMs, storeWaitMs)');
    await expect(supervisor.stop(null as never)).rejects.toThrow('stop: takes an object of options ({ graceMs, storeWaitMs }), got null');
    await expect(supervisor.stop(5 as never)).rejects.toThrow(/got number/);
    // None of them stopped it.
    expect(supervisor.actor.getSnapshot().value).toBe('idle');
    const { store, queue } = withLog({ handlers: { k: async () => {} } });
    expect(() => createSupervisor({ store, queues: [queue], storeWaitMs: 10 } as never)).toThrow(/is an option of stop\(\): supervisor\.stop\(\{ storeWaitMs \}\)/);
  });
});
