import type { JobStore } from '../../src/adapters/store.js';
import { settle } from './sim.js';

type Overrides = { [K in keyof JobStore]?: NonNullable<JobStore[K]> extends (...args: infer A) => infer R ? (...args: A) => R : never };

/** `store` with some operations replaced (a fault, a delay, a wrapper that calls through to
 *  `store` itself); every other member is the store's own, bound to it. */
export function interceptStore<S extends JobStore>(store: S, overrides: Overrides): S {
  return new Proxy(store, {
    get(target, key) {
      const override = (overrides as Record<PropertyKey, unknown>)[key];
      if (override !== undefined) return override;
      const value = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** `store` with a count of its calls still waiting for an answer; `settle` waits until there
 *  are none and what their answers set off has run. Calls are not serialised. For a store
 *  whose answers take real time (a server) under a simulated clock: a test moves the clock,
 *  then waits for what that set off. */
export function trackCalls<S extends JobStore>(inner: S): { store: S; settle: () => Promise<void> } {
  let inFlight = 0;
  const store = new Proxy(inner, {
    get: (target, key) => {
      const value = Reflect.get(target, key);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result: unknown = value.apply(target, args);
        if (!(result instanceof Promise)) return result;
        inFlight += 1;
        return result.finally(() => {
          inFlight -= 1;
        });
      };
    },
  });
  return {
    store,
    settle: async () => {
      do await settle(4);
      while (inFlight > 0);
      await settle(4);
    },
  };
}
