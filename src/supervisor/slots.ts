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
 * the gate even if the accounting here were wrong.
 */
export class Slots {
  private readonly active = new Map<string, number>();
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
    for (const [name, gate] of this.gates) gateFree.set(name, gate.size - gate.limit.activeCount - gate.limit.pendingCount);
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

  acquire(queue: string): void {
    this.active.set(queue, (this.active.get(queue) ?? 0) + 1);
    this.total += 1;
  }

  release(queue: string): void {
    this.active.set(queue, (this.active.get(queue) ?? 0) - 1);
    this.total -= 1;
  }

  private freeFor(queue: Queue): number {
    const { concurrency, gate } = queue.settings;
    const own = concurrency - (this.active.get(queue.name) ?? 0);
    if (gate === undefined) return own;
    const g = this.gates.get(gate);
    return g ? Math.min(own, g.size - g.limit.activeCount - g.limit.pendingCount) : 0;
  }
}
