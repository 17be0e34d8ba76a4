/**
 * After a store outage the supervisor claims as soon as it hears the store is back, not at
 * the end of a claim backoff that grew during the outage: when the store's listener is back
 * (a wake-up for any queue) or any other store call goes through. Simulated clock: the backoff
 * here would wait 30 s; the test moves the clock by far less.
 */
import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { defineQueue } from '../../src/index.js';
import { createSupervisor } from '../../src/supervisor/supervisor.js';
import { advance, createTestClock, deferred, settle } from '../support/sim.js';
import { interceptStore } from '../support/store-proxy.js';
import { stopSupervisorsAfterEach } from './harness.js';

const track = stopSupervisorsAfterEach();
const DOWN = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

function outageSetup() {
  const clock = createTestClock();
  const base = memoryStore({ clock });
  const state = { down: false, claims: 0, onWake: undefined as ((queue?: string) => void) | undefined };
  const store = interceptStore(base, {
    claimJobs: async (params) => {
      state.claims += 1;
      if (state.down) throw DOWN;
      return base.claimJobs(params);
    },
    setStatesIfRunning: async (params) => {
      if (state.down) throw DOWN;
      return base.setStatesIfRunning(params);
    },
    subscribe: async (onWake, onCancel) => {
      state.onWake = onWake;
      return base.subscribe(onWake, onCancel);
    },
  });
  const release = deferred<void>();
  const queue = defineQueue('q', {
    concurrency: 2,
    handlers: { quick: async () => null, held: () => release.promise },
  });
  const supervisor = createSupervisor({
    store, queues: [queue], clock, workerId: 'w1',
    pollIntervalMs: 60_000, reaperIntervalMs: 3_600_000, errorBackoffMs: 1_000, maxErrorBackoffMs: 30_000, writeRetryMs: 500,
  });
  track(supervisor, clock);
  return { clock, base, state, queue, supervisor, release };
}

describe('after a store outage', () => {
  it('a wake-up for any queue (the listener back) makes the supervisor claim at once', async () => {
    const { clock, base, state, supervisor } = outageSetup();
    await supervisor.start();
    await settle();
    state.down = true;
    await advance(clock, 5_000, 500);
    // Enqueued during the outage: the claim its notification set off failed.
    const { job } = (await base.enqueueJobs({ jobs: [{ queue: 'q', kind: 'quick', payload: {}, maxAttempts: 1 }] }))[0]!;
    await advance(clock, 30_000, 500);
    state.down = false;
    const claimsDuring = state.claims;
    await advance(clock, 1_000);
    // Backing off: nothing claimed the job since the store came back.
    expect((await base.getJob({ id: job.id }))!.state).toBe('pending');
    expect(state.claims).toBe(claimsDuring);
    state.onWake!();
    await settle();
    expect((await base.getJob({ id: job.id }))!.state).toBe('completed');
  });

  it('a store call that goes through (a write retried) makes the supervisor claim at once', async () => {
    const { clock, base, state, queue, supervisor, release } = outageSetup();
    await queue.enqueue(base, 'held', {});
    await supervisor.start();
    await settle();
    // The held job runs through the outage; its write fails and is retried every 500 ms.
    state.down = true;
    release.resolve();
    await advance(clock, 35_000, 500);
    const { job } = (await base.enqueueJobs({ jobs: [{ queue: 'q', kind: 'quick', payload: {}, maxAttempts: 1 }] }))[0]!;
    state.down = false;
    // The next write retry goes through, and the claim follows it, long before the backoff ends.
    await advance(clock, 500);
    expect((await base.getJob({ id: job.id }))!.state).toBe('completed');
    expect(await base.countJobs()).toEqual([{ queue: 'q', state: 'completed', count: 2 }]);
  });
});
