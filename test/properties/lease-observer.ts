/**
 * Stands between several workers and one store and checks every fenced operation against
 * what the store's own answers proved about the leases. Calls go through as they are made,
 * concurrently (on Postgres, each on its own connection): nothing is serialised, so the
 * checks use only what is sure whatever the interleaving.
 *
 * A lease token is proven over once a call that ended it has answered: a claim of the job's
 * next attempt, an outcome that applied under it, the reaper's rescue of its attempt. Then:
 *
 * - a renewal or an outcome sent after its token was proven over must be refused;
 * - an outcome applies at most once per token (the first ends the lease);
 * - one refused must have met a lease that was over: by the end of the run its token is
 *   proven over by something else (`expectRefusalsExplained`);
 * - a claim takes a job at its last attempt plus one, and by the time every call has answered
 *   the previous attempt's lease is proven over (`expectClaimsExplained`).
 *
 * What it finds is kept in `violations`, not thrown: the caller checks it after each step,
 * so that a failing store fails the property, not some worker's promise.
 */
import type { JobOutcome, JobStore, Lease } from '../../src/adapters/store.js';
import type { ClaimedJob } from '../../src/types.js';

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
  /** Calls started and answered, in order: the time of the proofs below. */
  #seq = 0;
  #inFlight = 0;
  /** Rescues and outcome writes waiting for their answer now. */
  #rescuesInFlight = 0;
  #outcomesInFlight = 0;
  /** Times an outcome write and a rescue were in flight at once: the store ran them
   *  concurrently (on PostgreSQL, on two connections). */
  overlaps = 0;
  /** Per job, the token of each attempt claimed. */
  readonly #tokens = new Map<string, Map<number, string>>();
  /** When each token was proven over, and by what. */
  readonly #over = new Map<string, { at: number; by: string }>();
  readonly #appliedOutcomes = new Set<string>();
  readonly #refusals: Array<{ what: string; id: string; token: string }> = [];

  constructor(store: JobStore) {
    this.#store = store;
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
      claimJobs: (params) => this.#call(async () => this.#claimed(tally, await this.#store.claimJobs(params))),
      renewLeases: (params) =>
        this.#call(async (sentAt) => {
          const answers = await this.#store.renewLeases(params);
          params.leases.forEach((lease, i) => this.#checkWrite('a renewal', lease, sentAt, answers[i] !== 'lost'));
          return answers;
        }),
      setStatesIfRunning: (params) =>
        this.#call(async (sentAt) => {
          const answers = await this.#overlapping('outcome', () => this.#store.setStatesIfRunning(params));
          params.outcomes.forEach((outcome, i) => {
            this.#checkWrite('an outcome', outcome, sentAt, answers[i]!);
            if (!answers[i]) {
              tally.refused += 1;
              return;
            }
            if (this.#appliedOutcomes.has(outcome.leaseToken)) {
              this.violations.push(`a second outcome under job ${outcome.id}'s lease ${outcome.leaseToken} applied`);
            }
            this.#appliedOutcomes.add(outcome.leaseToken);
            this.#end(outcome.leaseToken, `its ${outcome.state} outcome`);
            // A release leaves the row retrying, as the supervisor's counters count it.
            tally.applied[outcome.state === 'released' ? 'retrying' : outcome.state] += 1;
          });
          return answers;
        }),
      rescueExpiredJobs: (params) =>
        this.#call(async () => {
          const rescued = await this.#overlapping('rescue', () => this.#store.rescueExpiredJobs(params));
          for (const job of rescued) {
            const token = this.#tokens.get(job.id)?.get(job.attempt);
            if (token) this.#end(token, 'the reaper');
          }
          tally.rescued += rescued.length;
          return rescued;
        }),
    };
    return new Proxy(this.#store, {
      get: (store, key) => {
        const own = observed[key as keyof JobStore];
        if (own) return own;
        const value = Reflect.get(store, key);
        return typeof value === 'function' ? (...args: unknown[]) => this.#call(() => value.apply(store, args)) : value;
      },
    });
  }

  /** Every refused write met a lease that was over (checked once every call has answered). */
  expectRefusalsExplained(): void {
    for (const { what, id, token } of this.#refusals) {
      const over = this.#over.get(token);
      if (!over) this.violations.push(`${what} under job ${id}'s lease ${token} was refused, and nothing ended that lease`);
    }
  }

  /** Every attempt but each job's last has its lease proven over (once every call has answered). */
  expectClaimsExplained(): void {
    for (const [id, tokens] of this.#tokens) {
      const last = Math.max(...tokens.keys());
      for (const [attempt, token] of tokens) {
        if (attempt < last && !this.#over.has(token)) this.violations.push(`job ${id} was claimed at attempt ${last} while attempt ${attempt}'s lease was held`);
      }
    }
  }

  #claimed(tally: WorkerTally, jobs: ClaimedJob[]): ClaimedJob[] {
    tally.claimed += jobs.length;
    for (const job of jobs) {
      const tokens = this.#tokens.get(job.id) ?? new Map<number, string>();
      const last = Math.max(0, ...tokens.keys());
      if (job.attempt !== last + 1) this.violations.push(`job ${job.id} was claimed at attempt ${job.attempt} after ${last}`);
      tokens.set(job.attempt, job.leaseToken);
      this.#tokens.set(job.id, tokens);
      // Every earlier attempt's lease is over now.
      for (const [attempt, token] of tokens) if (attempt < job.attempt) this.#end(token, `the claim of attempt ${job.attempt}`);
    }
    return jobs;
  }

  #checkWrite(what: string, lease: Lease, sentAt: number, applied: boolean): void {
    const over = this.#over.get(lease.leaseToken);
    if (applied && over && over.at < sentAt) {
      this.violations.push(`${what} without job ${lease.id}'s current lease applied (token ${lease.leaseToken}, ended by ${over.by})`);
    }
    if (!applied) this.#refusals.push({ what, id: lease.id, token: lease.leaseToken });
  }

  async #overlapping<T>(kind: 'outcome' | 'rescue', call: () => Promise<T>): Promise<T> {
    if ((kind === 'outcome' ? this.#rescuesInFlight : this.#outcomesInFlight) > 0) this.overlaps += 1;
    if (kind === 'outcome') this.#outcomesInFlight += 1;
    else this.#rescuesInFlight += 1;
    try {
      return await call();
    } finally {
      if (kind === 'outcome') this.#outcomesInFlight -= 1;
      else this.#rescuesInFlight -= 1;
    }
  }

  #end(token: string, by: string): void {
    if (!this.#over.has(token)) this.#over.set(token, { at: ++this.#seq, by });
  }

  /** Runs a store call, telling it when it was sent (a point in the proofs' order). */
  async #call<T>(call: (sentAt: number) => Promise<T>): Promise<T> {
    this.#inFlight += 1;
    try {
      return await call(++this.#seq);
    } finally {
      this.#inFlight -= 1;
    }
  }
}
