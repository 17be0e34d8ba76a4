/**
 * The job machine judges a handler's answer when it comes (`answeredLate`): a handler that
 * kept the event loop busy past its deadline or lease gets the deadline's outcome, or `lost`
 * with nothing written. The actor's timers run on a SimulatedClock the test never advances
 * (the loop was busy); `now()` moves as CPU time would.
 */
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import type { JobOutcome } from '../../src/adapters/store.js';
import type { AttemptHandle } from '../../src/machines/attempt-handle.js';
import { jobMachine, type JobPorts } from '../../src/machines/job-machine.js';
import type { ClaimedJob } from '../../src/types.js';
import { createTestClock, settle, testWakes } from '../support/sim.js';

function harness(handler: (spin: (ms: number) => void, attempt: AttemptHandle) => unknown) {
  const clock = createTestClock();
  let now = clock.now();
  const writes: JobOutcome[] = [];
  const suspends: unknown[] = [];
  const ports: JobPorts = {
    runHandler: (_job, attempt) => handler((ms) => void (now += ms), attempt),
    writeOutcome: async (outcome) => (writes.push(outcome), true),
    renewLease: async () => true,
    suspend: async (request) => (suspends.push(request), { answer: 'sleeping' }),
    freeSlot: () => {},
    ...testWakes(clock, () => now),
    now: () => now,
    backoffMs: () => 1_000,
  };
  const job = { id: '1', queue: 'q', kind: 'k', attempt: 1, maxAttempts: 2, leaseToken: 't', expiresAt: null } as unknown as ClaimedJob;
  const actor = createActor(jobMachine, {
    clock,
    input: {
      job, ports, hasHandler: true, waitForStart: false, leaseValidUntil: now + 1_000, expiresAtMs: null,
      policy: { leaseMs: 1_000, heartbeatMs: 333, deadlineMs: 300, writeRetryMs: 100 },
    },
  }).start();
  return { actor, writes, suspends };
}

describe('a handler that keeps the event loop busy', () => {
  it('a throw after the deadline is the deadline\'s retry, not a handler error', async () => {
    const h = harness((spin) => {
      spin(400);
      throw new Error('too late to matter');
    });
    await settle();
    expect(h.actor.getSnapshot().value).toBe('retrying');
    expect(h.writes).toMatchObject([{ state: 'retrying', error: { code: 'deadline_exceeded' } }]);
  });

  it('a sleep asked for after the lease lapsed writes nothing: lost, and the sleep never settles', async () => {
    let settled = false;
    const h = harness((spin, attempt) => {
      spin(1_200);
      return attempt.suspend({ kind: 'sleep', name: 'nap', wake: { delayMs: 60_000 } } as never).finally(() => void (settled = true));
    });
    await settle();
    expect(h.actor.getSnapshot().value).toBe('lost');
    expect(h.actor.getSnapshot().context.error?.code).toBe('lease_lost');
    expect([h.writes, h.suspends, settled]).toEqual([[], [], false]);
  });

  it('a sleep asked for after the deadline: the deadline\'s outcome, no sleep written', async () => {
    const h = harness((spin, attempt) => {
      spin(400);
      return attempt.suspend({ kind: 'sleep', name: 'nap', wake: { delayMs: 60_000 } } as never);
    });
    await settle();
    expect(h.writes).toMatchObject([{ state: 'retrying', error: { code: 'deadline_exceeded' } }]);
    expect(h.suspends).toEqual([]);
  });
});
