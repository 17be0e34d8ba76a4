import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
// Types from this checkout; the code itself is loaded from `jobvisorRoot` (maybe another worktree).
import type * as JobvisorApi from '../../../src/index.js';
import type * as JobvisorPostgres from '../../../src/adapters/postgres/index.js';
import type { BenchSystem, SystemContext, WorkerOptions } from './system.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** jobvisor from its TypeScript source (run through tsx), so the bench measures the work tree. */
export async function jobvisorSystem(ctx: SystemContext): Promise<BenchSystem> {
  const load = (path: string) => import(pathToFileURL(join(ctx.jobvisorRoot, path)).href);
  const api = (await load('src/index.ts')) as typeof JobvisorApi;
  const { postgresStore } = (await load('src/adapters/postgres/index.ts')) as typeof JobvisorPostgres;
  const store = postgresStore({ connectionString: ctx.connectionString, schema: ctx.schema });
  const reader = new pg.Client({ connectionString: ctx.readerConnectionString });
  await reader.connect();
  const enqueuer = api.defineQueue('bench', { handlers: { noop: async () => {} } });
  let supervisor: JobvisorApi.Supervisor | undefined;
  let seq = 0;

  return {
    name: 'jobvisor',
    async setup() {
      await store.migrate();
    },
    async enqueueMany(count) {
      const jobs = Array.from({ length: count }, () => ({ kind: 'noop' as const, payload: { n: seq++ } }));
      await enqueuer.enqueueMany(store, jobs);
    },
    async enqueueOne() {
      await enqueuer.enqueue(store, 'noop', { n: seq++ });
    },
    async startWorker({ concurrency, onJob, layout }: WorkerOptions) {
      const handlers = {
        noop: async () => {
          await onJob();
        },
      };
      const multi = layout === 'multi';
      const gate = multi ? { gate: 'shared' } : {};
      const queues = [api.defineQueue('bench', { concurrency, handlers, ...gate })];
      if (multi) {
        queues.push(api.defineQueue('idle-1', { concurrency, handlers, gate: 'shared' }));
        queues.push(api.defineQueue('idle-2', { concurrency, handlers }), api.defineQueue('idle-3', { concurrency, handlers }));
      }
      supervisor = api.createSupervisor({ store, queues, logger: silent, ...(multi && { gates: { shared: concurrency } }) });
      await supervisor.start();
    },
    async stopWorker() {
      await supervisor?.stop({ graceMs: 10_000 });
      supervisor = undefined;
    },
    async completedCount() {
      const { rows } = await reader.query(`select count(*)::int as n from "${ctx.schema}".jobs where state = 'completed'`);
      return rows[0].n as number;
    },
    async close() {
      await reader.end();
      await store.close();
    },
  };
}
