import type { ChildJob, JobDependency, JobStore } from '../adapters/store.js';
import { InvalidOptionError } from '../errors.js';
import { ContinueAfter } from '../machines/continue-after.js';
import { assertHandledKind, buildEnqueueJob, type ChildSpec, type DependencyOutcome } from '../queue.js';
import type { JobRecord } from '../types.js';
import { assertAbsoluteTimes, assertKey } from '../validation.js';
import { assertPolicy } from './flow-checks.js';

/** The children by key, checked as an enqueue would check them (the handler throws, and its
 *  attempt fails, on a bad one). */
export function continueAfter(children: Readonly<Record<string, ChildSpec>>): ContinueAfter {
  if (children === null || typeof children !== 'object') throw new InvalidOptionError('continueAfter', 'takes the children by key, as an object');
  return new ContinueAfter(
    Object.entries(children).map(([key, spec]): ChildJob => {
      assertKey('child key', key);
      const { queue, kind, payload, onFailure = 'cancel', ...options } = spec;
      assertPolicy(`child "${key}" onFailure`, onFailure);
      if ('uniqueKey' in options) throw new InvalidOptionError(`child "${key}" uniqueKey`, 'a child takes no unique key: its key is its name');
      const name = typeof queue === 'string' ? queue : queue.name;
      if (typeof queue !== 'string') assertHandledKind(name, queue.handlers, kind);
      const job = buildEnqueueJob(name, kind, payload, options, typeof queue === 'string' ? undefined : queue.settings);
      assertAbsoluteTimes(`by child "${key}"`, job);
      return { ...job, key, onFailure };
    }),
  );
}

/** The jobs `id` waits or waited for, in one role, by name, as its handler reads them. */
export async function dependencyOutcomes(
  store: Pick<JobStore, 'getJobDependencies'>,
  id: string,
  role: JobDependency['role'],
): Promise<Record<string, DependencyOutcome>> {
  const edges = await store.getJobDependencies({ id });
  return Object.fromEntries(edges.filter((edge) => edge.role === role).map((edge) => [edge.name, outcomeOf(edge.job)]));
}

function outcomeOf(job: JobRecord): DependencyOutcome {
  return { id: job.id, state: job.state, result: job.result, error: job.error };
}
