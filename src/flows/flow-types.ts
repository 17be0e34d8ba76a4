/**
 * Terminology (flows)
 *
 * - flow: jobs enqueued together with dependencies between them, or the children a job added
 *   before it asked to continue. Stored once (`flows`), its jobs carry its id.
 * - node: a job's name in its flow (a child's key, for added children).
 * - parent / child: in a static flow, a job waits for its parents; a job that fans out waits
 *   for the children it added, then runs again (its continuation).
 * - waiting: the row state of a job that waits; not claimable, no lease, no slot.
 */
import type { OnDependencyFailure } from '../adapters/store.js';
import type { EnqueueOptions, HandlerMap } from '../queue.js';

export type { OnDependencyFailure };

/** How a job of a flow names a parent: a job of the same flow (by node name) or a job already
 *  stored (by id), each with its own failure policy if not the job's `onParentFailure`. */
export type FlowParent<D extends string = string> = D | { job: D; onFailure?: OnDependencyFailure } | { jobId: string; onFailure?: OnDependencyFailure };

/** Options of a job of a flow: as `enqueue`'s, without a unique key (a waiting job does not
 *  hold one) or a client (the flow's call takes it). */
export interface FlowJobOptions<D extends string = string> extends Omit<EnqueueOptions, 'client' | 'uniqueKey' | 'dependsOn' | 'onParentFailure' | 'runIn' | 'expiresIn'> {
  /** The jobs it waits for. Default none: due at once. */
  dependsOn?: readonly FlowParent<D>[];
  /** What it does when a parent ends dead, cancelled or skipped. Default `cancel`. */
  onParentFailure?: OnDependencyFailure;
}

/** One job of a flow, as `flowJob` makes it. `R` (type only) is its handler's result, so
 *  that `ParentResults` can type what its children read. */
export interface FlowJobSpec<R = unknown, D extends string = string> {
  readonly queue: string;
  /** The queue's handlers, when given as a queue: the kind is checked against them. */
  readonly handlers: HandlerMap | undefined;
  readonly settings: { maxAttempts: number; maxPayloadBytes: number } | undefined;
  readonly kind: string;
  readonly payload: unknown;
  readonly options: FlowJobOptions<D>;
  /** Type only. */
  readonly __result?: R;
}

export type FlowJobs = Record<string, FlowJobSpec<any, any>>;

export interface FlowDefinition<J extends FlowJobs = FlowJobs> {
  readonly name: string;
  readonly jobs: J;
}

/** What the job `N` of flow `F` reads from `job.parents()`: each parent's result, typed from
 *  its handler. `job.parents<ParentResults<typeof flow, 'report'>>()`. */
export type ParentResults<F extends FlowDefinition<any>, N extends keyof F['jobs']> =
  F['jobs'][N] extends FlowJobSpec<any, infer D>
    ? { [P in D & keyof F['jobs']]: F['jobs'][P] extends FlowJobSpec<infer R, any> ? R : unknown }
    : never;
