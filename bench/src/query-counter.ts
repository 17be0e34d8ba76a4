/**
 * Counts the statements a process sends: every `pg` Client.query call (pool queries go
 * through one). The systems resolve `pg` from different installs (jobvisor from the repo
 * root, the peers from bench/), so each copy's prototype is wrapped once.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';

export const queryCount = { total: 0, byName: new Map<string, number>() };

/**
 * A jobvisor statement's key (`set_states_if_running`, `claim_jobs` …): its prepared name is
 * `jobvisor_<key>_<hash>`, passed as the config's name, or in the text of an index-scans-only
 * statement (`… execute jobvisor_<key>_<hash>(…)`, or `prepare` once per connection). Anything
 * else (the peers', begin/commit, LISTEN) is `other`.
 */
export function statementKey(arg: unknown): string {
  const name = typeof arg === 'object' && arg !== null && 'name' in arg ? (arg as { name?: unknown }).name : undefined;
  const text = typeof name === 'string' ? name : typeof arg === 'string' ? arg : '';
  const m = /^(?:prepare |.*\bexecute )?jobvisor_(\w+)_[0-9a-f]{12}\b/s.exec(text);
  return m ? (text.startsWith('prepare ') ? `prepare ${m[1]}` : m[1]!) : 'other';
}

/** `pg` as a system loads it: each copy's Client prototype, to wrap. */
export interface PgCopy {
  Client: { prototype: { query: (...args: unknown[]) => unknown; emit: (event: string, ...args: unknown[]) => boolean } };
}

/** Every copy of `pg` the systems load: bench/'s and the jobvisor checkout's. */
export function pgCopies(jobvisorRoot: string): Set<PgCopy> {
  const copies = new Set<PgCopy>();
  copies.add(createRequire(import.meta.url)('pg'));
  try {
    copies.add(createRequire(join(jobvisorRoot, 'package.json'))('pg'));
  } catch {
    // A checkout without its install: jobvisor cannot run there anyway.
  }
  return copies;
}

export function countQueries(jobvisorRoot: string): void {
  for (const pg of pgCopies(jobvisorRoot)) {
    const proto = pg.Client.prototype;
    const query = proto.query;
    proto.query = function (this: unknown, ...args: unknown[]) {
      queryCount.total += 1;
      const key = statementKey(args[0]);
      queryCount.byName.set(key, (queryCount.byName.get(key) ?? 0) + 1);
      return query.apply(this, args);
    };
  }
}
