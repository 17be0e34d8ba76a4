/**
 * The supervisor's own CPU cost per job, without a database: N no-op jobs drained through one
 * supervisor over a store that answers at once (claims hand out fresh rows, every write
 * applies). What is left is the job actor, the supervisor's bookkeeping and the handler call.
 *
 *   npx tsx bench/src/hot-path.ts [--root <checkout>] [--jobs 100000] [--concurrency 50] [--runs 5] [--layout single|multi]
 *
 * `--layout multi` is the drain's multi-queue layout (bench/src/systems/jobvisor.ts): the busy
 * queue and `idle-1` share a gate, `idle-2` and `idle-3` have none; only the busy queue has jobs.
 *
 * `--root` loads jobvisor from another checkout (a worktree of an older commit) to compare.
 */
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import type * as JobvisorApi from '../../src/index.js';

const { values } = parseArgs({
  options: {
    root: { type: 'string', default: resolve(import.meta.dirname, '../..') },
    jobs: { type: 'string', default: '100000' },
    concurrency: { type: 'string', default: '50' },
    runs: { type: 'string', default: '5' },
    layout: { type: 'string', default: 'single' },
  },
});
const total = Number(values.jobs);
const concurrency = Number(values.concurrency);
const api = (await import(pathToFileURL(join(values.root, 'src/index.ts')).href)) as typeof JobvisorApi;

/** Rows as a claim returns them; fields a newer JobRecord has are filled in, an older one ignores them. */
function instantStore(count: number) {
  let next = 1;
  const epoch = new Date();
  return {
    capabilities: { notifications: false, transactionalEnqueue: false },
    async claimJobs({ workerId, queues }: { workerId: string; queues: ReadonlyArray<{ queue: string; limit: number }> }) {
      const jobs = [];
      for (const { queue, limit } of queues) {
        if (queue !== 'bench') continue;
        for (let i = 0; i < limit && next <= count; i++) {
          const now = new Date();
          jobs.push({
            id: String(next++), queue, kind: 'noop', payload: null, state: 'running', priority: 0, runAt: epoch,
            attempt: 1, maxAttempts: 3, uniqueKey: null, workerId, leaseToken: 't', leaseExpiresAt: new Date(now.getTime() + 30_000),
            result: null, error: null, createdAt: epoch, updatedAt: now, finishedAt: null,
            expiresAt: null, cancelRequestedAt: null, progress: null, traceContext: null,
          });
        }
      }
      return jobs;
    },
    async setStatesIfRunning({ outcomes }: { outcomes: readonly unknown[] }) {
      return outcomes.map(() => true);
    },
    async renewLeases({ leases }: { leases: readonly unknown[] }) {
      return leases.map(() => 'renewed');
    },
    async rescueExpiredJobs() {
      return [];
    },
    async close() {},
  } as unknown as JobvisorApi.JobStore;
}

async function run(): Promise<number> {
  const handlers = { noop: async () => {} };
  const multi = values.layout === 'multi';
  const gate = multi ? { gate: 'shared' } : {};
  const queues = [api.defineQueue('bench', { concurrency, handlers, ...gate })];
  if (multi) {
    queues.push(api.defineQueue('idle-1', { concurrency, handlers, gate: 'shared' }));
    queues.push(api.defineQueue('idle-2', { concurrency, handlers }), api.defineQueue('idle-3', { concurrency, handlers }));
  }
  const supervisor = api.createSupervisor({
    store: instantStore(total),
    queues,
    ...(multi && { gates: { shared: concurrency } }),
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  });
  const before = process.cpuUsage();
  const ran = await supervisor.drain();
  const used = process.cpuUsage(before);
  await supervisor.stop({ graceMs: 0 });
  if (ran !== total) throw new Error(`drained ${ran} of ${total}`);
  return (used.user + used.system) / total;
}

await run(); // warm-up
const samples: number[] = [];
for (let i = 0; i < Number(values.runs); i++) samples.push(await run());
samples.sort((a, b) => a - b);
const median = samples[Math.floor(samples.length / 2)]!;
console.log(
  `${values.root}: ${total} jobs, ${values.layout}, concurrency ${concurrency}: CPU µs/job median ${median.toFixed(1)} ` +
    `(runs ${samples.map((s) => s.toFixed(1)).join(', ')})`,
);
