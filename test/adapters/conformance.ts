/**
 * The store conformance suite: every `JobStore` adapter runs it, so they all keep the same
 * semantics (fencing, unique keys, history, claim order, admin operations, wake-ups). One
 * file per topic (conformance-claims.ts, conformance-fencing.ts …), each called from
 * describeStoreConformance with a getter for the test's store and clock; the constants and
 * helpers they share are at the end of this file.
 *
 * conformance.test.ts runs it on every store of test/support/test-stores.ts. Plugging in
 * another adapter:
 *
 *   describeStoreConformance('pglite', {
 *     capabilities: { notifications: true, transactionalEnqueue: true },
 *     create: async (clock) => pgliteStore({ db, schema, clock }),  // migrated
 *     teardown: async (store) => { ... truncate the tables ... },
 *     inTransaction: async (end, fn) => { ... BEGIN; await fn(client); COMMIT or ROLLBACK ... },
 *   });
 *
 * One expensive database per file (set up in the file's own `beforeAll`), a fresh store with
 * empty tables per test. Time only moves through the injected clock: a store must take "now"
 * from it for every timestamp and every comparison (runAt, lease expiry), never from the
 * database's now(). No test sleeps; only the wake-up tests wait (briefly) for notifications.
 */
import { afterEach, beforeEach, describe, expect } from 'vitest';
import type {
  EnqueueJob,
  EnqueueResult,
  JobOutcome,
  JobStore,
  Lease,
  SqlClient,
  StoreCapabilities,
} from '../../src/adapters/store.js';
import { describeAdminConformance } from './conformance-admin.js';
import { describeClaimConformance } from './conformance-claims.js';
import { describeEnqueueConformance } from './conformance-enqueue.js';
import { describeFencingConformance } from './conformance-fencing.js';
import { describeHistoryConformance } from './conformance-history.js';
import { describeThroughputConformance } from './conformance-throughput.js';
import { describeOutcomeConformance } from './conformance-outcomes.js';
import { describeReadConformance } from './conformance-reads.js';
import { describeSubscribeConformance } from './conformance-subscribe.js';
import type { ClaimedJob, Clock, JobErrorInfo, JobRecord, JobState } from '../../src/types.js';
import { describeAlertConformance } from './conformance-alerts.js';
import { describeControlConformance } from './conformance-control.js';
import { describeReleaseConformance } from './conformance-release.js';
import { describeLimitsConformance } from './conformance-limits.js';
import { describeRescueConformance } from './conformance-rescue.js';
import { describeQueueConformance } from './conformance-queues.js';
import { describeFlowConformance } from './conformance-flows.js';
import { describeDurableConformance } from './conformance-durable.js';
import { describeDurableInterplayConformance } from './conformance-durable-interplay.js';
import { describeKeysConformance } from './conformance-keys.js';

/** A clock that only moves when told to. */
export interface TestClock extends Clock {
  /** Moves time forward by `ms` (>= 0). */
  advance(ms: number): void;
}

export interface StoreConformanceFactory {
  /** What the store must report as its capabilities. */
  capabilities: StoreCapabilities;
  /** A fresh store with no jobs and no history, reading "now" from `clock`. Called before
   *  each test; the suite calls `store.close()` after it. Ids need not start at 1. */
  create(clock: TestClock): Promise<JobStore>;
  /** After each test, once the store is closed: drop its schema, truncate tables … */
  teardown?(store: JobStore): Promise<void>;
  /** Runs `fn` with a client inside an open transaction, then commits or rolls back. Give it
   *  for stores with `capabilities.transactionalEnqueue`; their enqueue-in-a-transaction
   *  tests are skipped without it. */
  inTransaction?(end: 'commit' | 'rollback', fn: (client: SqlClient) => Promise<void>): Promise<void>;
}

export function describeStoreConformance(name: string, factory: StoreConformanceFactory): void {
  describe(`JobStore conformance: ${name}`, () => {
    let clock: TestClock;
    let store: JobStore;

    beforeEach(async () => {
      clock = createTestClock(T0);
      store = await factory.create(clock);
    });

    afterEach(async () => {
      if (!store) return;
      await store.close();
      await factory.teardown?.(store);
    });

    // One file per topic, each given a getter for the test's store and clock.
    describeEnqueueConformance(() => ({ store, clock }), factory);
    describeClaimConformance(() => ({ store, clock }));
    describeOutcomeConformance(() => ({ store, clock }));
    describeFencingConformance(() => ({ store, clock }));
    describeAdminConformance(() => ({ store, clock }));
    describeHistoryConformance(() => ({ store, clock }));
    describeThroughputConformance(() => ({ store, clock }));
    describeReadConformance(() => ({ store, clock }));

    describeLimitsConformance(() => ({ store, clock }));
    describeControlConformance(() => ({ store, clock }));
    describeAlertConformance(() => ({ store, clock }));
    describeRescueConformance(() => ({ store, clock }));
    describeReleaseConformance(() => ({ store, clock }));
    describeQueueConformance(() => ({ store, clock }));
    describeFlowConformance(() => ({ store, clock }), factory);
    describeDurableConformance(() => ({ store, clock }), factory);
    describeDurableInterplayConformance(() => ({ store, clock }));
    describeKeysConformance(() => ({ store, clock }), factory);

    describeSubscribeConformance(() => ({ store, clock }));
  });
}

// What the topic files share: constants, history rows for exact comparison, and helpers bound
// to the current test's store and clock (`conformanceKit`). Each helper checks what it relies
// on, so a test reads as the steps it takes.

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

  function outcome(state: OutcomeState, of: Lease, delayMs = 5_000): JobOutcome {
    switch (state) {
      case 'completed':
        return { ...of, state, result: { photos: 20 } };
      case 'retrying':
        return { ...of, state, error: BOOM, delayMs };
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
  async function jobIn(state: Exclude<JobState, 'waiting' | 'sleeping'>, job: Partial<EnqueueJob> = {}): Promise<JobRecord> {
    const created = await enqueue(job);
    if (state === 'pending') return getJob(created.id);
    const claimed = await claimOne(created.queue);
    expect(claimed.id).toBe(created.id);
    if (state !== 'running') expect(await setState(outcome(state, lease(claimed)))).toBe(true);
    return getJob(created.id);
  }

  return { store, clock, now, enqueue, enqueueOne, claim, claimOne, getJob, history, outcome, setState, write, jobIn };
}
