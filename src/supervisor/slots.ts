import pLimit, { type LimitFunction } from 'p-limit';
import type { Queue } from '../queue.js';

export interface ClaimRequest {
  queue: string;
  limit: number;
  leaseMs: number;
}

/**
 * Free-slot accounting for one supervisor: per queue, global, and per named gate. A claim
 * asks only for what is free, so the store never hands this process more than it can run.
 * Gates are `p-limit` limiters: a gated job starts only inside its limiter, which enforces
 * the gate even if the accounting here were wrong. The accounting counts gated jobs itself:
 * a limiter's own counters drop a microtask after the job ends, too late for the next plan.
 */
export class Slots {
  private readonly active = new Map<string, number>();
  private readonly gated = new Map<string, number>();
  private total = 0;
  private rotation = 0;
  readonly gates: ReadonlyMap<string, { size: number; limit: LimitFunction }>;

  constructor(
    private readonly queues: readonly Queue[],
    private readonly globalLimit: number,
    gateSizes: Readonly<Record<string, number>>,
  ) {
    this.gates = new Map(Object.entries(gateSizes).map(([name, size]) => [name, { size, limit: pLimit(size) }]));
    for (const q of queues) this.active.set(q.name, 0);
  }

  /** What to ask the store for now. The starting queue rotates so that queues sharing the
   *  global limit or a gate take turns. */
  plan(): ClaimRequest[] {
    let globalFree = this.globalLimit - this.total;
    const gateFree = new Map<string, number>();
    for (const [name, gate] of this.gates) gateFree.set(name, gate.size - (this.gated.get(name) ?? 0));
    const requests: ClaimRequest[] = [];
    const n = this.queues.length;
    for (let i = 0; i < n && globalFree > 0; i++) {
      const queue = this.queues[(this.rotation + i) % n]!;
      const { concurrency, gate, leaseMs } = queue.settings;
      let limit = Math.min(concurrency - (this.active.get(queue.name) ?? 0), globalFree);
      if (gate !== undefined) limit = Math.min(limit, gateFree.get(gate) ?? 0);
      if (limit <= 0) continue;
      requests.push({ queue: queue.name, limit, leaseMs });
      globalFree -= limit;
      if (gate !== undefined) gateFree.set(gate, (gateFree.get(gate) ?? 0) - limit);
    }
    this.rotation = n === 0 ? 0 : (this.rotation + 1) % n;
    return requests;
  }

  hasFree(): boolean {
    return this.total < this.globalLimit && this.queues.some((q) => this.freeFor(q) > 0);
  }

  acquire(queue: Queue): void {
    this.count(queue, 1);
  }

  release(queue: Queue): void {
    this.count(queue, -1);
  }

  private count(queue: Queue, delta: number): void {
    this.active.set(queue.name, (this.active.get(queue.name) ?? 0) + delta);
    this.total += delta;
    const gate = queue.settings.gate;
    if (gate !== undefined) this.gated.set(gate, (this.gated.get(gate) ?? 0) + delta);
  }

  private freeFor(queue: Queue): number {
    const { concurrency, gate } = queue.settings;
    const own = concurrency - (this.active.get(queue.name) ?? 0);
    if (gate === undefined) return own;
    const g = this.gates.get(gate);
    return g ? Math.min(own, g.size - (this.gated.get(gate) ?? 0)) : 0;
  }
}
