/**
 * Concurrency keys and rate limits with several claimers at once on the Postgres server: four
 * stores, each on its own pool, claim from one schema as four worker processes would. They go
 * in rounds: in each, all four claim at once while the jobs whose turn is over complete, each
 * call on its own connection (the statements do overlap on the server); then the next round.
 * What each claimer holds is tallied as it goes, and the measured maximum must reach the limit
 * (the claimers did contend) and never pass it. Time is the stores' injected clock, which
 * moves only between rounds: how long a job runs is a number of rounds, and the rate limit's
 * window is measured on that clock, not on the machine's.
 */
import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { postgresStore } from '../../../src/adapters/postgres/index.js';
import { CLAIM_JOBS } from '../../../src/adapters/sql/queries/claim-jobs.js';
import { sqlSchema } from '../../../src/adapters/sql/sql-schema.js';
import { buildStatement } from '../../../src/adapters/sql/statement.js';
import type { SqlJobStore } from '../../../src/adapters/sql/sql-store.js';
import type { ClaimQueue, EnqueueJob } from '../../../src/adapters/store.js';
import type { ClaimedJob } from '../../../src/types.js';
import { describePostgres, dropSchema, freshSchema, testPool } from '../../support/postgres.js';
import { createTestClock } from '../../support/sim.js';

/** A sequential scan of the jobs table in a JSON plan. (The queue table, one row per queue,
 *  may be read whole: the planner's choice for a table that small.) */
const SCANS_JOBS = /"Node Type":"Seq Scan"[^{}]*"Relation Name":"jobs"/;

const CLAIMERS = 4;
/** Rounds a test may take before it is judged stuck. */
const MAX_ROUNDS = 2_000;

describePostgres('concurrency keys and rate limits across workers', (url) => {
  const schema = freshSchema('jv_limits');
  const pools: pg.Pool[] = [];
  const stores: SqlJobStore[] = [];
  const clock = createTestClock();

  beforeAll(async () => {
    for (let i = 0; i < CLAIMERS; i++) {
      const pool = testPool(url, { max: 3 });
      pools.push(pool);
      stores.push(postgresStore({ pool, schema, clock }));
    }
    await stores[0]!.migrate();
  });

  afterAll(async () => {
    for (const store of stores) await store.close();
    await dropSchema(pools[0]!, schema);
    for (const pool of pools) await pool.end();
  });

  async function enqueue(jobs: EnqueueJob[]): Promise<void> {
    await stores[0]!.enqueueJobs({ jobs });
  }

  /** Rounds until `done()`: every claimer claims, and every job whose last round has come
   *  completes, all at once; then the clock moves `stepMs`. A job claimed in round r runs
   *  `rounds(job)` rounds. `onStart` and `onEnd` see each job while the store has it running. */
  async function claimInRounds(
    entry: ClaimQueue,
    done: () => boolean,
    hooks: { rounds: (job: ClaimedJob) => number; stepMs?: number; onStart?: (job: ClaimedJob) => void; onEnd?: (job: ClaimedJob) => void },
  ): Promise<void> {
    let held: Array<{ job: ClaimedJob; store: SqlJobStore; lastRound: number }> = [];
    const complete = async ({ job, store }: { job: ClaimedJob; store: SqlJobStore }) => {
      hooks.onEnd?.(job);
      const applied = await store.setStatesIfRunning({ outcomes: [{ id: job.id, leaseToken: job.leaseToken, state: 'completed', result: null }] });
      expect(applied).toEqual([true]);
    };
    for (let round = 0; !done(); round++) {
      if (round === MAX_ROUNDS) throw new Error(`not done after ${MAX_ROUNDS} rounds`);
      const ending = held.filter((h) => h.lastRound < round);
      held = held.filter((h) => h.lastRound >= round);
      const [claims] = await Promise.all([
        Promise.all(stores.map((store, i) => store.claimJobs({ workerId: `w${i}`, leaseMs: 60_000, queues: [entry] }))),
        Promise.all(ending.map(complete)),
      ]);
      claims.forEach((jobs, i) => {
        for (const job of jobs) {
          hooks.onStart?.(job);
          held.push({ job, store: stores[i]!, lastRound: round + hooks.rounds(job) - 1 });
        }
      });
      clock.increment(hooks.stepMs ?? 0);
    }
    await Promise.all(held.map(complete));
  }

  it.each([1, 3])('never runs more than %i jobs of one key at once, with four claimers at once', async (perKeyLimit) => {
    const queue = `keys-${perKeyLimit}`;
    const keys = ['k1', 'k2', 'k3', 'k4', 'k5'];
    const jobs: EnqueueJob[] = Array.from({ length: 300 }, (_, i) => ({
      queue, kind: 'k', payload: {}, maxAttempts: 1, concurrencyKey: i % 6 === 5 ? null : keys[(i * 7) % keys.length]!,
    }));
    await enqueue(jobs);
    const running = new Map<string, number>();
    const measured = new Map<string, number>();
    let unkeyedAtOnce = 0;
    let unkeyed = 0;
    let completed = 0;
    await claimInRounds({ queue, limit: 6, perKeyLimit }, () => completed === jobs.length, {
      rounds: (job) => 1 + (Number(job.id) % 3),
      onStart: (job) => {
        const key = job.concurrencyKey ?? '';
        running.set(key, (running.get(key) ?? 0) + 1);
        if (job.concurrencyKey === null) unkeyedAtOnce = Math.max(unkeyedAtOnce, ++unkeyed);
        else measured.set(key, Math.max(measured.get(key) ?? 0, running.get(key)!));
      },
      onEnd: (job) => {
        running.set(job.concurrencyKey ?? '', running.get(job.concurrencyKey ?? '')! - 1);
        if (job.concurrencyKey === null) unkeyed -= 1;
        completed += 1;
      },
    });
    expect([...measured.keys()].sort()).toEqual(keys);
    expect(Math.max(...measured.values())).toBe(perKeyLimit);
    expect(unkeyedAtOnce).toBeGreaterThan(perKeyLimit);
    const counts = await stores[0]!.countJobs();
    expect(counts.filter((c) => c.queue === queue)).toEqual([{ queue, state: 'completed', count: jobs.length }]);
  });

  it('starts at most max jobs of a rate-limited queue in any interval, with four claimers at once', async () => {
    const queue = 'rated';
    const rateLimit = { max: 10, intervalMs: 200 };
    await enqueue(Array.from({ length: 400 }, () => ({ queue, kind: 'k', payload: {}, maxAttempts: 1 })));
    // 40 rounds, 20 ms apart: four windows' worth.
    const end = clock.now() + 40 * 20;
    await claimInRounds({ queue, limit: 4, rateLimit }, () => clock.now() >= end, { rounds: () => 1, stepMs: 20 });
    // Claim times as the store recorded them, in the history and in the window log alike.
    const { rows } = await pools[0]!.query<{ at: Date }>(
      `select e.at from "${schema}".job_events e join "${schema}".jobs j on j.id = e.job_id
       where j.queue = $1 and e.to_state = 'running' order by e.at`,
      [queue],
    );
    const starts = rows.map((row) => row.at.getTime());
    // The fullest window is one that ends at a start.
    const fullest = Math.max(...starts.map((end) => starts.filter((at) => at > end - rateLimit.intervalMs && at <= end).length));
    expect(fullest).toBe(rateLimit.max);
    const spanMs = starts.at(-1)! - starts[0]!;
    expect(starts.length).toBeLessThanOrEqual(rateLimit.max * (Math.floor(spanMs / rateLimit.intervalMs) + 1));
    // Each round one claimer at least takes the queue's rate lock, and claims what the window has left.
    expect(starts.length).toBeGreaterThanOrEqual(rateLimit.max * 3);
  });

  it('plans the claim with no scan, and under jit_above_cost as a generic plan with 20,000 pending', async () => {
    for (let i = 0; i < 20_000; i += 5_000) {
      await enqueue(
        Array.from({ length: 5_000 }, (_, n) => ({ queue: 'plan', kind: 'k', payload: {}, maxAttempts: 1, concurrencyKey: n % 10 ? null : `c${n % 50}` })),
      );
    }
    await pools[0]!.query(`vacuum analyze "${schema}".jobs`);
    const claim = buildStatement(CLAIM_JOBS, sqlSchema(schema));
    const input = JSON.stringify([{ queue: 'plan', lim: 10, key_limit: 1, rate_max: null, rate_ms: null }]);
    // The plan a named statement settles on after five runs. Past jit_above_cost the server
    // JIT-compiles every claim, tens of ms each: a per-row subquery in the scan's filter did.
    const client = await pools[0]!.connect();
    try {
      await client.query('set plan_cache_mode = force_generic_plan');
      await client.query(`prepare claim_plan (timestamptz, jsonb, text, float8) as ${claim.text}`);
      const { rows } = await client.query(`explain (format json) execute claim_plan(null, '${input}', 'w', 1000)`);
      const plan = JSON.stringify(rows[0]['QUERY PLAN']);
      expect(plan).toContain('jobs_claim_idx');
      expect(plan).toContain('jobs_running_key_idx');
      expect(plan).not.toMatch(SCANS_JOBS);
      const jitAboveCost = Number((await client.query('show jit_above_cost')).rows[0].jit_above_cost);
      expect(rows[0]['QUERY PLAN'][0].Plan['Total Cost']).toBeLessThan(jitAboveCost);
    } finally {
      // Only our own statement: the pool's client keeps its prepared ones for the other tests.
      await client.query('deallocate claim_plan; reset plan_cache_mode');
      client.release();
    }
  });
});
