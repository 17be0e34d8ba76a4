import pLimit, { type LimitFunction } from 'p-limit';
import type { Queue } from '../queue.js';
import type { Clock } from '../types.js';

export interface ClaimRequest {
  queue: string;
  limit: number;
  leaseMs: number;
}

export interface PrefetchSettings {
  /** Claim ahead what this process's slots free in this many ms, per queue. 0 = never ahead. */
  windowMs: number;
  /** Most jobs of one queue held claimed ahead of a free slot. */
  max: number;
}

/** What one claim round brought back, per queue asked. */
export interface ClaimAnswer {
  /** Jobs the store gave, per queue. */
  got: ReadonlyMap<string, number>;
  /** Queues that gave a job with a concurrency key. */
  keyed: ReadonlySet<string>;
}

/**
 * The claim decision of one supervisor, in one place: which queues to ask, for how many, and
 * whether a claim is wanted now. "Why did this slot stay idle?" is answered here.
 *
 * Room: running jobs per queue, globally and per named gate, and jobs held claimed ahead of a
 * free slot (prefetch). A claim asks only for what the free slots and the prefetch allowance
 * leave, so memory never grows with the backlog.
 *
 * Work: per queue, whether due jobs may be waiting in the store. A queue may have work until a
 * claim of it came back short (and nothing woke it while that claim was on its way, which may
 * have read the store before the new work committed); it may again once something says so: a wake-up for it (an
 * enqueue's notification, a keyed job of it finished), a poll, or the store coming back. A
 * claim is wanted when some queue has both room and work, and asks only those queues: a freed
 * slot of a busy queue is filled at once, whatever its idle neighbours last answered. A queue
 * not asked for a poll interval is asked again in the next claim round: the supervisor's poll
 * fires only after a poll interval without a claim, so while a busy queue claims more often
 * than that, a job of an idle queue that became due without a wake-up (run later, retried after
 * a backoff) would otherwise wait out the busy queue's whole backlog.
 *
 * Prefetch: a claim is a round trip, and a slot that waits for it is idle. So each queue may
 * hold, claimed and leased, about as many jobs as its slots free in `windowMs`, measured (a
 * held job starts when a slot frees). Fast jobs get a buffer that hides the round trip; slow
 * jobs (a few a second) get none, and are left for other workers. Measured on the slots
 * freed, not on the starts: jobs that start fast and then hold their slots (long or hung
 * handlers, a burst at start-up) would otherwise keep jobs here that other workers' free
 * slots could run. A queue whose slots are busy tops the buffer up only once
 * it holds a quarter of a window or less, so that each claim (and the outcome write that
 * follows its jobs) carries many jobs: the statements per job are set here. A quarter of a
 * window still lasts many claim round trips (bench/optimisations.md, row 15).
 *
 * Gates are `p-limit` limiters: a gated job starts only inside its limiter, which enforces
 * the gate even if the accounting here were wrong. The accounting counts gated jobs itself:
 * a limiter's own counters drop a microtask after the job ends, too late for the next plan.
 */
export class ClaimPlanner {
  private readonly running = new Map<string, number>();
  private readonly held = new Map<string, number>();
  private readonly gateRunning = new Map<string, number>();
  private readonly rates = new Map<string, FreeRate>();
  /** Queues that may have due jobs in the store. All may, until a claim says otherwise. */
  private readonly mayHaveWork = new Set<string>();
  /** Queues said to have work since the last plan: a claim in flight may have read the store
   *  before that work was there (an enqueue or a signal that committed meanwhile), so its short
   *  answer does not clear them. */
  private readonly notedSincePlan = new Set<string>();
  /** Per queue, when a claim round last asked it: one not asked for a poll interval is asked again. */
  private readonly askedAt = new Map<string, number>();
  private totalRunning = 0;
  private rotation = 0;
  /** Scratch for `requests`: per queue index, running slots its held jobs will take. */
  private readonly reserved: number[];
  readonly gates: ReadonlyMap<string, { size: number; limit: LimitFunction }>;

  constructor(
    private readonly queues: readonly Queue[],
    private readonly globalLimit: number,
    gateSizes: Readonly<Record<string, number>>,
    private readonly prefetch: PrefetchSettings,
    private readonly clock: Clock,
    /** The supervisor's poll interval; by default a queue is asked again only when told. */
    private readonly pollIntervalMs = Number.POSITIVE_INFINITY,
  ) {
    this.gates = new Map(Object.entries(gateSizes).map(([name, size]) => [name, { size, limit: pLimit(size) }]));
    this.reserved = queues.map(() => 0);
    for (const q of queues) {
      this.rates.set(q.name, new FreeRate(clock));
      this.mayHaveWork.add(q.name);
      this.askedAt.set(q.name, clock.now());
    }
  }

  // ── work ────────────────────────────────────────────────────────────────────────────────

  /** Due jobs may be waiting in `queue` (a wake-up for it), or in every queue (a poll, the
   *  store back after an outage, a drain). */
  noteWork(queue?: string): void {
    if (queue === undefined) for (const q of this.queues) this.note(q.name);
    else if (this.rates.has(queue)) this.note(queue);
  }

  /** What a claim round of `asked` brought back. A queue that gave all it was asked for may
   *  have more; so may one that gave keyed jobs (a claim takes no more of a key than its limit
   *  from the jobs it looks at, so it may have left other keys' jobs behind them), and one
   *  woken while the claim was on its way. */
  claimAnswered(asked: readonly ClaimRequest[], answer: ClaimAnswer): void {
    const now = this.clock.now();
    for (const request of asked) {
      this.askedAt.set(request.queue, now);
      const got = answer.got.get(request.queue) ?? 0;
      const more = got >= request.limit || answer.keyed.has(request.queue) || this.notedSincePlan.has(request.queue);
      if (more) this.mayHaveWork.add(request.queue);
      else this.mayHaveWork.delete(request.queue);
    }
  }

  /** A claim is wanted now: some queue has room and may have work. */
  wantsClaim(): boolean {
    return this.requests().length > 0;
  }

  /** What to ask the store for now. The starting queue rotates so that queues sharing the
   *  global limit or a gate take turns. */
  plan(): ClaimRequest[] {
    this.notedSincePlan.clear();
    const now = this.clock.now();
    for (const q of this.queues) {
      if (now - this.askedAt.get(q.name)! >= this.pollIntervalMs) this.mayHaveWork.add(q.name);
    }
    const requests = this.requests();
    const n = this.queues.length;
    this.rotation = n === 0 ? 0 : (this.rotation + 1) % n;
    return requests;
  }

  // ── room ────────────────────────────────────────────────────────────────────────────────

  /** Some queue could take a job now, work or not. */
  hasRoom(): boolean {
    return this.queues.some((q) => this.canStart(q) || this.count(this.held, q.name) < this.prefetchTarget(q));
  }

  /** A job of this queue may start now: its queue, the global limit and its gate allow it. */
  canStart(queue: Queue): boolean {
    const { concurrency, gate } = queue.settings;
    if (this.totalRunning >= this.globalLimit || this.count(this.running, queue.name) >= concurrency) return false;
    if (gate === undefined) return true;
    const g = this.gates.get(gate);
    return g !== undefined && this.count(this.gateRunning, gate) < g.size;
  }

  hold(queue: Queue): void {
    this.add(this.held, queue.name, 1);
  }

  unhold(queue: Queue): void {
    this.add(this.held, queue.name, -1);
  }

  start(queue: Queue): void {
    this.setRunning(queue, 1);
  }

  release(queue: Queue): void {
    this.setRunning(queue, -1);
    this.rates.get(queue.name)?.freed();
  }

  // ── inside ──────────────────────────────────────────────────────────────────────────────

  private note(queue: string): void {
    this.mayHaveWork.add(queue);
    this.notedSincePlan.add(queue);
  }

  /** Per queue with work, in turn from the rotation: what its room allows. */
  private requests(): ClaimRequest[] {
    // Asked after every event the supervisor hears: no map is made when there are no gates.
    const free = { global: this.globalLimit - this.totalRunning, gates: this.gates.size === 0 ? NO_GATES : new Map<string, number>() };
    for (const [name, gate] of this.gates) free.gates.set(name, gate.size - this.count(this.gateRunning, name));
    // Jobs already held take first the running slots they will start in (by queue index).
    const n = this.queues.length;
    const reserved = this.reserved;
    for (let i = 0; i < n; i++) {
      const queue = this.queues[i]!;
      const take = Math.min(this.runFree(queue, 0, free), this.count(this.held, queue.name));
      this.take(queue, take, free);
      reserved[i] = take;
    }
    const requests: ClaimRequest[] = [];
    for (let j = 0; j < n; j++) {
      const i = (this.rotation + j) % n;
      const queue = this.queues[i]!;
      if (!this.mayHaveWork.has(queue.name)) continue;
      const own = reserved[i]!;
      const runFree = this.runFree(queue, own, free);
      const heldBeyond = this.count(this.held, queue.name) - own;
      const target = this.prefetchTarget(queue);
      // Every slot is spoken for and the queue still holds over a quarter of its window: topping
      // it up now would fetch a few jobs a statement. It claims again, for the whole window, once
      // it holds a quarter or less (each claim then brings at least three quarters of a window).
      const topUpLater = runFree === 0 && heldBeyond > 0 && heldBeyond * 4 > target;
      let limit = topUpLater ? 0 : Math.max(0, runFree + target - heldBeyond);
      if (limit === 0 && this.waitsItsTurn(queue)) limit = 1;
      this.take(queue, Math.min(runFree, limit), free);
      if (limit > 0) requests.push({ queue: queue.name, limit, leaseMs: queue.settings.leaseMs });
    }
    return requests;
  }

  /** A queue below its own concurrency, kept out only by a limit it shares (the global one or
   *  its gate) and holding no job: it may claim one to wait in line, so that it takes its turn
   *  when a shared slot frees instead of waiting out the busier queue's whole backlog. Not a
   *  rate-limited queue: its claims are what the limit counts. */
  private waitsItsTurn(queue: Queue): boolean {
    return (
      queue.settings.rateLimit === undefined &&
      this.count(this.held, queue.name) === 0 &&
      this.count(this.running, queue.name) < queue.settings.concurrency
    );
  }

  /** Running slots a queue could still fill, given what the plan has handed out so far. */
  private runFree(queue: Queue, alreadyTaken: number, free: { global: number; gates: Map<string, number> }): number {
    const { concurrency, gate } = queue.settings;
    let n = Math.min(concurrency - this.count(this.running, queue.name) - alreadyTaken, free.global);
    if (gate !== undefined) n = Math.min(n, free.gates.get(gate) ?? 0);
    return Math.max(0, n);
  }

  private take(queue: Queue, n: number, free: { global: number; gates: Map<string, number> }): void {
    free.global -= n;
    const gate = queue.settings.gate;
    if (gate !== undefined) free.gates.set(gate, (free.gates.get(gate) ?? 0) - n);
  }

  private prefetchTarget(queue: Queue): number {
    // A rate limit counts claims: a job claimed ahead would start later than it was counted.
    if (this.prefetch.max === 0 || this.prefetch.windowMs === 0 || queue.settings.rateLimit) return 0;
    const perMs = this.rates.get(queue.name)?.perMs() ?? 0;
    return Math.min(this.prefetch.max, Math.floor(perMs * this.prefetch.windowMs));
  }

  private setRunning(queue: Queue, delta: number): void {
    this.add(this.running, queue.name, delta);
    this.totalRunning += delta;
    const gate = queue.settings.gate;
    if (gate !== undefined) this.add(this.gateRunning, gate, delta);
  }

  private count(map: Map<string, number>, key: string): number {
    return map.get(key) ?? 0;
  }

  private add(map: Map<string, number>, key: string, delta: number): void {
    map.set(key, (map.get(key) ?? 0) + delta);
  }
}

/** The free places per gate of a supervisor that has no gates: never written. */
const NO_GATES: Map<string, number> = new Map();

/** Slots freed per millisecond of one queue (jobs that ended), averaged over windows of at least 100 ms of the
 *  supervisor's clock (a frozen simulated clock measures nothing: no prefetch in tests). */
class FreeRate {
  private freedSlots = 0;
  private since: number;
  private rate = 0;

  constructor(private readonly clock: Clock) {
    this.since = clock.now();
  }

  freed(): void {
    this.freedSlots += 1;
  }

  perMs(): number {
    const now = this.clock.now();
    const elapsed = now - this.since;
    if (elapsed >= 100) {
      const sample = this.freedSlots / elapsed;
      this.rate = (this.rate + sample) / 2;
      this.freedSlots = 0;
      this.since = now;
    }
    return this.rate;
  }
}
