/**
 * The supervisor machine's own store calls (startClaim, startReap) on a runtime of our own:
 * what the machine does with a call that throws before it returns a promise, and with an
 * answer that comes after it stopped waiting for it. The paths through every state and
 * transition are supervisor-paths.test.ts's.
 */
import { describe, expect, it, vi } from 'vitest';
import { createActor, SimulatedClock } from 'xstate';
import { type ClaimRound, supervisorMachine, type SupervisorRuntime } from '../../src/supervisor/supervisor-machine.js';
import { deferred, settle } from '../support/sim.js';

const TIMING = { pollIntervalMs: 1_000, reaperIntervalMs: 5_000, errorBackoffMs: 100, maxErrorBackoffMs: 100 };

/** A runtime whose claims and reaper passes the test answers; nothing else to claim. */
function runtime(overrides: Partial<SupervisorRuntime> = {}): SupervisorRuntime {
  return {
    hasFreeSlots: () => true,
    wantsClaim: () => false,
    noteWork: () => {},
    claim: () => Promise.resolve({ claimed: 0 }),
    reap: () => Promise.resolve(0),
    msUntilClaim: (pollIntervalMs) => pollIntervalMs,
    endedSinceClaim: () => false,
    busy: () => false,
    abortAll: () => {},
    giveUp: () => {},
    releaseHeld: () => {},
    claimFailed: () => {},
    reapFailed: () => {},
    drained: () => {},
    stopped: () => {},
    ...overrides,
  };
}

function start(rt: SupervisorRuntime) {
  const clock = new SimulatedClock();
  const actor = createActor(supervisorMachine, { clock, input: { runtime: rt, ...TIMING } }).start();
  actor.send({ type: 'supervisor.start' });
  return { actor, clock };
}

describe('the supervisor machine’s store calls', () => {
  it('takes a claim that throws before returning a promise as a failed claim: reported, backed off, tried again', async () => {
    const boom = new Error('the clock failed');
    let calls = 0;
    const claimFailed = vi.fn();
    const { actor, clock } = start(
      runtime({
        claim: () => {
          calls += 1;
          if (calls === 1) throw boom;
          return Promise.resolve({ claimed: 0 });
        },
        claimFailed,
      }),
    );
    await settle();
    expect(actor.getSnapshot().value).toEqual({ running: { claimer: 'backingOff', reaper: 'sleeping' } });
    expect(claimFailed).toHaveBeenCalledWith(boom, 1);
    clock.increment(TIMING.errorBackoffMs);
    await settle();
    expect(calls).toBe(2);
    expect(actor.getSnapshot().value).toEqual({ running: { claimer: 'waiting', reaper: 'sleeping' } });
    expect(actor.getSnapshot().context.failures).toBe(0);
  });

  it('takes a reaper pass that throws before returning a promise as a failed pass: reported, and the next one comes', async () => {
    const boom = new Error('no connection');
    let passes = 0;
    const reapFailed = vi.fn();
    const { actor, clock } = start(
      runtime({
        reap: () => {
          passes += 1;
          if (passes === 1) throw boom;
          return Promise.resolve(0);
        },
        reapFailed,
      }),
    );
    await settle();
    expect(reapFailed).toHaveBeenCalledWith(boom);
    expect(actor.getSnapshot().matches({ running: { reaper: 'sleeping' } })).toBe(true);
    clock.increment(TIMING.reaperIntervalMs);
    await settle();
    expect(passes).toBe(2);
    expect(actor.getSnapshot().matches({ running: { reaper: 'sleeping' } })).toBe(true);
  });

  it('drops a claim’s answer that comes while stopping, and one that comes after it stopped', async () => {
    const claims: ReturnType<typeof deferred<ClaimRound>>[] = [];
    let busy = true;
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const { actor } = start(
        runtime({
          claim: () => {
            claims.push(deferred());
            return claims.at(-1)!.promise;
          },
          busy: () => busy,
        }),
      );
      expect(claims).toHaveLength(1);
      actor.send({ type: 'supervisor.stop', graceMs: 60_000, storeWaitMs: 60_000 });
      claims[0]!.resolve({ claimed: 3 });
      await settle();
      // Still waiting for its jobs to end, not claiming again.
      expect(actor.getSnapshot().value).toEqual({ stopping: 'draining' });
      expect(claims).toHaveLength(1);

      // A second supervisor machine stops outright with its claim in flight; the answer finds
      // a stopped actor and is not sent at all.
      busy = false;
      const second = start(
        runtime({
          claim: () => {
            claims.push(deferred());
            return claims.at(-1)!.promise;
          },
        }),
      ).actor;
      second.send({ type: 'supervisor.stop', graceMs: 0, storeWaitMs: 60_000 });
      expect(second.getSnapshot().status).toBe('done');
      claims[1]!.resolve({ claimed: 1 });
      await settle();
      expect(second.getSnapshot().status).toBe('done');
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });
});
