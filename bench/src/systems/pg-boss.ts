import { PgBoss } from 'pg-boss';
import pg from 'pg';
import type { BenchSystem, SystemContext, WorkerOptions } from './system.js';

const QUEUE = 'bench';
const IDLE_QUEUES = ['idle-1', 'idle-2', 'idle-3'];

/** pg-boss 12 with LISTEN/NOTIFY and batch fetches that keep fetching while batches come back full. */
export async function pgBossSystem(ctx: SystemContext): Promise<BenchSystem> {
  const boss = new PgBoss({ connectionString: ctx.connectionString, schema: ctx.schema, useListenNotify: true });
  boss.on('error', (error) => console.error('pg-boss error:', error));
  const reader = new pg.Client({ connectionString: ctx.readerConnectionString });
  await reader.connect();
  let seq = 0;
  let started = false;
  let working: string[] = [];

  return {
    name: 'pg-boss',
    async setup() {
      await boss.start();
      started = true;
      await boss.createQueue(QUEUE, { notify: true });
    },
    async enqueueMany(count) {
      await boss.insert(QUEUE, Array.from({ length: count }, () => ({ data: { n: seq++ } })));
    },
    async enqueueOne() {
      await boss.send(QUEUE, { n: seq++ });
    },
    async startWorker({ concurrency, onJob, layout }: WorkerOptions) {
      working = layout === 'multi' ? [QUEUE, ...IDLE_QUEUES] : [QUEUE];
      for (const name of working) {
        if (name !== QUEUE) await boss.createQueue(name, { notify: true });
        // One fetch loop of c jobs beat c/5 loops of 5 and c/2 loops of 2 in trials here.
        await boss.work(name, { batchSize: concurrency, burstWhenBatchFull: true }, async (jobs) => {
          await Promise.all(jobs.map(() => onJob()));
        });
      }
    },
    async stopWorker() {
      for (const name of working) await boss.offWork(name, { wait: true });
    },
    async completedCount() {
      const { rows } = await reader.query(
        `select count(*)::int as n from "${ctx.schema}".job where name = $1 and state = 'completed'`,
        [QUEUE],
      );
      return rows[0].n as number;
    },
    async close() {
      await reader.end();
      if (started) await boss.stop({ graceful: false, timeout: 5_000 });
    },
  };
}
