import type { ChildJob } from '../adapters/store.js';

/**
 * What a handler returns to fan out and continue: `return job.continueAfter({ a: …, b: … })`.
 * The job machine writes it as the `waiting` outcome (suspending → waiting): the children are
 * added with the row's move to `waiting`, in one fenced write, so an attempt that dies before
 * it adds nothing, and keys the job added before (an earlier round) add nothing again. When
 * the last child ends the job is due again and its handler runs: its continuation, which reads
 * `job.children()`.
 *
 * The machine only recognises the value; building it from a handler's children (checked as an
 * enqueue checks them) is the flows' part (flows/continue-after.ts).
 */
export class ContinueAfter {
  readonly children: readonly ChildJob[];
  constructor(children: readonly ChildJob[]) {
    this.children = children;
  }
}
