/**
 * Property-based tests (fast-check) of flows on every store of test/support/test-stores.ts:
 * random acyclic flows with random failure policies, run by two workers whose claims and
 * outcomes interleave at random, batched or sent at the same moment (on Postgres, on two
 * connections), with workers that crash (their leases lapse and the reaper gives the jobs
 * back) and flows cancelled half way. What must hold:
 *
 * - a job is never claimed before every parent has ended, and each parent that did not
 *   complete allows it (`onFailure: 'run'`);
 * - a waiting job leaves `waiting` exactly once (released, or ended by a parent's failure);
 * - at the end, nothing is lost: every job has ended, each as its parents decided: run if
 *   they allowed it, else cancelled or dead by its policy; a cancelled flow ran nothing more.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import type { FlowJob, JobOutcome, JobStore, OnDependencyFailure } from '../../src/adapters/store.js';
import { FINAL_JOB_STATES, type ClaimedJob, type JobState } from '../../src/types.js';
import { createTestClock } from '../adapters/conformance.js';
import { describeEachStore, type TestStoreName } from '../support/test-stores.js';

const RUNS: Record<TestStoreName, number> = { memory: 60, pglite: 8, postgres: 12 };
const LEASE_MS = 10_000;
const WORKERS = ['w1', 'w2'] as const;

interface FlowShape {
  /** Per job, its parents (earlier jobs: acyclic) with their policies. */
  parents: Array<Array<{ parent: number; onFailure: OnDependencyFailure }>>;
}

type Step =
  | { kind: 'claim'; worker: 0 | 1; limit: number }
  | { kind: 'end'; worker: 0 | 1; outcome: 'completed' | 'dead' | 'skipped' | 'retrying'; all: boolean }
  | { kind: 'race' }
  | { kind: 'crash'; worker: 0 | 1 }
  | { kind: 'cancelFlow' };

const shape: fc.Arbitrary<FlowShape> = fc.integer({ min: 2, max: 7 }).chain((n) =>
  fc
    .tuple(
      ...Array.from({ length: n }, (_, i) =>
        fc.subarray(Array.from({ length: i }, (_, p) => p)).chain((ps) =>
          fc.tuple(...ps.map((parent) => fc.constantFrom<OnDependencyFailure>('cancel', 'run', 'die').map((onFailure) => ({ parent, onFailure })))),
        ),
      ),
    )
    .map((parents) => ({ parents: parents as FlowShape['parents'] })),
);

const worker = fc.constantFrom<0 | 1>(0, 1);
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('claim' as const), worker, limit: fc.integer({ min: 1, max: 3 }) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('end' as const),
      worker,
      outcome: fc.constantFrom('completed', 'completed', 'completed', 'dead', 'skipped', 'retrying'),
      all: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: 'race' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('crash' as const), worker }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'cancelFlow' as const }) },
);

async function checkFlow(store: JobStore, clock: ReturnType<typeof createTestClock>, flow: FlowShape, steps: Step[]): Promise<void> {
  const jobs: FlowJob[] = flow.parents.map((parents, i) => ({
    queue: 'q', kind: 'k', payload: { i }, maxAttempts: 2, node: `n${i}`,
    dependsOn: parents.map(({ parent, onFailure }) => ({ index: parent, name: `n${parent}`, onFailure })),
  }));
  const { flowId, jobs: stored } = await store.enqueueFlow({ name: 'property', jobs });
  const index = new Map(stored.map((job, i) => [job.id, i]));
  const held: ClaimedJob[][] = [[], []];
  let cancelledAt: number | null = null;
  const claimedAfterCancel: string[] = [];

  const claim = async (w: 0 | 1, limit: number) => {
    const claimed = await store.claimJobs({ workerId: WORKERS[w], leaseMs: LEASE_MS, queues: [{ queue: 'q', limit }] });
    for (const job of claimed) {
      // Never before every parent ended, each allowing it.
      const states = await Promise.all(flow.parents[index.get(job.id)!]!.map(async ({ parent, onFailure }) => {
        const row = (await store.getJob({ id: stored[parent]!.id }))!;
        return { state: row.state, onFailure };
      }));
      for (const { state, onFailure } of states) {
        expect(FINAL_JOB_STATES, `job ${job.id} claimed while a parent is ${state}`).toContain(state);
        if (state !== 'completed') expect(onFailure, `job ${job.id} claimed after a parent ended ${state}`).toBe('run');
      }
      if (cancelledAt !== null) claimedAfterCancel.push(job.id);
    }
    held[w]!.push(...claimed);
  };
  const outcomeFor = (job: ClaimedJob, state: 'completed' | 'dead' | 'skipped' | 'retrying'): JobOutcome => {
    const lease = { id: job.id, leaseToken: job.leaseToken };
    if (state === 'completed') return { ...lease, state, result: { i: index.get(job.id) } };
    if (state === 'retrying') return { ...lease, state, error: { code: 'handler_error', message: 'boom' }, delayMs: 0 };
    return { ...lease, state, error: { code: state === 'dead' ? 'permanent_error' : 'skipped', message: state } };
  };
  const end = async (w: 0 | 1, state: 'completed' | 'dead' | 'skipped' | 'retrying', all: boolean) => {
    const taken = all ? held[w]!.splice(0) : held[w]!.splice(0, 1);
    if (taken.length > 0) await store.setStatesIfRunning({ outcomes: taken.map((job) => outcomeFor(job, state)) });
  };

  for (const s of steps) {
    switch (s.kind) {
      case 'claim':
        await claim(s.worker, s.limit);
        break;
      case 'end':
        await end(s.worker, s.outcome, s.all);
        break;
      case 'race':
        // Both workers end what they hold at the same moment: parents of one child, on two
        // connections on Postgres.
        await Promise.all([end(0, 'completed', true), end(1, 'completed', true)]);
        break;
      case 'crash':
        // The worker is gone: its leases lapse, the reaper gives its jobs back.
        held[s.worker] = [];
        clock.advance(LEASE_MS + 1);
        while ((await store.rescueExpiredJobs({})).length > 0);
        break;
      case 'cancelFlow':
        if (cancelledAt === null) {
          cancelledAt = clock.now();
          await store.cancelFlow({ id: flowId });
        }
        break;
    }
  }
  // Finish: both workers complete whatever they can until nothing is left to claim.
  for (let round = 0; round < 50; round++) {
    await end(0, 'completed', true);
    await end(1, 'completed', true);
    await claim(0, 10);
    if (held[0]!.length === 0) break;
  }

  const rows = await Promise.all(stored.map(async (job) => (await store.getJob({ id: job.id }))!));
  for (const [i, row] of rows.entries()) {
    expect(FINAL_JOB_STATES, `n${i} ended (${row.state})`).toContain(row.state);
    const events = await store.getJobEvents({ id: row.id });
    expect(events.filter((e) => e.fromState === 'waiting').length, `n${i} left waiting once`).toBe(flow.parents[i]!.length > 0 ? 1 : 0);
    if (cancelledAt !== null) continue;
    // As its parents decided (an ended job was claimed only if they allowed it: checked above).
    const parentStates = flow.parents[i]!.map(({ parent, onFailure }) => ({ state: rows[parent]!.state as JobState, onFailure }));
    const blocker = parentStates.find(({ state, onFailure }) => state !== 'completed' && onFailure !== 'run');
    const ran = events.some((e) => e.toState === 'running');
    if (blocker) {
      expect(ran, `n${i} did not run`).toBe(false);
      expect(['cancelled', 'dead']).toContain(row.state);
    } else {
      expect(ran, `n${i} ran: its parents allowed it`).toBe(true);
    }
  }
  // A cancelled flow starts nothing more.
  expect(claimedAfterCancel, 'claimed after the flow was cancelled').toEqual([]);
}

describeEachStore('flows under any interleaving of two workers', (testStore) => {
  it(`hold the flow properties in ${RUNS[testStore.name]} runs`, async () => {
    await fc.assert(
      fc.asyncProperty(shape, fc.array(step, { minLength: 5, maxLength: 40 }), async (flow, steps) => {
        await testStore.reset();
        const clock = createTestClock(Date.parse('2030-01-01T00:00:00Z'));
        const store = await testStore.create(clock, { notifyDebounceMs: 0 });
        try {
          await checkFlow(store, clock, flow, steps);
        } finally {
          await store.close();
        }
      }),
      { numRuns: RUNS[testStore.name] },
    );
  }, 300_000);
});
