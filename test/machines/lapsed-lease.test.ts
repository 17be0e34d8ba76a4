/**
 * A job actor never starts its handler on a lease its own clock says has lapsed. That
 * happens when the process was paused (SIGSTOP, a long GC, a frozen VM) while a job waited
 * for a slot, or when a claim's answer arrived after its lease: the reaper may have given
 * the job to another worker meanwhile, and running it here would run it twice at once.
 * The chaos run (scripts/chaos) found the held case: a resumed zombie started such jobs.
 *
 * The machine's timers run on a simulated clock that the test never advances, as in a paused
 * process whose timers have not fired yet; `now()` moves on, as the wall clock does.
 */
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { jobMachine, type JobPorts } from '../../src/machines/job-machine.js';
import { createTestClock, settle, testWakes } from '../support/sim.js';

const LEASE_MS = 3_000;

async function claimOne() {
  const clock = createTestClock();
  const store = memoryStore({ clock });
  await store.enqueueJobs({ jobs: [{ queue: 'q', kind: 'k', payload: {}, maxAttempts: 3 }] });
  const [job] = await store.claimJobs({ workerId: 'w1', leaseMs: LEASE_MS, queues: [{ queue: 'q', limit: 1 }] });
  return { clock, job: job! };
}

/** `handlerRuns`: the handler never returns (else it returns at once). */
async function harness(options: { waitForStart: boolean; claimAnsweredAfterMs: number; handlerRuns?: boolean }) {
  const { clock, job } = await claimOne();
  const claimedAt = clock.now();
  let now = claimedAt + options.claimAnsweredAfterMs;
  const calls = { handler: 0, writes: 0, renewals: 0, slotsFreed: 0 };
  /** When each renewal was sent, by the ports' clock. */
  const renewedAt: number[] = [];
  const ports: JobPorts = {
    runHandler: () => ((calls.handler += 1), options.handlerRuns ? new Promise(() => {}) : Promise.resolve()),
    writeOutcome: async () => ((calls.writes += 1), true),
    renewLease: async () => ((calls.renewals += 1), renewedAt.push(now), true),
    suspend: async () => ({ answer: 'lost' }),
    freeSlot: () => void (calls.slotsFreed += 1),
    ...testWakes(clock, () => now),
    now: () => now,
    backoffMs: () => 1_000,
  };
  const actor = createActor(jobMachine, {
    clock,
    input: {
      job,
      ports,
      hasHandler: true,
      waitForStart: options.waitForStart,
      leaseValidUntil: claimedAt + LEASE_MS,
      expiresAtMs: null,
      policy: { leaseMs: LEASE_MS, heartbeatMs: 1_000, deadlineMs: 10_000, writeRetryMs: 500 },
    },
  }).start();
  return {
    actor, calls, renewedAt, claimedAt,
    pauseFor: (ms: number) => void (now += ms),
    /** Time passes for the timers and the ports alike. */
    advance: (ms: number) => ((now += ms), clock.increment(ms)),
  };
}

describe('a lease lapsed by the worker\'s own clock', () => {
  it('a job held for a slot is not started once the process resumes past its lease', async () => {
    const h = await harness({ waitForStart: true, claimAnsweredAfterMs: 0 });
    h.pauseFor(LEASE_MS + 500);
    h.actor.send({ type: 'job.start' });
    await settle();
    expect(h.actor.getSnapshot().value).toBe('lost');
    expect(h.calls).toEqual({ handler: 0, writes: 0, renewals: 0, slotsFreed: 1 });
  });

  it('a claim answered after its lease lapsed is not started', async () => {
    const h = await harness({ waitForStart: false, claimAnsweredAfterMs: LEASE_MS + 1 });
    await settle();
    expect(h.actor.getSnapshot().value).toBe('lost');
    expect(h.calls).toEqual({ handler: 0, writes: 0, renewals: 0, slotsFreed: 1 });
  });

  it('within the lease, both start as usual', async () => {
    const held = await harness({ waitForStart: true, claimAnsweredAfterMs: 0 });
    held.pauseFor(LEASE_MS - 1);
    held.actor.send({ type: 'job.start' });
    const atOnce = await harness({ waitForStart: false, claimAnsweredAfterMs: LEASE_MS - 1 });
    await settle();
    expect([held.actor.getSnapshot().value, atOnce.actor.getSnapshot().value]).toEqual(['completed', 'completed']);
    expect([held.calls.handler, atOnce.calls.handler]).toEqual([1, 1]);
  });
});

describe('a claim answered late, within its lease', () => {
  it('renews at once when the answer came later than a heartbeat: the lease is counted from the claim\'s send', async () => {
    // Answered 2,500 ms after it was sent: 500 ms of the lease left, the heartbeat (1,000 ms
    // after the send) already past.
    const h = await harness({ waitForStart: false, claimAnsweredAfterMs: 2_500, handlerRuns: true });
    h.advance(0);
    await settle();
    expect(h.renewedAt).toEqual([h.claimedAt + 2_500]);
    // The renewal answered: the lease runs from its send, past the claim's first end.
    expect(h.actor.getSnapshot().context.leaseValidUntil).toBe(h.claimedAt + 2_500 + LEASE_MS);
    // Past the claim's lease (3,000 ms after its send), still running, renewed a heartbeat later.
    h.advance(1_000);
    await settle();
    expect(h.actor.getSnapshot().value).toEqual({ running: 'working' });
    expect(h.renewedAt).toEqual([h.claimedAt + 2_500, h.claimedAt + 3_500]);
    h.actor.stop();
  });
});
