/**
 * A durable sleep across a database restart and a worker's death (docs/durable-jobs.md: "a
 * 30-day sleep holds across restarts of every worker"), on a PostgreSQL server of the test's
 * own (scripts/chaos/scratch-postgres.ts), never the shared one: a worker process runs a job's
 * first step and puts it to sleep; that worker is killed with SIGKILL; the server is crashed
 * (stopped `immediate`: every server process quits at once, the next start replays the WAL)
 * while a second worker keeps running, and stays down until the sleep has come due. Once the
 * server is back, the second worker claims the job by itself and finishes it: the first step
 * is not run again, the second runs once. Real processes and a real server: every wait polls
 * for a condition with a deadline.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ScratchPostgres, startScratchPostgres } from '../../scripts/chaos/scratch-postgres.js';
import { postgresStore } from '../../src/adapters/postgres/index.js';
import type { DurableCall, WorkerConfig } from '../fixtures/worker-process.js';
import { describeScratchPostgres } from '../support/scratch-postgres.js';
import { until, WorkerProcess } from '../support/worker-processes.js';

const SCHEMA = 'durable_restart';
const SLEEP_MS = 1_500;
const WAIT_MS = 30_000;

describeScratchPostgres('a durable sleep across a database restart', () => {
  let server: ScratchPostgres;
  let dir: string;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    server = await startScratchPostgres();
    dir = await mkdtemp(join(tmpdir(), 'jobvisor-durable-restart-'));
  });

  afterAll(async () => {
    for (const w of workers) w.signal('SIGKILL');
    await Promise.all(workers.map((w) => w.exited));
    await server?.destroy();
    await rm(dir, { recursive: true, force: true });
  });

  it('the sleep comes due while the server is down; once it is back, a surviving worker finishes the job, the first step not run again', async () => {
    const store = postgresStore({ connectionString: server.url, schema: SCHEMA, connectTimeoutMs: 1_000 });
    const effectsFile = join(dir, 'effects.jsonl');
    await writeFile(effectsFile, '');
    const startWorker = (workerId: string) => {
      const config: WorkerConfig = {
        url: server.url,
        schema: SCHEMA,
        workerId,
        queue: 'durable',
        concurrency: 4,
        leaseMs: 3_000,
        pollIntervalMs: 100,
        reaperIntervalMs: 200,
        handler: 'work',
        workMs: 0,
        effectsFile,
      };
      const worker = new WorkerProcess(config);
      workers.push(worker);
      return worker;
    };
    try {
      await store.migrate();
      const first = startWorker('first');
      await until(() => first.assertReady(), [first], WAIT_MS);
      const calls: DurableCall[] = [{ step: 'before' }, { sleep: 'nap', ms: SLEEP_MS }, { step: 'after' }];
      const [enqueued] = await store.enqueueJobs({ jobs: [{ queue: 'durable', kind: 'durable', payload: { calls }, maxAttempts: 1 }] });
      const job = enqueued!.job;
      await until(async () => expect((await store.getJob({ id: job.id }))!.state).toBe('sleeping'), [first], WAIT_MS);
      const dueAt = (await store.getJob({ id: job.id }))!.runAt.getTime();

      first.signal('SIGKILL');
      await first.exited;
      const second = startWorker('second');
      await until(() => second.assertReady(), [second], WAIT_MS);

      await server.stop('immediate');
      // Down until the sleep is due (the server's clock is this machine's).
      await until(() => expect(Date.now()).toBeGreaterThan(dueAt + 200), [second], WAIT_MS);
      await server.start();

      await until(async () => expect((await store.getJob({ id: job.id }))!.state).toBe('completed'), [second], WAIT_MS);
      const effects = (await readFile(effectsFile, 'utf8')).split('\n').filter(Boolean).map((line) => JSON.parse(line) as { step: string; worker: string; attempt: number });
      expect(effects.map((e) => `${e.step} ${e.worker}#${e.attempt}`)).toEqual(['before first#1', 'after second#2']);
      const done = (await store.getJob({ id: job.id }))!;
      // maxAttempts 1: the sleep spent no attempt (one more was allowed for the wake).
      expect(done).toMatchObject({ attempt: 2, maxAttempts: 2, workerId: 'second' });
      expect(done.steps.map((s) => [s.kind, s.name])).toEqual([['step', 'before'], ['sleep', 'nap'], ['step', 'after']]);
      const path = (await store.getJobEvents({ id: job.id })).map((e) => [e.fromState, e.toState, e.attempt, e.workerId]);
      expect(path).toEqual([
        [null, 'pending', 0, null],
        ['pending', 'running', 1, 'first'],
        ['running', 'sleeping', 1, 'first'],
        ['sleeping', 'running', 2, 'second'],
        ['running', 'completed', 2, 'second'],
      ]);
    } finally {
      await store.close();
    }
  }, 120_000);
});
