import type { JobStore } from '../../src/adapters/store.js';

type Overrides = { [K in keyof JobStore]?: JobStore[K] extends (...args: infer A) => infer R ? (...args: A) => R : never };

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
