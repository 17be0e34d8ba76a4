/**
 * `jobvisor inspect` and `jobvisor diagram` as a user runs them (`node dist/cli/main.js …`):
 * the diagrams need no store; the inspector serves a migrated PostgreSQL schema until SIGINT.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { postgresStore } from '../../src/adapters/postgres/index.js';
import { cli, lines, requireBuiltCli, startCli } from '../support/cli.js';
import { describePostgres, dropSchema, freshSchema, testPool } from '../support/postgres.js';

requireBuiltCli();

describe('jobvisor diagram', () => {
  it('prints the job machine as Mermaid by default', async () => {
    const { code, stdout, stderr } = await cli(['diagram']);
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/^stateDiagram-v2\n {2}\[\*\] --> claimed\n/);
    expect(stdout).toContain('running --> completing : handler.resolved');
  });

  it('prints the supervisor machine as JSON', async () => {
    const { code, stdout } = await cli(['diagram', '--machine', 'supervisor', '--format', 'json']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ id: 'supervisor', initial: 'idle', states: { running: { type: 'parallel' } } });
  });

  it('refuses an unknown format or machine with the usage exit code', async () => {
    for (const args of [['--format', 'svg'], ['--machine', 'queue']]) {
      const { code, stderr } = await cli(['diagram', ...args]);
      expect(code).toBe(2);
      expect(lines(stderr)).toHaveLength(1);
    }
  });
});

describe('jobvisor inspect: bad input, refused before connecting', () => {
  it.each([
    [['--port', '70000'], "option '--port <n>' argument '70000' is invalid. expected a port from 0 to 65535."],
    [['--token', 'short'], "option '--token [token]' argument 'short' is invalid. expected at least 8 characters."],
    [['--host', '0.0.0.0'], '--host 0.0.0.0 is not loopback: give --token, which every request will then need'],
  ])('%j', async (args, message) => {
    const { code, stderr } = await cli(['inspect', '--database-url', 'postgres://postgres@127.0.0.1:1/none', ...args]);
    expect(code).toBe(2);
    expect(stderr).toBe(`jobvisor: ${message}\n`);
  });
});

describePostgres('jobvisor inspect on PostgreSQL', (url) => {
  const schema = freshSchema('jv_cli_inspect');
  let pool: pg.Pool;

  beforeAll(async () => {
    pool = testPool(url);
    const store = postgresStore({ pool, schema });
    await store.migrate();
    await store.enqueueJobs({ jobs: [{ queue: 'mail', kind: 'send', payload: { to: 'a@example.com' }, maxAttempts: 1 }] });
    await store.close();
  });

  afterAll(async () => {
    await dropSchema(pool, schema);
    await pool.end();
  });

  it('serves the page for the store until SIGINT, with actions behind the token it printed', async () => {
    const running = startCli(['inspect', '--database-url', url, '--schema', schema, '--port', '0', '--token']);
    await running.waitFor(/^token: \S+$/m);
    const { stdout } = running.output();
    const base = /^inspector for .*: (http:\/\/127\.0\.0\.1:\d+\/)$/m.exec(stdout)![1]!;
    const token = /^token: (\S+)$/m.exec(stdout)![1]!;
    expect(token.length).toBeGreaterThanOrEqual(20);

    // Its own queue's jobs: the lease-token test adds a job to the schema too, in either order.
    const jobs = (await (await fetch(new URL('/api/jobs?queue=mail', base))).json()) as { jobs: Array<{ id: string }> };
    expect(jobs.jobs).toEqual([expect.objectContaining({ queue: 'mail', kind: 'send', state: 'pending' })]);
    const cancel = new URL(`/api/jobs/${jobs.jobs[0]!.id}/cancel`, base);
    expect((await fetch(cancel, { method: 'POST' })).status).toBe(403);
    const cancelled = await fetch(cancel, { method: 'POST', headers: { 'x-jobvisor-token': token } });
    expect(await cancelled.json()).toMatchObject({ job: { state: 'cancelled' } });

    running.child.kill('SIGINT');
    expect(await running.exited).toEqual({ code: 0, signal: null });
    await expect(fetch(new URL('/api/info', base))).rejects.toThrow();
  });

  it("--worker-module: the enqueue form checks a job against the module's queues", async () => {
    const running = startCli(['inspect', '--database-url', url, '--schema', schema, '--port', '0', '--token', '--worker-module', 'test/cli/fixtures/worker.mjs']);
    await running.waitFor(/^token: \S+$/m);
    const { stdout } = running.output();
    const base = /^inspector for .*: (http:\/\/127\.0\.0\.1:\d+\/)$/m.exec(stdout)![1]!;
    const token = /^token: (\S+)$/m.exec(stdout)![1]!;
    const info = (await (await fetch(new URL('/api/info', base))).json()) as { queues: unknown };
    expect(info.queues).toEqual([{ name: 'mail', kinds: ['send', 'bounce', 'slow'], limits: expect.objectContaining({ concurrency: expect.any(Number), maxAttempts: expect.any(Number) }) }]);
    const enqueue = (kind: string) =>
      fetch(new URL('/api/jobs', base), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-jobvisor-token': token },
        body: JSON.stringify({ queue: 'mail', kind, payload: { to: 'b@example.com' } }),
      });
    expect(await (await enqueue('fax')).json()).toEqual({ error: 'kind: queue "mail" has no handler for kind "fax" (it has send, bounce, slow)' });
    const created = (await (await enqueue('send')).json()) as { created: boolean; job: { id: string } };
    expect(created.created).toBe(true);
    const store = postgresStore({ pool, schema });
    expect(await store.getJob({ id: created.job.id })).toMatchObject({ queue: 'mail', kind: 'send', state: 'pending' });
    // The first test counts the schema's mail jobs, in either order.
    expect(await store.deleteJob({ id: created.job.id })).toMatchObject({ deleted: true });
    await store.close();
    running.child.kill('SIGINT');
    expect(await running.exited).toEqual({ code: 0, signal: null });
  });

  it('job, jobs and cancel --json never print a lease token', async () => {
    const store = postgresStore({ pool, schema });
    const [held] = await store.enqueueJobs({ jobs: [{ queue: 'held', kind: 'wait', payload: {}, maxAttempts: 1 }] });
    const [claimed] = await store.claimJobs({ workerId: 'w-cli', leaseMs: 60_000, queues: [{ queue: 'held', limit: 1 }] });
    await store.close();
    expect(claimed!.leaseToken).toBeTruthy();
    const db = ['--database-url', url, '--schema', schema, '--json'];
    for (const args of [['job', held!.job.id], ['jobs', '--queue', 'held'], ['cancel', held!.job.id]]) {
      const { code, stdout, stderr } = await cli([...args, ...db]);
      expect(code, stderr).toBe(0);
      expect(stdout).toContain('w-cli');
      expect(stdout).not.toContain('leaseToken');
      expect(stdout).not.toContain(claimed!.leaseToken);
    }
  });
});
