/**
 * Stands between several workers and one store, and checks every fenced operation against a
 * model of the leases: which token holds each running job, until when, and its attempt.
 *
 * - Calls reach the store one at a time, in the order made, so the model's prediction is made
 *   against exactly the state the store will see (each store operation is atomic anyway).
 * - A renewal or an outcome applies if and only if its token is the job's current one.
 * - A claim takes only jobs nobody holds, each at its last attempt plus one.
 * - The reaper rescues exactly the running jobs whose lease ran out.
 *
 * What it finds is kept in `violations`, not thrown: the caller checks it after each step,
 * so that a failing store fails the property, not some worker's promise.
 */
import type { JobOutcome, JobStore } from '../../src/adapters/store.js';
import type { ClaimedJob, Clock } from '../../src/types.js';

interface Held {
  token: string;
  expiresAt: number;
}

/** What one worker's calls did, as the store answered them. */
export interface WorkerTally {
  claimed: number;
  rescued: number;
  /** By the row state each outcome left (a release: retrying). */
  applied: Record<Exclude<JobOutcome['state'], 'released'>, number>;
  refused: number;
}

export class LeaseObserver {
  readonly violations: string[] = [];
  readonly tallies: WorkerTally[] = [];
  readonly #store: JobStore;
  readonly #clock: Clock;
  readonly #held = new Map<string, Held>();
  readonly #attempts = new Map<string, number>();
  #queue: Promise<unknown> = Promise.resolve();
  #inFlight = 0;

  constructor(store: JobStore, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
  }

  /** No call is waiting for the store or inside it. */
  get idle(): boolean {
    return this.#inFlight === 0;
  }

  /** The store as worker `index` sees it: every call observed and tallied for it. */
  for(index: number): JobStore {
    const tally: WorkerTally = {
      claimed: 0, rescued: 0, refused: 0, applied: { completed: 0, retrying: 0, snoozed: 0, dead: 0, skipped: 0, cancelled: 0, waiting: 0 },
    };
    this.tallies[index] = tally;
    const observed: Partial<JobStore> = {
      claimJobs: (params) => this.#serial(async () => this.#claimed(tally, await this.#store.claimJobs(params), params.leaseMs)),
      renewLeases: (params) =>
        this.#serial(async () => {
          const expected = params.leases.map((l) => this.#held.get(l.id)?.token === l.leaseToken);
          const answers = await this.#store.renewLeases(params);
          const applied = answers.map((answer) => answer !== 'lost');
          this.#compare('a renewal', params.leases, expected, applied);
          params.leases.forEach((l, i) => {
            if (applied[i]) this.#held.get(l.id)!.expiresAt = this.#clock.now() + params.leaseMs;
          });
          return answers;
        }),
      setStatesIfRunning: (params) =>
        this.#serial(async () => {
          const current = new Map([...this.#held].map(([id, h]) => [id, h.token]));
          // In order, as the store applies them: the first outcome for a job ends its lease.
          const expected = params.outcomes.map((o) => current.get(o.id) === o.leaseToken && current.delete(o.id));
          const answers = await this.#store.setStatesIfRunning(params);
          this.#compare('an outcome', params.outcomes, expected, answers);
          params.outcomes.forEach((o, i) => {
            if (!answers[i]) {
              tally.refused += 1;
              return;
            }
            // A release leaves the row retrying, as the supervisor's counters count it.
            tally.applied[o.state === 'released' ? 'retrying' : o.state] += 1;
            this.#held.delete(o.id);
          });
          return answers;
        }),
      rescueExpiredJobs: () =>
        this.#serial(async () => {
          const now = this.#clock.now();
          const expected = [...this.#held].filter(([, h]) => h.expiresAt < now).map(([id]) => id).sort();
          const rescued = await this.#store.rescueExpiredJobs();
          const ids = rescued.map((j) => j.id).sort();
          if (ids.join() !== expected.join()) this.violations.push(`the reaper rescued [${ids}], expired were [${expected}]`);
          for (const id of ids) this.#held.delete(id);
          tally.rescued += rescued.length;
          return rescued;
        }),
    };
    return new Proxy(this.#store, {
      get: (store, key) => {
        const own = observed[key as keyof JobStore];
        if (own) return own;
        const value = Reflect.get(store, key);
        return typeof value === 'function' ? (...args: unknown[]) => this.#serial(() => value.apply(store, args)) : value;
      },
    });
  }

  #claimed(tally: WorkerTally, jobs: ClaimedJob[], leaseMs: number): ClaimedJob[] {
    tally.claimed += jobs.length;
    for (const job of jobs) {
      if (this.#held.has(job.id)) this.violations.push(`job ${job.id} was claimed while its lease was held`);
      const last = this.#attempts.get(job.id) ?? 0;
      if (job.attempt !== last + 1) this.violations.push(`job ${job.id} was claimed at attempt ${job.attempt} after ${last}`);
      this.#attempts.set(job.id, job.attempt);
      this.#held.set(job.id, { token: job.leaseToken, expiresAt: this.#clock.now() + leaseMs });
    }
    return jobs;
  }

  #compare(what: string, requests: readonly { id: string; leaseToken: string }[], expected: boolean[], answers: boolean[]): void {
    requests.forEach((r, i) => {
      if (answers[i] === expected[i]) return;
      this.violations.push(
        expected[i]
          ? `${what} under job ${r.id}'s current lease was refused`
          : `${what} without job ${r.id}'s current lease applied (token ${r.leaseToken})`,
      );
    });
  }

  #serial<T>(call: () => Promise<T>): Promise<T> {
    this.#inFlight += 1;
    const result = this.#queue.then(call).finally(() => {
      this.#inFlight -= 1;
    });
    this.#queue = result.catch(() => {});
    return result;
  }
}
