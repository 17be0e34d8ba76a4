/**
 * The property: whatever the interleaving of enqueues, handler outcomes, clock jumps, reaper
 * passes, pauses and crashes across several workers on one store,
 *
 * - every write (renewal, outcome) applies if and only if it holds the job's current lease,
 *   claims take only free jobs at their next attempt, the reaper rescues exactly the expired
 *   (checked call by call: LeaseObserver);
 * - attempts never decrease, and a final row stays as it is;
 * - no job is completed twice;
 * - no job is lost: once the survivors run on, every job ends completed or dead;
 * - every worker's counters agree with what the store answered it, and together with the rows.
 */
import fc from 'fast-check';
import type { JobState } from '../../src/types.js';
import { type Action, Cluster, LEASE_MS, QUEUE, type StoreFactory } from './cluster.js';

const WORKERS = 3;

const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('enqueue'), count: fc.integer({ min: 1, max: 3 }) }) },
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant('finish'), pick: fc.nat(9), outcome: fc.constantFrom('ok', 'ok', 'fail', 'permanent') }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('advance'), ms: fc.integer({ min: 100, max: 4_000 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reap'), worker: fc.nat(WORKERS - 1) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('pause'), worker: fc.nat(WORKERS - 1) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('resume'), worker: fc.nat(WORKERS - 1) }) },
  // Worker 0 never dies: someone must be left to run the jobs.
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('crash'), worker: fc.integer({ min: 1, max: WORKERS - 1 }) }) },
);

/**
 * A zombie, on purpose: a worker is frozen just as one of its handlers returns (its outcome
 * write waits in the frozen process), time passes its lease (the other workers' reaper passes
 * rescue the job and their polls claim it again), and every worker wakes up: the frozen one
 * sends its write. Random single actions rarely line these up (a store that ignores the lease
 * token was caught in 1 run of 300); every run has one such chain at least, so it is caught in
 * about 98% of runs (test/README.md), which the SQL stores, with only a few runs each, need.
 */
const resumeAll: Action[] = Array.from({ length: WORKERS }, (_, worker) => ({ kind: 'resume', worker }));
const zombie: fc.Arbitrary<Action[]> = fc
  .record({
    count: fc.integer({ min: 1, max: 3 }),
    pick: fc.nat(9),
    outcome: fc.constantFrom('ok', 'fail', 'permanent'),
    // Past the lease, a reaper pass (every 2 s) and a poll (every 0.5 s) after it.
    lateMs: fc.integer({ min: LEASE_MS + 2_600, max: 2 * LEASE_MS + 2_600 }),
  })
  .map(({ count, pick, outcome, lateMs }): Action[] => [
    // Workers awake to claim new work (and, later, to rescue and claim it again).
    ...resumeAll,
    { kind: 'enqueue', count },
    { kind: 'advance', ms: 600 },
    { kind: 'freeze', pick, outcome },
    // Handlers in flight finish, so the workers awake have a slot for the rescued job.
    ...Array.from({ length: 2 * WORKERS }, (): Action => ({ kind: 'finish', pick: 0, outcome: 'ok' })),
    { kind: 'advance', ms: lateMs },
    ...resumeAll,
  ]);

const steps = fc
  .array(fc.oneof({ weight: 9, arbitrary: action.map((a) => [a]) }, { weight: 1, arbitrary: zombie }), { maxLength: 15 })
  .map((chunks) => chunks.flat());

/** Random steps around one zombie at least. */
export const actions: fc.Arbitrary<Action[]> = fc
  .tuple(steps, zombie, steps)
  .map(([before, chain, after]) => [...before, ...chain, ...after]);

export async function checkCluster(createStore: StoreFactory, run: readonly Action[]): Promise<void> {
  const cluster = await Cluster.start(createStore, WORKERS);
  try {
    const seen = new Map<string, { attempt: number; state: JobState }>();
    for (const [i, step] of run.entries()) {
      await cluster.run(step);
      await expectSound(cluster, seen, `after step ${i} (${JSON.stringify(step)})`);
    }
    await cluster.recover();
    await expectSound(cluster, seen, 'after recovery');
    await cluster.stop();
    await expectEnd(cluster);
  } finally {
    // Only simulated timers: a cluster left running on a failure holds nothing open.
    await cluster.store.close();
  }
}

async function expectSound(cluster: Cluster, seen: Map<string, { attempt: number; state: JobState }>, at: string) {
  if (cluster.observer.violations.length > 0) fail(at, cluster.observer.violations.join('; '));
  for (const row of await cluster.store.listJobs({ queue: QUEUE, limit: 10_000 })) {
    const before = seen.get(row.id);
    if (before && row.attempt < before.attempt) fail(at, `job ${row.id}'s attempt went from ${before.attempt} to ${row.attempt}`);
    if (before && isFinal(before.state) && row.state !== before.state) fail(at, `job ${row.id} went from ${before.state} to ${row.state}`);
    seen.set(row.id, { attempt: row.attempt, state: row.state });
  }
}

async function expectEnd(cluster: Cluster) {
  const rows = await cluster.store.listJobs({ queue: QUEUE, limit: 10_000 });
  const stuck = rows.filter((r) => r.state !== 'completed' && r.state !== 'dead');
  if (stuck.length > 0) fail('at the end', `jobs lost: ${stuck.map((r) => `${r.id} ${r.state}`).join(', ')}`);
  let rescuedDead = 0;
  for (const row of rows) {
    const events = await cluster.store.getJobEvents({ id: row.id });
    const completions = events.filter((e) => e.toState === 'completed').length;
    if (completions > 1) fail('at the end', `job ${row.id} was completed ${completions} times`);
    rescuedDead += events.filter((e) => e.toState === 'dead' && e.error?.code === 'lease_expired').length;
    if (row.state === 'completed' && (row.result as { attempt: number }).attempt !== row.attempt) {
      fail('at the end', `job ${row.id} holds the result of attempt ${(row.result as { attempt: number }).attempt}, not of ${row.attempt}`);
    }
  }

  const total = { completed: 0, dead: 0 };
  cluster.workers.forEach((w, i) => {
    const counters = w.supervisor.counters.getSnapshot().context.queues[QUEUE]!;
    const tally = cluster.observer.tallies[i]!;
    const told = {
      claimed: tally.claimed, rescued: tally.rescued, completed: tally.applied.completed,
      retrying: tally.applied.retrying, dead: tally.applied.dead,
    };
    const counted = {
      claimed: counters.claimed, rescued: counters.rescued, completed: counters.completed,
      retrying: counters.retrying, dead: counters.dead,
    };
    if (JSON.stringify(counted) !== JSON.stringify(told)) {
      fail('at the end', `worker ${i} counted ${JSON.stringify(counted)}, the store told it ${JSON.stringify(told)}`);
    }
    const ended = counters.completed + counters.retrying + counters.dead + counters.skipped + counters.cancelled + counters.lost;
    if (counters.claimed !== ended + counters.running) fail('at the end', `worker ${i}'s counters do not add up: ${JSON.stringify(counters)}`);
    if (w.status === 'up' && counters.running !== 0) fail('at the end', `worker ${i} stopped with ${counters.running} running`);
    total.completed += counters.completed;
    total.dead += counters.dead;
  });
  const byState = (state: JobState) => rows.filter((r) => r.state === state).length;
  if (total.completed !== byState('completed') || total.dead + rescuedDead !== byState('dead')) {
    fail('at the end', `counters say ${total.completed} completed and ${total.dead} + ${rescuedDead} rescued dead; rows say ${byState('completed')} and ${byState('dead')}`);
  }
}

function isFinal(state: JobState): boolean {
  return state === 'completed' || state === 'dead' || state === 'skipped' || state === 'cancelled';
}

function fail(at: string, message: string): never {
  throw new Error(`${at}: ${message}`);
}
