/**
 * The property: whatever the interleaving of enqueues (with keys and expiresAt), handler
 * outcomes (value, failure, permanent, skip, snooze), cancels, clock jumps, reaper passes,
 * pauses and crashes across several workers on one store, their calls concurrent,
 *
 * - no write (renewal, outcome) applies once its lease is proven over, at most one outcome
 *   applies per lease, a refused one met a lease that was over, claims take a job at its next
 *   attempt and only once its last lease is over (LeaseObserver);
 * - attempts never decrease nor pass maxAttempts, and a final row stays as it is;
 * - jobs sharing a concurrency key never run beyond the limit at once; no window of the rate
 *   limit holds more claims than it allows;
 * - no job is completed twice;
 * - no job is lost: once the survivors run on, every job ends completed, dead, skipped or
 *   cancelled;
 * - every worker's counters agree with what the store answered it, and together with the rows.
 *
 * Between steps the cluster waits for every store call to be answered, except inside a
 * `together` step, whose calls overlap: each run ends with one (`racingZombie`).
 */
import fc from 'fast-check';
import type { JobState } from '../../src/types.js';
import type { TestStoreName } from '../support/test-stores.js';
import { type Action, Cluster, LEASE_MS, type Outcome, PER_KEY, QUEUE, RATE, type StoreFactory } from './cluster.js';

const WORKERS = 3;

/** Runs per CI run and store. One run catches a store that ignores lease tokens with
 *  probability 0.972 (measure-power.ts, test/README.md): 6 runs miss it with odds below 1e-9. */
export const PROPERTY_RUNS: Record<TestStoreName, number> = { memory: 40, pglite: 6, postgres: 8 };

const outcome: fc.Arbitrary<Outcome> = fc.constantFrom('ok', 'ok', 'ok', 'fail', 'fail', 'permanent', 'skip', 'snooze');

const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('enqueue'),
      count: fc.integer({ min: 1, max: 3 }),
      key: fc.option(fc.nat(1), { nil: null }),
      expiresInMs: fc.option(fc.integer({ min: 500, max: 8_000 }), { nil: null, freq: 3 }),
    }),
  },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('finish'), pick: fc.nat(9), outcome }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel'), pick: fc.nat(9), worker: fc.nat(WORKERS - 1) }) },
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
    outcome: fc.constantFrom<Outcome>('ok', 'fail', 'permanent', 'skip', 'snooze'),
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

/**
 * A zombie whose write races the rescue: as above, but time goes only just past its lease
 * (most runs, before any reaper pass), and the frozen worker wakes as worker 0's reaper runs,
 * at once: its outcome write and the rescue are in flight together (`together`), on
 * PostgreSQL on two connections, where elsewhere the cluster answers each call before the next.
 */
const racingZombie: fc.Arbitrary<Action[]> = fc
  .record({
    count: fc.integer({ min: 1, max: 3 }),
    pick: fc.nat(9),
    outcome: fc.constantFrom<Outcome>('ok', 'fail', 'permanent', 'skip', 'snooze'),
    lateMs: fc.integer({ min: LEASE_MS + 1, max: LEASE_MS + 300 }),
  })
  .map(({ count, pick, outcome, lateMs }): Action[] => [
    ...resumeAll,
    { kind: 'enqueue', count },
    { kind: 'advance', ms: 600 },
    { kind: 'freeze', pick, outcome },
    ...Array.from({ length: 2 * WORKERS }, (): Action => ({ kind: 'finish', pick: 0, outcome: 'ok' })),
    { kind: 'advance', ms: lateMs },
    { kind: 'together', actions: [...resumeAll, { kind: 'reap', worker: 0 }] },
  ]);

/** Random steps only, no zombie chain forced: what the power of `actions` is measured against. */
export const steps = fc
  .array(fc.oneof({ weight: 9, arbitrary: action.map((a) => [a]) }, { weight: 1, arbitrary: zombie }), { maxLength: 15 })
  .map((chunks) => chunks.flat());

/** Random steps around one zombie at least, and one whose write races a rescue. */
export const actions: fc.Arbitrary<Action[]> = fc
  .tuple(steps, zombie, steps, racingZombie)
  .map(([before, chain, after, race]) => [...before, ...chain, ...after, ...race]);

/** `observed`: told, at the end of a run that held, how many times an outcome write and a
 *  rescue were in flight at once. */
export async function checkCluster(createStore: StoreFactory, run: readonly Action[], observed?: (overlaps: number) => void): Promise<void> {
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
    observed?.(cluster.observer.overlaps);
  } finally {
    // Only simulated timers: a cluster left running on a failure holds nothing open.
    await cluster.store.close();
  }
}

async function expectSound(cluster: Cluster, seen: Map<string, { attempt: number; state: JobState }>, at: string) {
  cluster.observer.expectClaimsExplained();
  if (cluster.observer.violations.length > 0) fail(at, cluster.observer.violations.join('; '));
  const rows = await cluster.store.listJobs({ queue: QUEUE, limit: 10_000 });
  const runningByKey = new Map<string, number>();
  for (const row of rows) {
    if (row.state === 'running' && row.concurrencyKey !== null) runningByKey.set(row.concurrencyKey, (runningByKey.get(row.concurrencyKey) ?? 0) + 1);
  }
  for (const [key, n] of runningByKey) if (n > PER_KEY) fail(at, `${n} jobs of key ${key} run at once (limit ${PER_KEY})`);
  for (const row of rows) {
    const before = seen.get(row.id);
    if (before && row.attempt < before.attempt) fail(at, `job ${row.id}'s attempt went from ${before.attempt} to ${row.attempt}`);
    // A snooze or a release raises maxAttempts with the attempt it spends none of.
    if (row.attempt > row.maxAttempts) fail(at, `job ${row.id} is at attempt ${row.attempt} of ${row.maxAttempts}`);
    if (before && isFinal(before.state) && row.state !== before.state) fail(at, `job ${row.id} went from ${before.state} to ${row.state}`);
    seen.set(row.id, { attempt: row.attempt, state: row.state });
  }
}

async function expectEnd(cluster: Cluster) {
  cluster.observer.expectRefusalsExplained();
  if (cluster.observer.violations.length > 0) fail('at the end', cluster.observer.violations.join('; '));
  const rows = await cluster.store.listJobs({ queue: QUEUE, limit: 10_000 });
  const stuck = rows.filter((r) => !isFinal(r.state));
  if (stuck.length > 0) fail('at the end', `jobs lost: ${stuck.map((r) => `${r.id} ${r.state}`).join(', ')}`);
  let rescuedDead = 0;
  const claims: number[] = [];
  for (const row of rows) {
    const events = await cluster.store.getJobEvents({ id: row.id });
    const completions = events.filter((e) => e.toState === 'completed').length;
    if (completions > 1) fail('at the end', `job ${row.id} was completed ${completions} times`);
    // Dead by the reaper: a lapsed lease, or a wait past expiresAt.
    rescuedDead += events.filter((e) => e.toState === 'dead' && (e.error?.code === 'lease_expired' || (e.error?.code === 'expired' && e.fromState !== 'running'))).length;
    claims.push(...events.filter((e) => e.toState === 'running').map((e) => e.at.getTime()));
    if (row.state === 'completed' && (row.result as { attempt: number }).attempt !== row.attempt) {
      fail('at the end', `job ${row.id} holds the result of attempt ${(row.result as { attempt: number }).attempt}, not of ${row.attempt}`);
    }
  }

  claims.sort((a, b) => a - b);
  claims.forEach((at, i) => {
    const inWindow = claims.slice(0, i + 1).filter((t) => t > at - RATE.intervalMs).length;
    if (inWindow > RATE.max) fail('at the end', `${inWindow} claims in the ${RATE.intervalMs} ms up to ${new Date(at).toISOString()} (limit ${RATE.max})`);
  });

  const total = { completed: 0, dead: 0, skipped: 0, cancelled: 0 };
  cluster.workers.forEach((w, i) => {
    const counters = w.supervisor.counters.getSnapshot().context.queues[QUEUE]!;
    const tally = cluster.observer.tallies[i]!;
    const told = {
      claimed: tally.claimed, rescued: tally.rescued, completed: tally.applied.completed, retrying: tally.applied.retrying,
      snoozed: tally.applied.snoozed, dead: tally.applied.dead, skipped: tally.applied.skipped, cancelled: tally.applied.cancelled,
    };
    const counted = {
      claimed: counters.claimed, rescued: counters.rescued, completed: counters.completed, retrying: counters.retrying,
      snoozed: counters.snoozed, dead: counters.dead, skipped: counters.skipped, cancelled: counters.cancelled,
    };
    if (JSON.stringify(counted) !== JSON.stringify(told)) {
      fail('at the end', `worker ${i} counted ${JSON.stringify(counted)}, the store told it ${JSON.stringify(told)}`);
    }
    const ended = counters.completed + counters.retrying + counters.snoozed + counters.dead + counters.skipped + counters.cancelled + counters.lost;
    if (counters.claimed !== ended + counters.running) fail('at the end', `worker ${i}'s counters do not add up: ${JSON.stringify(counters)}`);
    if (w.status === 'up' && counters.running !== 0) fail('at the end', `worker ${i} stopped with ${counters.running} running`);
    total.completed += counters.completed;
    total.dead += counters.dead;
    total.skipped += counters.skipped;
    total.cancelled += counters.cancelled;
  });
  const byState = (state: JobState) => rows.filter((r) => r.state === state).length;
  // Cancels of waiting jobs and the reaper's are the store's own: the workers count theirs.
  if (
    total.completed !== byState('completed') || total.dead + rescuedDead !== byState('dead')
    || total.skipped !== byState('skipped') || total.cancelled > byState('cancelled')
  ) {
    fail(
      'at the end',
      `counters say ${total.completed} completed, ${total.dead} + ${rescuedDead} rescued dead, ${total.skipped} skipped, ${total.cancelled} cancelled; `
        + `rows say ${byState('completed')}, ${byState('dead')}, ${byState('skipped')}, ${byState('cancelled')}`,
    );
  }
}

function isFinal(state: JobState): boolean {
  return state === 'completed' || state === 'dead' || state === 'skipped' || state === 'cancelled';
}

function fail(at: string, message: string): never {
  throw new Error(`${at}: ${message}`);
}
