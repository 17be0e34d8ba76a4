/**
 * `jobvisor signal <id> <name> [payload]` as a user runs it, on PostgreSQL: a job waiting for
 * the signal wakes and its next wait receives the payload; a job not waiting keeps it; an
 * ended job exits 5 and a missing one 3; `jobvisor job` shows the wait and the stored steps.
 * The waiting job is made in-process through the store.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../../src/adapters/postgres/index.js';
import { NEVER } from '../../src/adapters/store.js';
import type { SqlJobStore } from '../../src/adapters/sql/sql-store.js';
import type { ClaimedJob } from '../../src/types.js';
import { cli, cliJson, lines, requireBuiltCli } from '../support/cli.js';
import { describePostgres, dropSchema, freshSchema, testPool } from '../support/postgres.js';

requireBuiltCli();

describePostgres('jobvisor signal on PostgreSQL', (url) => {
  const schema = freshSchema('jv_cli_signal');
  const db = ['--database-url', url, '--schema', schema];
  let pool: pg.Pool;
  let store: SqlJobStore;

  beforeAll(async () => {
    pool = testPool(url);
    store = postgresStore({ pool, schema });
    await store.migrate();
  });

  afterAll(async () => {
    await store.close();
    await dropSchema(pool, schema);
    await pool.end();
  });

  /** A job running in a queue of the test's own (the tests run in any order). */
  async function claimed(queue: string): Promise<ClaimedJob> {
    await store.enqueueJobs({ jobs: [{ queue, kind: 'ship', payload: {}, maxAttempts: 3 }] });
    const [job] = await store.claimJobs({ workerId: 'w1', leaseMs: 60_000, queues: [{ queue, limit: 1 }] });
    return job!;
  }

  const receive = (job: ClaimedJob, name: string) =>
    store.suspendIfRunning({ id: job.id, leaseToken: job.leaseToken, kind: 'signal', name, signal: name, wake: { at: NEVER } });

  it('wakes a job waiting for the signal; its next wait receives the payload', async () => {
    const job = await claimed('woken');
    expect(await receive(job, 'shipped')).toEqual({ answer: 'sleeping' });
    const { code, stdout, stderr } = await cli(['signal', job.id, 'shipped', '{"carrier": "dhl"}', ...db]);
    expect([code, stderr]).toEqual([0, '']);
    expect(stdout).toBe(`job ${job.id} woke: signal "shipped" delivered, the job is pending again\n`);
    const [again] = await store.claimJobs({ workerId: 'w2', leaseMs: 60_000, queues: [{ queue: 'woken', limit: 1 }] });
    expect(await receive(again!, 'shipped')).toEqual({ answer: 'received', payload: { carrier: 'dhl' } });
  });

  it('jobvisor job shows what the job waits for and its stored steps', async () => {
    const job = await claimed('shown');
    expect(await store.checkpointSteps({ steps: [{ id: job.id, leaseToken: job.leaseToken, name: 'charge', result: { chargeId: 'ch_1' } }] })).toEqual([true]);
    expect(await receive(job, 'shipped')).toEqual({ answer: 'sleeping' });
    const { code, stdout } = await cli(['job', job.id, ...db]);
    expect(code).toBe(0);
    expect(stdout).toContain(`  waits for    signal "shipped" (jobvisor signal ${job.id} shipped [payload])\n`);
    const steps = lines(stdout.slice(stdout.indexOf('steps (stored'), stdout.indexOf('\nhistory')));
    expect(steps.map((line) => line.trim().split(/\s{2,}/))).toEqual([
      ['steps (stored: a replay gets it back without running or waiting again)'],
      ['NAME', 'KIND', 'STATUS', 'STORED', 'VALUE'],
      ['charge', 'step', 'stored', 'yes', '{"chargeId":"ch_1"}'],
      ['shipped', 'signal', 'waiting', 'no'],
    ]);
  });

  it('keeps a signal for a job not waiting (--json), the payload from stdin', async () => {
    const job = await claimed('kept');
    expect(await cliJson(['signal', job.id, 'approved', ...db])).toEqual({ id: job.id, name: 'approved', delivered: 'queued', state: 'running' });
    const { stdout } = await cli(['signal', job.id, 'approved', '-', ...db], { input: '[1, 2]' });
    expect(stdout).toBe(`job ${job.id} is running: signal "approved" kept in its mailbox for its next wait for "approved"\n`);
    expect(await receive(job, 'approved')).toEqual({ answer: 'received', payload: {} });
    expect(await receive(job, 'approved')).toEqual({ answer: 'received', payload: [1, 2] });
  });

  it('an ended job exits 5, a missing one 3, a payload over the limit 2', async () => {
    const job = await claimed('ended');
    await store.setStatesIfRunning({ outcomes: [{ id: job.id, leaseToken: job.leaseToken, state: 'completed', result: null }] });
    const ended = await cli(['signal', job.id, 'approved', ...db]);
    expect([ended.code, lines(ended.stderr)]).toEqual([5, [`jobvisor: job ${job.id} has ended (completed): a signal to it could never be received`]]);
    const missing = await cli(['signal', '999999', 'approved', ...db]);
    expect(missing.code).toBe(3);
    expect(lines(missing.stderr)).toEqual([expect.stringMatching(/^jobvisor: .*999999/)]);
    const big = await cli(['signal', job.id, 'approved', '-', ...db], { input: JSON.stringify('x'.repeat(1_048_577)) });
    expect(big.code).toBe(2);
    expect(lines(big.stderr)).toEqual([expect.stringMatching(/^jobvisor: payload is 1048579 bytes of JSON, over the limit of 1048576/)]);
  });
});
