import { Logger, makeWorkerUtils, run, type Runner } from 'graphile-worker';
import pg from 'pg';
import type { BenchSystem, SystemContext, WorkerOptions } from './system.js';

const silent = new Logger(() => () => {});

/** graphile-worker with the settings its performance docs give for throughput. */
export async function graphileWorkerSystem(ctx: SystemContext): Promise<BenchSystem> {
  const utils = await makeWorkerUtils({ connectionString: ctx.connectionString, schema: ctx.schema, logger: silent });
  const reader = new pg.Client({ connectionString: ctx.readerConnectionString });
  await reader.connect();
  // Made at the first start and kept, so the measured worker starts on a warm pool.
  let pool: pg.Pool | undefined;
  let runner: Runner | undefined;
  let enqueued = 0;

  return {
    name: 'graphile-worker',
    async setup() {
      await utils.migrate();
    },
    async enqueueMany(count) {
      const specs = Array.from({ length: count }, () => ({ identifier: 'noop', payload: { n: enqueued++ } }));
      await utils.addJobs(specs);
    },
    async enqueueOne() {
      await utils.addJob('noop', { n: enqueued++ });
    },
    async startWorker({ concurrency, onJob, layout }: WorkerOptions) {
      const noop = async () => {
        await onJob();
      };
      if (!pool) {
        pool = new pg.Pool({ connectionString: ctx.connectionString, max: Math.max(10, concurrency + 2) });
        // graphile-worker warns about pools without these handlers.
        pool.on('error', (error) => console.error('graphile-worker pool error:', error));
        pool.on('connect', (client) => client.on('error', (error) => console.error('graphile-worker client error:', error)));
      }
      runner = await run({
        pgPool: pool,
        schema: ctx.schema,
        concurrency,
        noHandleSignals: true,
        logger: silent,
        taskList: layout === 'multi' ? { noop, idle1: noop, idle2: noop, idle3: noop } : { noop },
        preset: {
          worker: {
            localQueue: { size: 500 },
            completeJobBatchDelay: 0,
            failJobBatchDelay: 0,
          },
        },
      });
    },
    async stopWorker() {
      await runner?.stop();
      runner = undefined;
    },
    async completedCount() {
      // graphile-worker deletes a job when it completes.
      const { rows } = await reader.query(`select count(*)::int as n from "${ctx.schema}"._private_jobs`);
      return enqueued - (rows[0].n as number);
    },
    async close() {
      await reader.end();
      await utils.release();
      await pool?.end();
    },
  };
}
