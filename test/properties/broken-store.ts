/**
 * A deliberately broken store, for showing that the properties catch one: it fences renewals
 * and outcomes by the job's state only, writing under whatever token the row holds now (the
 * peers' gap the design closes: a zombie overwrites the job's new owner).
 */
import type { JobStore, Lease } from '../../src/adapters/store.js';

export function ignoringLeaseTokens(store: JobStore): JobStore {
  const current = async <L extends Lease>(lease: L): Promise<L> => {
    const row = await store.getJob({ id: lease.id });
    return { ...lease, leaseToken: row?.leaseToken ?? lease.leaseToken };
  };
  return new Proxy(store, {
    get: (target, key) => {
      if (key === 'renewLeases') {
        return async (params: Parameters<JobStore['renewLeases']>[0]) =>
          target.renewLeases({ ...params, leases: await Promise.all(params.leases.map(current)) });
      }
      if (key === 'setStatesIfRunning') {
        return async (params: Parameters<JobStore['setStatesIfRunning']>[0]) =>
          target.setStatesIfRunning({ outcomes: await Promise.all(params.outcomes.map(current)) });
      }
      const value = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
