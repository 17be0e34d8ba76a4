/**
 * Durable jobs with the rest of jobvisor, through the public API on a supervisor, on every
 * store (docs/durable-jobs.md, "Working with the rest of jobvisor"): a flow whose node waits
 * for a signal and sleeps, a concurrency key and a gate that a sleeping job gives back and
 * takes again when it wakes (never over the limit), and an `expiresAt` that passes while a
 * job sleeps. The supervisors run on a simulated clock; the waits below are for real
 * conditions (a row's state, a handler that started), each with a deadline.
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import type { SimulatedClock } from 'xstate';
import type { JobStore } from '../../src/adapters/store.js';
import { defineFlow, defineQueue, enqueueFlow, flowJob, sendSignal, type Job, type JobState } from '../../src/index.js';
import { createSupervisor, type Supervisor, type SupervisorOptions } from '../../src/supervisor/supervisor.js';
import { advance, createTestClock, deferred } from '../support/sim.js';
import { describeEachStore } from '../support/test-stores.js';

const DAY = 24 * 3_600_000;
const silent = { debug() {}, info() {}, warn() {}, error() {} };

describeEachStore('durable jobs with the rest of jobvisor', (testStore) => {
  let clock: SimulatedClock;
  let store: JobStore;
  let supervisors: Supervisor[];

  beforeEach(async () => {
    clock = createTestClock();
    store = await testStore.create(clock);
    supervisors = [];
  });

  afterEach(async () => {
    for (const supervisor of supervisors) {
      let stopped = false;
      void supervisor.stop({ graceMs: 0 }).then(() => (stopped = true));
      for (let i = 0; i < 50 && !stopped; i++) await advance(clock, 1_000);
    }
    await store.close();
    await testStore.reset();
  });

  function supervise(options: Omit<SupervisorOptions, 'store' | 'clock' | 'workerId' | 'logger'>): Supervisor {
    const supervisor = createSupervisor({ workerId: 'w1', logger: silent, ...options, store, clock });
    supervisors.push(supervisor);
    return supervisor;
  }

  const stateOf = async (id: string): Promise<JobState | undefined> => (await store.getJob({ id }))?.state;
  const until = (what: () => unknown) => vi.waitFor(what, { timeout: 10_000, interval: 5 });

  it('a flow: a node that waits for a signal, then sleeps, releases its dependent only when it completes', async () => {
    const log: string[] = [];
    const orders = defineQueue('orders', {
      concurrency: 2,
      handlers: {
        approve: async (job: Job<{ order: string }>) => {
          const answer = await job.waitForSignal<{ by: string }>('approved');
          log.push(`approved by ${answer.received ? answer.payload.by : '-'}`);
          await job.sleep('cool-off', DAY);
          return { by: answer.received ? answer.payload.by : null };
        },
        ship: async (job: Job<{ order: string }>) => {
          const { approve } = await job.parents<{ approve: { by: string } }>();
          log.push(`shipped after ${approve.state} by ${approve.result!.by}`);
        },
      },
    });
    const flow = await enqueueFlow(
      store,
      defineFlow('order', {
        approve: flowJob(orders, 'approve', { order: 'o-1' }),
        ship: flowJob(orders, 'ship', { order: 'o-1' }, { dependsOn: ['approve'] }),
      }),
    );
    const { approve, ship } = flow.jobs;
    const supervisor = supervise({ queues: [orders] });
    await supervisor.drain();
    expect([await stateOf(approve.id), await stateOf(ship.id)]).toEqual(['sleeping', 'waiting']);
    await sendSignal(store, approve.id, 'approved', { by: 'ana' });
    await supervisor.drain();
    // Awake, it ran on and now sleeps a day: not an end, its dependent still waits.
    expect(log).toEqual(['approved by ana']);
    expect([await stateOf(approve.id), await stateOf(ship.id)]).toEqual(['sleeping', 'waiting']);
    await advance(clock, DAY, 3_600_000);
    await supervisor.drain();
    expect(log).toEqual(['approved by ana', 'approved by ana', 'shipped after completed by ana']);
    expect([await stateOf(approve.id), await stateOf(ship.id)]).toEqual(['completed', 'completed']);
  });

  it('a concurrency key: a sleeping job gives its slot to another job of the key, and waits for it again when it wakes', async () => {
    const log: string[] = [];
    const hold = deferred<void>();
    const sync = defineQueue('sync', {
      concurrency: 5,
      perKeyConcurrency: 1,
      leaseMs: 10 * 60_000,
      handlers: {
        // The first run never comes back from the sleep: the attempt ends there.
        nap: async (job: Job) => {
          log.push(`nap ${job.attempt}`);
          await job.sleep('nap', 60_000);
          log.push('nap done');
        },
        hold: async () => {
          log.push('hold');
          await hold.promise;
          log.push('hold done');
        },
        mark: async () => void log.push('mark'),
      },
    });
    const supervisor = supervise({ queues: [sync] });
    await supervisor.start();
    const { job: nap } = await sync.enqueue(store, 'nap', {}, { concurrencyKey: 'acct' });
    await until(async () => expect(await stateOf(nap.id)).toBe('sleeping'));
    const { job: held } = await sync.enqueue(store, 'hold', {}, { concurrencyKey: 'acct' });
    await until(() => expect(log).toContain('hold'));
    // The nap is due, but its key's one slot is taken: a claim after that (it takes the mark)
    // passes over it.
    await advance(clock, 60_000, 1_000);
    const { job: mark } = await sync.enqueue(store, 'mark', {});
    await until(async () => expect(await stateOf(mark.id)).toBe('completed'));
    expect(await stateOf(nap.id)).toBe('sleeping');
    hold.resolve();
    await until(async () => expect(await stateOf(nap.id)).toBe('completed'));
    expect(await stateOf(held.id)).toBe('completed');
    // The nap's second run began only once the hold had ended: never two of the key at once.
    expect(log).toEqual(['nap 1', 'hold', 'mark', 'hold done', 'nap 2', 'nap done']);
  });

  it('a gate: a sleeping job holds no gate slot, and waits for one when it wakes', async () => {
    const log: string[] = [];
    const hold = deferred<void>();
    const naps = defineQueue('naps', {
      concurrency: 2,
      gate: 'api',
      leaseMs: 10 * 60_000,
      handlers: {
        nap: async (job: Job) => {
          log.push(`nap ${job.attempt}`);
          await job.sleep('nap', 60_000);
          log.push('nap done');
        },
      },
    });
    const calls = defineQueue('calls', {
      concurrency: 2,
      gate: 'api',
      leaseMs: 10 * 60_000,
      handlers: {
        call: async () => {
          log.push('call');
          await hold.promise;
          log.push('call done');
        },
      },
    });
    const marks = defineQueue('marks', { handlers: { mark: async () => void log.push('mark') } });
    const supervisor = supervise({ queues: [naps, calls, marks], gates: { api: 1 } });
    await supervisor.start();
    const { job: nap } = await naps.enqueue(store, 'nap', {});
    await until(async () => expect(await stateOf(nap.id)).toBe('sleeping'));
    await calls.enqueue(store, 'call', {});
    await until(() => expect(log).toContain('call'));
    // The nap is due; a poll claims it (a due sleep is found as a due retry is: by the next
    // claim of its queue), and it waits in line, held, for the gate's one slot: the call's.
    await advance(clock, 60_000, 1_000);
    await until(async () => {
      await advance(clock, 1_000);
      expect(await stateOf(nap.id)).toBe('running');
    });
    // A claim after that one (it takes the mark, outside the gate): the nap has not started.
    const { job: mark } = await marks.enqueue(store, 'mark', {});
    await until(async () => expect(await stateOf(mark.id)).toBe('completed'));
    expect(log).toEqual(['nap 1', 'call', 'mark']);
    hold.resolve();
    await until(async () => expect(await stateOf(nap.id)).toBe('completed'));
    expect(log).toEqual(['nap 1', 'call', 'mark', 'call done', 'nap 2', 'nap done']);
  });

  it('an expiresAt that passes while the job sleeps: the reaper ends it dead (expired), never run again', async () => {
    let runs = 0;
    const naps = defineQueue('naps', { handlers: { nap: async (job: Job) => { runs += 1; await job.sleep('nap', 60_000); } } });
    const supervisor = supervise({ queues: [naps] });
    const { job } = await naps.enqueue(store, 'nap', {}, { expiresIn: 30_000 });
    await supervisor.drain();
    expect(await stateOf(job.id)).toBe('sleeping');
    await advance(clock, 60_000, 10_000);
    // A drain's reaper pass comes before its claim.
    await supervisor.drain();
    expect(runs).toBe(1);
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'dead', error: { code: 'expired' } });
    expect((await store.getJobEvents({ id: job.id })).map((e) => e.toState)).toEqual(['pending', 'running', 'sleeping', 'dead']);
  });

  it('an expiresAt that passes while the job sleeps: the claim of its wake-up, meeting it before the reaper, ends it unrun', async () => {
    let runs = 0;
    const naps = defineQueue('naps', { handlers: { nap: async (job: Job) => { runs += 1; await job.sleep('nap', 60_000); } } });
    const supervisor = supervise({ queues: [naps], reaperIntervalMs: 10 * DAY });
    await supervisor.start();
    const { job } = await naps.enqueue(store, 'nap', {}, { expiresIn: 30_000 });
    await until(async () => expect(await stateOf(job.id)).toBe('sleeping'));
    await until(async () => {
      await advance(clock, 10_000);
      expect(await stateOf(job.id)).toBe('dead');
    });
    expect(runs).toBe(1);
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'dead', error: { code: 'expired' } });
    expect((await store.getJobEvents({ id: job.id })).map((e) => e.toState)).toEqual(['pending', 'running', 'sleeping', 'running', 'dead']);
  });
});
