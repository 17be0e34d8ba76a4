/**
 * `jobvisor queue pause|resume|list` as a user runs them, on PostgreSQL: a paused queue keeps
 * its jobs while two worker processes run, and they take them once it is resumed; a queue
 * stays known after prune took its jobs.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type pg from 'pg';
import { postgresStore } from '../../src/adapters/postgres/index.js';
import { cli, cliJson, lines, requireBuiltCli, startCli } from '../support/cli.js';
import { describePostgres, dropSchema, freshSchema, testPool } from '../support/postgres.js';

requireBuiltCli();

const WORKER = 'test/cli/fixtures/worker.mjs';

describe('jobvisor queue: bad input', () => {
  it('refuses a bad queue name before connecting', async () => {
    const { code, stderr } = await cli(['queue', 'pause', 'a b', '--database-url', 'postgres://postgres@127.0.0.1:1/none']);
    expect(code).toBe(2);
    expect(lines(stderr)).toEqual([expect.stringMatching(/^jobvisor: command-argument value 'a b' is invalid for argument 'queue'\. must be 1-128 characters/)]);
  });
});

describePostgres('jobvisor queue on PostgreSQL', (url) => {
  // Each test on a schema of its own: the suite runs them in any order.
  const schemas: string[] = [];
  let pool: pg.Pool;
  let schema: string;
  let db: string[];

  beforeAll(() => {
    pool = testPool(url);
  });

  beforeEach(async () => {
    schema = freshSchema('jv_cli_queue');
    schemas.push(schema);
    db = ['--database-url', url, '--schema', schema];
    expect((await cli(['migrate', ...db])).code).toBe(0);
  });

  afterAll(async () => {
    for (const name of schemas) await dropSchema(pool, name);
    await pool.end();
  });

  it('lists, pauses and resumes; an unknown queue is refused unless --new-queue', async () => {
    expect((await cli(['queue', 'list', ...db])).stdout).toBe('no queues\n');
    const unknown = await cli(['queue', 'pause', 'mail', ...db]);
    expect(unknown.code).toBe(2);
    expect(lines(unknown.stderr)).toEqual(['jobvisor: unknown queue "mail": the store knows none yet (--new-queue for a queue with no job yet)']);
    const paused = await cliJson(['queue', 'pause', 'mail', '--new-queue', ...db]);
    expect(paused.queue).toMatchObject({ name: 'mail', pausedAt: expect.any(String) });
    expect((await cli(['queue', 'pause', 'mail', ...db])).stdout).toBe(`queue mail paused since ${paused.queue.pausedAt.slice(0, 19).replace('T', ' ')}Z\n`);
    const listed = await cli(['queue', 'list', ...db]);
    expect(lines(listed.stdout)[0]).toMatch(/^QUEUE +STATE +PAUSED SINCE +CREATED$/);
    expect(lines(listed.stdout)[1]).toMatch(/^mail +paused +\d{4}-/);
    expect((await cli(['queue', 'resume', 'mail', ...db])).stdout).toBe('queue mail active\n');
    expect((await cliJson(['queue', 'list', ...db])).queues).toEqual([{ name: 'mail', createdAt: expect.any(String), pausedAt: null }]);
  });

  it('enqueue knows a queue after prune took all its jobs', async () => {
    const first = await cliJson(['enqueue', 'digest', 'weekly', '--new-queue', ...db]);
    expect((await cli(['cancel', first.job.id, ...db])).code).toBe(0);
    expect(await cliJson(['prune', '--dead-older-than', '0s', ...db])).toEqual({ pruned: 1 });
    const again = await cli(['enqueue', 'digest', 'weekly', ...db]);
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
  });

  it('two worker processes take nothing of a paused queue, and everything once it is resumed', async () => {
    const store = postgresStore({ pool, schema });
    try {
      await cli(['queue', 'pause', 'mail', '--new-queue', ...db]);
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push((await cliJson(['enqueue', 'mail', 'send', `{"to":"u${i}@x"}`, '--new-queue', ...db])).job.id);
      const workers = [startCli(['worker', WORKER, ...db]), startCli(['worker', WORKER, ...db])];
      try {
        await Promise.all(workers.map((worker) => worker.waitFor(/worker running 1 queue/)));
        // Started, each has claimed once (a supervisor claims at start) and been woken by nothing.
        for (const id of ids) expect((await store.getJob({ id }))?.state).toBe('pending');
        const { rows } = await pool.query<{ now: Date }>('select now()');
        const beforeResume = rows[0]!.now.getTime();
        const resumed = await cliJson(['queue', 'resume', 'mail', ...db]);
        expect(resumed.queue.pausedAt).toBeNull();
        await vi.waitFor(
          async () => {
            for (const id of ids) expect((await store.getJob({ id }))?.state).toBe('completed');
          },
          { timeout: 20_000, interval: 50 },
        );
        for (const id of ids) {
          const events = await store.getJobEvents({ id });
          expect(events.map((e) => e.toState)).toEqual(['pending', 'running', 'completed']);
          expect(events[1]!.at.getTime()).toBeGreaterThanOrEqual(beforeResume);
        }
      } finally {
        for (const worker of workers) worker.child.kill('SIGTERM');
        await Promise.all(workers.map((worker) => worker.exited));
      }
    } finally {
      await store.close();
    }
  });
});
