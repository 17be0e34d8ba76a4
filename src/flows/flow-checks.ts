import type { OnDependencyFailure } from '../adapters/store.js';
import { InvalidOptionError } from '../errors.js';

/** Checks shared by flows, plain enqueues with `dependsOn` and children (no import of queue.ts,
 *  which uses them). */

const POLICIES: readonly OnDependencyFailure[] = ['cancel', 'run', 'die'];
const JOB_ID = /^[1-9]\d{0,18}$/;

export function assertPolicy(what: string, value: unknown): asserts value is OnDependencyFailure {
  if (!POLICIES.includes(value as OnDependencyFailure)) {
    throw new InvalidOptionError(what, `must be one of ${POLICIES.join(', ')}, got ${JSON.stringify(value)}`);
  }
}

export function assertJobId(what: string, value: unknown, kind: 'job' | 'flow' = 'job'): asserts value is string {
  if (typeof value !== 'string' || !JOB_ID.test(value)) {
    throw new InvalidOptionError(what, `must be a ${kind} id (a decimal string), got ${JSON.stringify(value)}`);
  }
}
