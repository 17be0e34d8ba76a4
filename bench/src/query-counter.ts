/**
 * Counts the statements a process sends: every `pg` Client.query call (pool queries go
 * through one). The systems resolve `pg` from different installs (jobvisor from the repo
 * root, the peers from bench/), so each copy's prototype is wrapped once.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';

export const queryCount = { total: 0 };

export function countQueries(jobvisorRoot: string): void {
  const copies = new Set<{ Client: { prototype: { query: (...args: unknown[]) => unknown } } }>();
  copies.add(createRequire(import.meta.url)('pg'));
  try {
    copies.add(createRequire(join(jobvisorRoot, 'package.json'))('pg'));
  } catch {
    // A checkout without its install: jobvisor cannot run there anyway.
  }
  for (const pg of copies) {
    const proto = pg.Client.prototype;
    const query = proto.query;
    proto.query = function (this: unknown, ...args: unknown[]) {
      queryCount.total += 1;
      return query.apply(this, args);
    };
  }
}
