/**
 * What the topic files of the store conformance suite share (conformance-claims.ts,
 * conformance-fencing.ts …): constants, history rows for exact comparison, and helpers bound
 * to the current test's store and clock (`conformanceKit`). Each helper checks what it relies
 * on, so a test reads as the steps it takes.
 */
import { expect } from 'vitest';
import type { EnqueueJob, EnqueueResult, JobOutcome, JobStore, Lease } from '../../src/adapters/store.js';
import type { ClaimedJob, JobErrorInfo, JobRecord, JobState } from '../../src/types.js';
import type { TestClock } from './conformance.js';

/** Where every test's clock starts. */
export const T0 = Date.parse('2030-01-01T00:00:00.000Z');
export const LEASE_MS = 30_000;
/** Valid uuids, in case a store keeps tokens in a uuid column; no claim ever returns them. */
export const WRONG_TOKEN = '00000000-0000-4000-8000-000000000000';
/** A valid bigint id that no test reaches. */
export const UNKNOWN_ID = '987654321';

export const BOOM: JobErrorInfo = {
  code: 'handler_error',
  message: 'boom',
  name: 'Error',
  stack: 'Error: boom\n    at handler (handler.ts:1:1)',
};

export const OUTCOME_STATES = ['completed', 'retrying', 'dead', 'skipped', 'cancelled'] as const;
export type OutcomeState = (typeof OUTCOME_STATES)[number];
export const FINAL_OUTCOMES = ['completed', 'dead', 'skipped', 'cancelled'] as const;
/** Everything a worker writes under its lease. */
export const FENCED_WRITES = ['renew', ...OUTCOME_STATES] as const;
export type FencedWrite = (typeof FENCED_WRITES)[number];

/** The current test's store and clock: a getter, as each test gets fresh ones. */
export type CurrentStore = () => { store: JobStore; clock: TestClock };

/** A history row with its time as ms and its error as just the code, for exact comparison. */
export interface Step {
  fromState: JobState | null;
  toState: JobState;
  attempt: number;
  workerId: string | null;
  at: number;
  error: string | null;
}

export function step(
  fromState: JobState | null,
  toState: JobState,
  attempt: number,
  workerId: string | null,
  at: number,
  error: string | null = null,
): Step {
  return { fromState, toState, attempt, workerId, at, error };
}

export function createTestClock(start: number): TestClock {
  let now = start;
  return {
    now: () => now,
    advance(ms) {
      if (!(ms >= 0)) throw new RangeError(`advance(${ms}): time only moves forward`);
      now += ms;
    },
  };
}

export function lease(job: ClaimedJob): Lease {
  return { id: job.id, leaseToken: job.leaseToken };
}

export function ids(jobs: readonly { id: string }[]): string[] {
  return jobs.map((job) => job.id);
}

export function sortedIds(jobs: readonly { id: string }[]): string[] {
  return ids(jobs).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));
}

/** Helpers on the current test's store and clock. */
export function conformanceKit(current: CurrentStore) {
  const store = (): JobStore => current().store;
  const clock = (): TestClock => current().clock;
  const now = (): Date => new Date(clock().now());

  async function enqueue(job: Partial<EnqueueJob> = {}): Promise<JobRecord> {
    const [result] = await store().enqueueJobs({
      jobs: [{ queue: 'q', kind: 'k', payload: { n: 1 }, maxAttempts: 3, ...job }],
    });
    expect(result?.created).toBe(true);
    return result!.job;
  }

  async function enqueueOne(job: Partial<EnqueueJob>): Promise<EnqueueResult> {
    const results = await store().enqueueJobs({
      jobs: [{ queue: 'q', kind: 'k', payload: { n: 1 }, maxAttempts: 3, ...job }],
    });
    expect(results).toHaveLength(1);
    return results[0]!;
  }

  async function claim(queue = 'q', limit = 1, workerId = 'w1', leaseMs = LEASE_MS): Promise<ClaimedJob[]> {
    return store().claimJobs({ workerId, leaseMs, queues: [{ queue, limit }] });
  }

  async function claimOne(queue = 'q', workerId = 'w1'): Promise<ClaimedJob> {
    const claimed = await claim(queue, 1, workerId);
    expect(claimed).toHaveLength(1);
    return claimed[0]!;
  }

  async function getJob(id: string): Promise<JobRecord> {
    const job = await store().getJob({ id });
    expect(job).not.toBeNull();
    return job!;
  }

  async function history(id: string): Promise<Step[]> {
    const events = await store().getJobEvents({ id });
    for (const event of events) expect(event.jobId).toBe(id);
    return events.map((event) =>
      step(event.fromState, event.toState, event.attempt, event.workerId, event.at.getTime(), event.error?.code ?? null),
    );
  }

  function outcome(state: OutcomeState, of: Lease, runAt?: Date): JobOutcome {
    switch (state) {
      case 'completed':
        return { ...of, state, result: { photos: 20 } };
      case 'retrying':
        return { ...of, state, error: BOOM, runAt: runAt ?? new Date(clock().now() + 5_000) };
      case 'dead':
        return { ...of, state, error: { code: 'permanent_error', message: 'place is gone', name: 'PermanentJobError' } };
      case 'skipped':
        return { ...of, state, error: { code: 'unknown_kind', message: 'no handler for kind "k"' } };
      case 'cancelled':
        return { ...of, state, error: { code: 'cancelled', message: 'cancelled while running' } };
    }
  }

  async function setState(o: JobOutcome): Promise<boolean> {
    const applied = await store().setStatesIfRunning({ outcomes: [o] });
    expect(applied).toHaveLength(1);
    return applied[0]!;
  }

  async function write(kind: FencedWrite, of: Lease): Promise<boolean> {
    if (kind === 'renew') {
      const applied = await store().renewLeases({ leases: [of], leaseMs: LEASE_MS });
      expect(applied).toHaveLength(1);
      return applied[0] !== 'lost';
    }
    return setState(outcome(kind, of));
  }

  /** A job moved into `state` by a worker (w1), in a queue with no other due job. */
  async function jobIn(state: JobState, job: Partial<EnqueueJob> = {}): Promise<JobRecord> {
    const created = await enqueue(job);
    if (state === 'pending') return getJob(created.id);
    const claimed = await claimOne(created.queue);
    expect(claimed.id).toBe(created.id);
    if (state !== 'running') expect(await setState(outcome(state, lease(claimed)))).toBe(true);
    return getJob(created.id);
  }

  return { store, clock, now, enqueue, enqueueOne, claim, claimOne, getJob, history, outcome, setState, write, jobIn };
}
