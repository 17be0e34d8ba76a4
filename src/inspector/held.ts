/**
 * Held versus running. A worker claims jobs ahead of a free slot (prefetch): in the store
 * they are `running` like those whose handler runs. Each worker's heartbeat lists the jobs it
 * holds for a slot (WorkerInfo.held), so the inspector tells them apart without a write per
 * job, as of each worker's last heartbeat (WORKER_HEARTBEAT_MS): a job claimed ahead since
 * then shows as running until the next. A job whose worker has no row, or an older version's
 * row that does not say, is neither: `null`.
 */
import type { WorkerInfo } from '../adapters/store.js';
import type { JobState } from '../types.js';

export type RunningPhase = 'started' | 'held';

export class HeldJobs {
  readonly #held = new Map<string, Set<string>>();
  readonly #perQueue = new Map<string, number>();
  /** Every worker's row says what it holds: per-queue counts can be split. */
  readonly complete: boolean;

  constructor(workers: readonly WorkerInfo[]) {
    this.complete = workers.every((worker) => worker.held !== null);
    for (const worker of workers) {
      if (worker.held === null) continue;
      this.#held.set(worker.workerId, new Set(worker.held.map((job) => job.id)));
      for (const job of worker.held) this.#perQueue.set(job.queue, (this.#perQueue.get(job.queue) ?? 0) + 1);
    }
  }

  /** A running job's phase, or null when its worker does not say (or it is not running). */
  phase(job: { id: string; state: JobState; workerId: string | null }): RunningPhase | null {
    if (job.state !== 'running' || job.workerId === null) return null;
    const held = this.#held.get(job.workerId);
    if (!held) return null;
    return held.has(job.id) ? 'held' : 'started';
  }

  /** Of a queue's `running` jobs, how many have started and how many are held; null when a
   *  worker's row does not say. */
  split(queue: string, running: number): { started: number; held: number } | null {
    if (!this.complete) return null;
    const held = Math.min(running, this.#perQueue.get(queue) ?? 0);
    return { started: running - held, held };
  }
}
