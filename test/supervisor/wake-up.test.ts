/**
 * When a job that waits becomes claimable, on every store, with the poll set far away (a
 * minute): a sleep's end and a later runAt are claimed when they come (the supervisor's one
 * wake-up timer, set from the store's answer or its own job's sleep), a signal at once (the
 * store's notification). The simulated clock is the store's clock too, so "at 2 s" is exact.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { SimulatedClock } from 'xstate';
import type { JobStore } from '../../src/adapters/store.js';
import { defineQueue, sendSignal, type Job } from '../../src/index.js';
import { createSupervisor, type Supervisor } from '../../src/supervisor/supervisor.js';
import { advance, createTestClock, until } from '../support/sim.js';
import { describeEachStore } from '../support/test-stores.js';

const POLL_MS = 60_000;
/** Turns of the event loop to wait for the database's answers (not time: the clock stands). */
const TURNS = 100_000;

/** Waits with the clock standing, firing what is due now on every turn: a timer set for a time
 *  already reached while a store call was in flight (0 ms) fires at once in real time, and on
 *  a simulated clock only when it is flushed. */
function settled(what: string, check: () => Promise<boolean>, clock: SimulatedClock): Promise<void> {
  return until(what, async () => (clock.increment(0), check()), TURNS);
}

describeEachStore('supervisor: waking a waiting job', (testStore) => {
  let clock: SimulatedClock;
  let store: JobStore;
  beforeEach(async () => {
    clock = createTestClock();
    store = await testStore.create(clock);
  });
  const running: Supervisor[] = [];
  afterEach(async () => {
    // Stopped before their store closes, the clock driven until each has (a SQL store's
    // writes take real time: waited for as turns of the event loop, not as a sleep).
    for (const supervisor of running.splice(0)) {
      let stopped = false;
      void supervisor.stop({ graceMs: 0 }).then(() => (stopped = true));
      await until('the supervisor stops', async () => (clock.increment(100), stopped), TURNS);
    }
    await store.close();
    await testStore.reset();
  });

  const log: string[] = [];
  // A queue of its own per test: nothing one test's supervisor left in the store reaches the next.
  let tests = 0;
  const naps = () => defineQueue(`naps${++tests}`, {
    handlers: {
      nap: async (job: Job) => {
        log.push(`run ${job.id}`);
        await job.sleep('nap', 2_000);
        log.push(`awake ${job.id}`);
      },
      approve: async (job: Job) => {
        const answer = await job.waitForSignal<{ ok: boolean }>('approved');
        log.push(`approved ${JSON.stringify(answer)}`);
      },
      later: async (job: Job) => void log.push(`later ${job.id}`),
    },
  });
  let queue: ReturnType<typeof naps>;
  beforeEach(() => {
    log.splice(0);
    queue = naps();
  });

  function start(workerId: string) {
    const supervisor = createSupervisor({ workerId, store, queues: [queue], clock, pollIntervalMs: POLL_MS });
    running.push(supervisor);
    return supervisor.start().then(() => supervisor);
  }
  const stateOf = async (id: string) => (await store.getJob({ id }))!.state;

  it('a sleep of 2 s is claimed at 2 s, not at the next poll', async () => {
    const { job } = await queue.enqueue(store, 'nap', {});
    await start('w1');
    await until('the job sleeps', async () => (await stateOf(job.id)) === 'sleeping', TURNS);
    await advance(clock, 1_900, 100);
    expect(await stateOf(job.id)).toBe('sleeping');
    await advance(clock, 100, 100);
    await settled('the job wakes and completes', async () => (await stateOf(job.id)) === 'completed', clock);
    expect(log).toEqual([`run ${job.id}`, `run ${job.id}`, `awake ${job.id}`]);
  });

  it('a worker that did not put the job to sleep learns its end from the store, as a later runAt', async () => {
    // Put to sleep by a claim of the store's own (another process, gone); the worker started
    // after it has only the store to tell it.
    const { job } = await queue.enqueue(store, 'nap', {});
    const [claimed] = await store.claimJobs({ workerId: 'gone', leaseMs: 30_000, queues: [{ queue: queue.name, limit: 1 }] });
    expect(await store.suspendIfRunning({ id: job.id, leaseToken: claimed!.leaseToken, kind: 'sleep', name: 'nap', wake: { delayMs: 3_000 } })).toEqual({ answer: 'sleeping' });
    const { job: later } = await queue.enqueue(store, 'later', {}, { runIn: 5_000 });
    await start('w2');
    await advance(clock, 2_900, 100);
    expect(await stateOf(job.id)).toBe('sleeping');
    await advance(clock, 100, 100);
    await settled('the sleeper wakes and completes', async () => (await stateOf(job.id)) === 'completed', clock);
    await advance(clock, 1_900, 100);
    expect(await stateOf(later.id)).toBe('pending');
    await advance(clock, 100, 100);
    await settled('the later job runs', async () => (await stateOf(later.id)) === 'completed', clock);
  });

  it('a signal wakes a waiting job at once, the clock standing still', async () => {
    const { job } = await queue.enqueue(store, 'approve', {});
    await start('w1');
    await until('the job waits', async () => (await stateOf(job.id)) === 'sleeping', TURNS);
    expect(await sendSignal(store, job.id, 'approved', { ok: true })).toEqual({ delivered: 'woke', state: 'pending' });
    await until('the job completes', async () => (await stateOf(job.id)) === 'completed', TURNS);
    expect(log).toEqual(['approved {"received":true,"payload":{"ok":true}}']);
  });
});
