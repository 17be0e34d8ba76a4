/**
 * Every command's happy path, and the bad input that needs a database, run as a user would
 * (`node dist/cli/main.js …`) against the PostgreSQL server, each describe block in a schema
 * of its own. The store read back in-process checks what the commands wrote.
 */
import { rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../../src/adapters/postgres/index.js';
import type { SqlJobStore } from '../../src/adapters/sql/sql-store.js';
import type { JobRecord } from '../../src/types.js';
import { cli, cliJson, cliOnTerminal, cliWithClosedStdout, lines, requireBuiltCli, startCli } from '../support/cli.js';
import { describePostgres, dropSchema, freshSchema, testPool } from '../support/postgres.js';

requireBuiltCli();

const WORKER = 'test/cli/fixtures/worker.mjs';

describePostgres('jobvisor CLI on PostgreSQL', (url) => {
  let pool: pg.Pool;
  const schemas: string[] = [];
  const stores: SqlJobStore[] = [];

  beforeAll(() => {
    pool = testPool(url);
  });

  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
    for (const schema of schemas) await dropSchema(pool, schema);
    await pool.end();
  });

  /** A schema of the block's own: the CLI's connection arguments and a store to check with. */
  function isolated(prefix: string) {
    const schema = freshSchema(prefix);
    schemas.push(schema);
    const store = postgresStore({ connectionString: url, schema });
    stores.push(store);
    return { schema, db: ['--database-url', url, '--schema', schema], store };
  }

  /** The worker's log line for job `id`'s `event` (`started` is logged at --log-level debug):
   *  it is written when the actor reaches that state, after the row says so. No polling. */
  function jobLogged(id: string, event: string): RegExp {
    return new RegExp(`"msg":"job ${id} [^"]* ${event} `);
  }

  // Two stories told in order over one schema each (before and after migrating; a queue made
  // by its first enqueue, then listed, counted, cancelled, retried, pruned): exempt from the
  // suite's shuffle by name, not by accident (test/README.md).
  describe('migrate', { shuffle: false }, () => {
    const { schema, db } = isolated('jv_cli_migrate');

    it('other commands refuse a schema that is not migrated, with the migrate command for it', async () => {
      const { code, stderr } = await cli(['stats', ...db]);
      expect(code).toBe(4);
      expect(lines(stderr)).toHaveLength(1);
      const shown = url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
      const hint = `run \`jobvisor migrate --database-url '${shown}' --schema ${schema}\` first`;
      expect(stderr).toMatch(new RegExp(`^jobvisor: schema "${schema}" at .* holds no jobvisor tables: `));
      expect(stderr.endsWith(`: ${hint}\n`)).toBe(true);
      // From the environment, the URL need not be given again.
      const fromEnv = await cli(['stats', '--schema', schema], { env: { DATABASE_URL: url } });
      expect(fromEnv.stderr.endsWith(`: run \`jobvisor migrate --schema ${schema}\` first\n`)).toBe(true);
    });

    it('applies the migrations, then finds nothing to do', async () => {
      const first = await cli(['migrate', ...db]);
      expect(first.code).toBe(0);
      expect(first.stdout).toMatch(new RegExp(`^applied migrations? 1(, \\d+)* to schema "${schema}" at postgres://`));
      expect(await cliJson(['migrate', ...db])).toEqual({ schema, applied: [] });
      // The URL as given, its password (if any) masked.
      const shown = url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
      expect((await cli(['migrate', ...db])).stdout).toContain(`schema "${schema}" at ${shown}`);
    });

    it('reads DATABASE_URL from the environment', async () => {
      const result = await cliJson(['migrate', '--schema', schema], { env: { DATABASE_URL: url } });
      expect(result).toEqual({ schema, applied: [] });
    });

    it('refuses a schema missing one migration, or holding a newer build’s breaking one, naming it', async () => {
      const { rows } = await pool.query(`delete from "${schema}".migrations where version = (select max(version) from "${schema}".migrations) returning version, name, applied_at`);
      const [last] = rows as { version: number; name: string; applied_at: Date }[];
      const lacking = await cli(['stats', ...db]);
      expect(lacking.code).toBe(4);
      expect(lines(lacking.stderr)).toEqual([expect.stringMatching(new RegExp(`^jobvisor: schema "${schema}" at .* lacks ${last!.name}: run \\\`jobvisor migrate `))]);
      await pool.query(`insert into "${schema}".migrations (version, name, applied_at) values ($1, $2, $3)`, [last!.version, last!.name, last!.applied_at]);
      await pool.query(`insert into "${schema}".migrations (version, name, breaking) values (9998, '9998-a-new-claim', true)`);
      const newer = await cli(['stats', ...db]);
      expect(newer.code).toBe(4);
      expect(lines(newer.stderr)).toEqual([
        expect.stringMatching(/was migrated by a newer jobvisor \(9998-a-new-claim\), which this one cannot run against: upgrade jobvisor$/),
      ]);
      const worker = await cli(['worker', WORKER, ...db]);
      expect(worker.code).toBe(4);
      expect(worker.stderr).toContain('9998-a-new-claim');
      await pool.query(`delete from "${schema}".migrations where version = 9998`);
      expect((await cli(['stats', ...db])).code).toBe(0);
    });
  });

  describe('enqueue, jobs, job, stats, cancel, retry, prune', { shuffle: false }, () => {
    const { db, store } = isolated('jv_cli_jobs');

    beforeAll(async () => {
      expect((await cli(['migrate', ...db])).code).toBe(0);
    });

    it('enqueue refuses a queue no job uses, unless --new-queue', async () => {
      const refused = await cli(['enqueue', 'emails', 'welcome', '{"to":"ana"}', ...db]);
      expect(refused.code).toBe(2);
      expect(lines(refused.stderr)).toEqual([
        'jobvisor: unknown queue "emails": no job in the store uses it (check the name; --new-queue enqueues its first job, --worker-module checks against your queues)',
      ]);
      const first = await cli(['enqueue', 'emails', 'welcome', '{"to":"ana"}', '--new-queue', ...db]);
      expect(first.code).toBe(0);
      expect(first.stdout).toMatch(/^enqueued job \d+ \(emails\/welcome, due \d{4}-/);
      // Now the queue is known.
      expect((await cli(['enqueue', 'emails', 'welcome', '{"to":"bo"}', ...db])).code).toBe(0);
    });

    it('enqueue passes every option, and a unique key returns the live job', async () => {
      const runAt = '2030-01-01T09:00:00.000Z';
      const args = ['enqueue', 'emails', 'digest', '{"week":12}', '--priority', '-5', '--run-at', runAt, '--max-attempts', '7', '--unique-key', 'digest:12', ...db];
      const { created, job } = await cliJson(args);
      expect(created).toBe(true);
      expect(job).toMatchObject({ queue: 'emails', kind: 'digest', payload: { week: 12 }, priority: -5, runAt, maxAttempts: 7, uniqueKey: 'digest:12', state: 'pending' });
      const again = await cliJson(args);
      expect(again).toMatchObject({ created: false, job: { id: job.id } });
      const text = await cli(args.filter((a) => a !== '--json'));
      expect(text.stdout).toBe(`job ${job.id} (pending) already holds unique key "digest:12" in emails: nothing enqueued\n`);
      expect(text.code).toBe(0);
      // A duration from now, by the database's clock (the enqueue's createdAt), not the CLI's.
      const later = await cliJson(['enqueue', 'emails', 'digest', '--run-at', '2h', ...db]);
      expect(Date.parse(later.job.runAt) - Date.parse(later.job.createdAt)).toBe(7_200_000);
    });

    it('enqueue replaces by unique key (--on-conflict) and debounces (--debounce)', async () => {
      const first = await cliJson(['enqueue', 'emails', 'report', '{"n":1}', '--unique-key', 'report:1', ...db]);
      const replaced = await cli(['enqueue', 'emails', 'report', '{"n":2}', '--unique-key', 'report:1', '--on-conflict', 'replace', ...db]);
      expect(replaced.stdout).toMatch(new RegExp(`^job ${first.job.id} \\(pending\\) held unique key "report:1" in emails: replaced its payload, due `));
      expect((await store.getJob({ id: first.job.id }))?.payload).toEqual({ n: 2 });
      const burst = await cliJson(['enqueue', 'emails', 'report', '{"n":3}', '--debounce', 'r', '--debounce-delay', '1h', '--debounce-max-wait', '2h', ...db]);
      const again = await cliJson(['enqueue', 'emails', 'report', '{"n":4}', '--debounce', 'r', '--debounce-delay', '1h', ...db]);
      expect(again).toMatchObject({ created: false, job: { id: burst.job.id, payload: { n: 4 } } });
      expect(Date.parse(again.job.runAt) - Date.parse(again.job.updatedAt)).toBe(3_600_000);
      for (const id of [first.job.id, burst.job.id]) await store.deleteJob({ id });
    });

    it('enqueue ranks a job for its tenant (--tenant, --tenant-weight), and shows it and a debounce key with the job', async () => {
      const a = await cliJson(['enqueue', 'emails', 'report', '{}', '--tenant', 'acme', '--tenant-weight', '2', ...db]);
      expect(a.job).toMatchObject({ tenant: 'acme', debounceKey: null });
      const burst = await cliJson(['enqueue', 'emails', 'report', '{}', '--debounce', 'digest', '--debounce-delay', '1h', ...db]);
      expect(burst.job).toMatchObject({ tenant: null, debounceKey: 'digest' });
      const shown = await cli(['job', burst.job.id, ...db]);
      expect((await cli(['job', a.job.id, ...db])).stdout).toMatch(/tenant\s+acme/);
      expect(shown.stdout).toMatch(/debounce key\s+digest/);
      for (const id of [a.job.id, burst.job.id]) await store.deleteJob({ id });
    });

    it('enqueue takes a payload too long for the command line from a file or stdin', async () => {
      // Linux refuses one argument over 128 KiB (E2BIG: "Argument list too long").
      const text = JSON.stringify({ body: 'x'.repeat(200_000) });
      const file = join(tmpdir(), `jobvisor-payload-${process.pid}.json`);
      await writeFile(file, text);
      try {
        const fromFile = await cliJson(['enqueue', 'emails', 'bulk', '--payload-file', file, ...db]);
        expect(fromFile.job.payload).toEqual(JSON.parse(text));
      } finally {
        await rm(file, { force: true });
      }
      const fromStdin = await cli(['enqueue', 'emails', 'bulk', '-', '--json', ...db], { input: text });
      expect(fromStdin.code, fromStdin.stderr).toBe(0);
      const { job } = JSON.parse(fromStdin.stdout);
      expect((await store.getJob({ id: job.id }))?.payload).toEqual(JSON.parse(text));
      // Not left among the jobs the tests below count.
      for (const { id } of await store.listJobs({ kind: 'bulk' })) await store.deleteJob({ id });
    });

    it('enqueue --worker-module takes the queue settings from the module', async () => {
      const { job } = await cliJson(['enqueue', 'mail', 'send', '{"to":"ana@x"}', '--worker-module', WORKER, ...db]);
      expect(job).toMatchObject({ queue: 'mail', kind: 'send', maxAttempts: 3, state: 'pending' });
    });

    it('jobs lists newest first, filters, and pages', async () => {
      const all = await cliJson<{ jobs: JobRecord[]; nextBefore: string | null }>(['jobs', ...db]);
      expect(all.jobs.map((j) => j.kind)).toEqual(['send', 'digest', 'digest', 'welcome', 'welcome']);
      expect(all.nextBefore).toBeNull();
      const welcome = await cliJson(['jobs', '--queue', 'emails', '--kind', 'welcome', '--state', 'pending', ...db]);
      expect(welcome.jobs).toHaveLength(2);
      const page1 = await cliJson(['jobs', '--limit', '2', ...db]);
      expect(page1.jobs.map((j: JobRecord) => j.id)).toEqual(all.jobs.slice(0, 2).map((j) => j.id));
      const page2 = await cliJson(['jobs', '--limit', '2', '--before', page1.nextBefore, ...db]);
      expect(page2.jobs.map((j: JobRecord) => j.id)).toEqual(all.jobs.slice(2, 4).map((j) => j.id));
      const text = await cli(['jobs', '--limit', '2', ...db]);
      expect(lines(text.stdout)[0]).toMatch(/^ *ID +QUEUE +KIND +STATE +ATTEMPT +UPDATED +ERROR$/);
      expect(lines(text.stdout).at(-1)).toBe(`more: --before ${page1.nextBefore}`);
      expect((await cli(['jobs', '--queue', 'nothing', ...db])).stdout).toBe('no jobs\n');
    });

    it('job shows the row and its history; an unknown id exits 3', async () => {
      const [newest] = (await cliJson(['jobs', '--limit', '1', ...db])).jobs as JobRecord[];
      const detail = await cliJson(['job', newest!.id, ...db]);
      expect(detail.job).toMatchObject({ id: newest!.id, queue: 'mail', kind: 'send', state: 'pending' });
      expect(detail.events).toMatchObject([{ fromState: null, toState: 'pending', attempt: 0 }]);
      const text = await cli(['job', newest!.id, ...db]);
      expect(text.stdout).toContain(`job ${newest!.id}  mail/send  pending`);
      expect(text.stdout).toContain('payload      {"to":"ana@x"}');
      expect(text.stdout).toMatch(/\(enqueued\) +pending +0/);
      const missing = await cli(['job', '999999', ...db]);
      expect(missing.code).toBe(3);
      expect(lines(missing.stderr)).toEqual(['jobvisor: no job with id 999999']);
    });

    it('stats counts each queue by state', async () => {
      const { queues, total } = await cliJson(['stats', ...db]);
      expect(queues.emails).toMatchObject({ pending: 4, running: 0, completed: 0 });
      expect(queues.mail).toMatchObject({ pending: 1 });
      expect(total.pending).toBe(5);
      const text = await cli(['stats', ...db]);
      expect(lines(text.stdout)).toEqual([
        'QUEUE   PENDING  RUNNING  RETRYING  COMPLETED  DEAD  SKIPPED  CANCELLED  WAITING  SLEEPING',
        'emails        4        0         0          0     0        0          0        0         0',
        'mail          1        0         0          0     0        0          0        0         0',
        '(all)         5        0         0          0     0        0          0        0         0',
      ]);
    });

    it('cancel: a pending job is cancelled, twice is fine, a finished or missing one is not', async () => {
      const { job } = await cliJson(['enqueue', 'emails', 'welcome', '{"to":"chen"}', ...db]);
      const cancelled = await cli(['cancel', job.id, ...db]);
      expect([cancelled.code, cancelled.stdout]).toEqual([0, `job ${job.id} is cancelled\n`]);
      const again = await cli(['cancel', job.id, ...db]);
      expect([again.code, again.stdout]).toEqual([0, `job ${job.id} was already cancelled\n`]);
      expect(await cliJson(['cancel', job.id, ...db])).toMatchObject({ cancelled: true, job: { state: 'cancelled' } });
      const missing = await cli(['cancel', '999999', ...db]);
      expect([missing.code, missing.stderr]).toEqual([3, 'jobvisor: no job with id 999999\n']);
    });

    it('retry: a cancelled job runs again; a pending one is not retried (exit 5)', async () => {
      const { jobs } = await cliJson(['jobs', '--state', 'cancelled', ...db]);
      const id = jobs[0].id as string;
      const retried = await cli(['retry', id, ...db]);
      expect([retried.code, retried.stdout]).toEqual([0, `job ${id} is pending again (attempt 0 of 3 done)\n`]);
      const notAgain = await cli(['retry', id, ...db]);
      expect(notAgain.code).toBe(5);
      expect(lines(notAgain.stderr)).toEqual([`jobvisor: job ${id} is pending: only dead, cancelled or skipped jobs can be retried`]);
      const missing = await cli(['retry', '999999', ...db]);
      expect(missing.code).toBe(3);
    });

    it('prune deletes finished jobs past the cutoff, and only those', async () => {
      const { job } = await cliJson(['enqueue', 'emails', 'welcome', '{"to":"dara"}', ...db]);
      await cliJson(['cancel', job.id, ...db]);
      // Finished just now: older than an hour it is not.
      expect(await cliJson(['prune', '--dead-older-than', '1h', ...db])).toEqual({ pruned: 0 });
      // Cancelled counts as dead for retention; completed and skipped as completed.
      expect(await cliJson(['prune', '--completed-older-than', '0s', ...db])).toEqual({ pruned: 0 });
      const text = await cli(['prune', '--dead-older-than', '0s', ...db]);
      expect([text.code, text.stdout]).toEqual([0, 'pruned 1 job\n']);
      expect(await store.getJob({ id: job.id })).toBeNull();
    });

    it('prune --batch-size: every job past the cutoff, a batch at a time; no progress line off a terminal', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const { job } = await cliJson(['enqueue', 'emails', 'welcome', '{}', ...db]);
        await cliJson(['cancel', job.id, ...db]);
        ids.push(job.id);
      }
      const result = await cli(['prune', '--dead-older-than', '0s', '--batch-size', '2', '--json', ...db]);
      expect([result.code, JSON.parse(result.stdout), result.stderr]).toEqual([0, { pruned: 3 }, '']);
      for (const id of ids) expect(await store.getJob({ id })).toBeNull();
    });

    it('retry --flow: every failed job of a flow back, each waiting for its parents; retry of a node waits too', async () => {
      const flow = await store.enqueueFlow({
        name: 'f',
        jobs: [
          { queue: 'mail', kind: 'k', payload: {}, maxAttempts: 1, node: 'a', dependsOn: [] },
          { queue: 'mail', kind: 'k', payload: {}, maxAttempts: 1, node: 'b', dependsOn: [{ index: 0, name: 'a', onFailure: 'cancel' }] },
        ],
      });
      const [, b] = flow.jobs;
      await store.cancelJob({ id: b!.id });
      const node = await cli(['retry', b!.id, ...db]);
      expect([node.code, node.stdout]).toEqual([0, `job ${b!.id} is waiting again, for its parents that have not ended\n`]);
      await store.cancelFlow({ id: flow.flowId });
      expect(await cliJson(['retry', '--flow', flow.flowId, ...db])).toEqual({ retried: 2, left: 0 });
      expect((await store.getJob({ id: b!.id }))!.state).toBe('waiting');
      expect((await cli(['retry', '--flow', '999999', ...db])).code).toBe(3);
      expect((await cli(['retry', ...db])).code).toBe(2);
    });
  });

  describe('worker', () => {
    const { db, store } = isolated('jv_cli_worker');

    beforeAll(async () => {
      expect((await cli(['migrate', ...db])).code).toBe(0);
    });

    // The two signal tests leave a job that runs until aborted: each has a schema of its own,
    // so that no other test (in any order) finds it due, and neither needs the other.
    const stopping = isolated('jv_cli_worker_stop');
    const interrupted = isolated('jv_cli_worker_sigint');

    it('runs the module until SIGTERM, then stops gracefully and releases what still runs', async () => {
      const { db, store } = stopping;
      expect((await cli(['migrate', ...db])).code).toBe(0);
      const enqueue = async (kind: string) =>
        (await cliJson(['enqueue', 'mail', kind, '{"to":"ana@x"}', '--worker-module', WORKER, ...db])).job.id as string;
      const [send, bounce, slow] = [await enqueue('send'), await enqueue('bounce'), await enqueue('slow')];
      const worker = startCli(['worker', WORKER, '--grace', '300ms', '--log-level', 'debug', ...db]);
      await worker.waitFor(/"msg":"worker running 1 queue; SIGTERM or SIGINT stops it"/);
      await worker.waitFor(jobLogged(send, 'completed'));
      expect(await store.getJob({ id: send })).toMatchObject({ state: 'completed', result: { sentTo: 'ana@x' } });
      // The supervisor's dead line has the shape of every job line: job, jobEvent, error.
      await worker.waitFor(new RegExp(`"job":\\{"id":"${bounce}","queue":"mail","kind":"bounce","attempt":1,"maxAttempts":\\d+\\},"jobEvent":"dead","error":\\{"code":"permanent_error"[^\\n]*"msg":"job ${bounce} mail/bounce is dead \\(attempt 1 of`));
      expect(await store.getJob({ id: bounce })).toMatchObject({ state: 'dead', error: { code: 'permanent_error' } });
      await worker.waitFor(jobLogged(slow, 'started'));
      expect(await store.getJob({ id: slow })).toMatchObject({ state: 'running' });
      worker.child.kill('SIGTERM');
      expect(await worker.exited).toEqual({ code: 0, signal: null });
      const { stdout, stderr } = worker.output();
      expect(stderr).toBe('');
      expect(stdout).toContain('"msg":"supervisor stopped"');
      expect(stdout).toContain('"signal":"SIGTERM"');
      // Released, like a snooze, with no attempt spent: one more allowed, and every display agrees.
      expect(await store.getJob({ id: slow })).toMatchObject({ state: 'retrying', attempt: 1, maxAttempts: 4, error: { code: 'worker_shutdown' } });
      expect((await cli(['job', slow, ...db])).stdout).toContain('  attempt      1 of 4\n');
      expect((await cli(['jobs', '--kind', 'slow', ...db])).stdout).toMatch(/ retrying +1\/4 /);
      expect(stdout).toMatch(new RegExp(`"msg":"job ${slow} mail/slow released for retry, no attempt spent \\(attempt 1 of 4, \\d+ ms, again in 0 ms\\): worker_shutdown: `));
    });

    it('a second signal while stopping quits at once (exit 130)', async () => {
      const { db, store } = interrupted;
      expect((await cli(['migrate', ...db])).code).toBe(0);
      const { job } = await cliJson(['enqueue', 'mail', 'slow', '{"to":"ana@x"}', '--worker-module', WORKER, ...db]);
      const worker = startCli(['worker', WORKER, '--grace', '60s', '--log-level', 'debug', ...db]);
      await worker.waitFor(/worker running/);
      await worker.waitFor(jobLogged(job.id, 'started'));
      expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'running' });
      worker.child.kill('SIGINT');
      await worker.waitFor(/"msg":"stopping/);
      worker.child.kill('SIGINT');
      expect((await worker.exited).code).toBe(130);
    });

    it('--drain runs what is due, then exits', async () => {
      const { job } = await cliJson(['enqueue', 'mail', 'send', '{"to":"bo@x"}', '--worker-module', WORKER, ...db]);
      const { code, stdout } = await cli(['worker', WORKER, '--drain', '--log-level', 'info', ...db]);
      expect(code).toBe(0);
      expect(stdout).toMatch(/"attempts":1,"msg":"drained"/);
      expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'completed' });
    });

    it('runs the schedules the module exports', async () => {
      const worker = startCli(['worker', 'test/cli/fixtures/scheduled.mjs', ...db]);
      await worker.waitFor(/"msg":"worker running 1 queue and 1 schedule; SIGTERM or SIGINT stops it"/);
      await worker.waitFor(/"msg":"job \d+ clock\/tick completed/);
      worker.child.kill('SIGTERM');
      expect((await worker.exited).code).toBe(0);
      expect(await store.listJobs({ queue: 'clock', state: 'completed', limit: 1 })).toMatchObject([{ kind: 'tick', result: { ticked: '1s' } }]);
    });

    it('logs one line per job event: JSON off a terminal, readable on one or with --log-format pretty', async () => {
      const enqueue = async () => (await cliJson(['enqueue', 'mail', 'send', '{"to":"log@x"}', '--worker-module', WORKER, ...db])).job.id as string;
      const completed = (id: string) => `job ${id} mail/send completed \\(attempt 1 of 3, \\d+ ms\\)`;
      const prettyLine = (id: string) => new RegExp(`^\\[\\d\\d:\\d\\d:\\d\\d\\.\\d{3}\\] INFO: ${completed(id)}$`, 'm');

      const first = await enqueue();
      const json = await cli(['worker', WORKER, '--drain', ...db]);
      expect(json.code, json.stderr).toBe(0);
      const entries = lines(json.stdout).map((line) => JSON.parse(line));
      expect(entries.find((e) => e.jobEvent === 'completed')).toMatchObject({
        level: 30,
        job: { id: first, queue: 'mail', kind: 'send', attempt: 1, maxAttempts: 3 },
        durationMs: expect.any(Number),
        msg: expect.stringMatching(new RegExp(`^${completed(first)}$`)),
      });

      const second = await enqueue();
      const pretty = await cli(['worker', WORKER, '--drain', '--log-format', 'pretty', ...db]);
      expect(pretty.code, pretty.stderr).toBe(0);
      expect(pretty.stdout).toMatch(prettyLine(second));

      const third = await enqueue();
      const terminal = await cliOnTerminal(['worker', WORKER, '--drain', ...db]);
      expect(terminal.code, terminal.stdout).toBe(0);
      expect(terminal.stdout).toMatch(prettyLine(third));
      expect(terminal.stdout).not.toMatch(/^\{"level"/m);
    });

    it('a promise a handler never awaited rejects: logged, and the worker keeps running', async () => {
      const module = 'test/cli/fixtures/forgets.mjs';
      const forget = (await cliJson(['enqueue', 'careless', 'forget', '--worker-module', module, ...db])).job.id;
      const send = (await cliJson(['enqueue', 'careless', 'send', '--worker-module', module, ...db])).job.id;
      const { code, stdout, stderr } = await cli(['worker', module, '--drain', ...db]);
      expect(stderr).toBe('');
      expect(code).toBe(0);
      expect(lines(stdout).map((line) => JSON.parse(line))).toContainEqual(
        expect.objectContaining({
          level: 50,
          msg: 'a promise rejected and nothing handled it (a fire-and-forget promise in a handler?); the worker keeps running',
          err: expect.objectContaining({ message: 'nobody awaited me' }),
        }),
      );
      expect(await store.getJob({ id: forget })).toMatchObject({ state: 'completed', result: 'returned' });
      expect(await store.getJob({ id: send })).toMatchObject({ state: 'completed', result: 'sent' });
    });

    it('an exception nothing caught is logged; the worker stops gracefully, releasing what runs, and exits 1', async () => {
      const module = 'test/cli/fixtures/throws-later.mjs';
      const hang = (await cliJson(['enqueue', 'careless', 'hang', '--worker-module', module, ...db])).job.id;
      const throwLater = (await cliJson(['enqueue', 'careless', 'throwLater', '--worker-module', module, ...db])).job.id;
      const { code, stdout, stderr } = await cli(['worker', module, '--grace', '1ms', ...db]);
      expect(code).toBe(1);
      expect(lines(stderr)).toEqual(['jobvisor: the worker stopped after an exception nothing caught: thrown in a timer']);
      const logged = lines(stdout).map((line) => JSON.parse(line));
      expect(logged).toContainEqual(
        expect.objectContaining({
          level: 50,
          msg: "an exception nothing caught (a throw in a handler's callback?); the worker stops",
          err: expect.objectContaining({ message: 'thrown in a timer' }),
        }),
      );
      expect(await store.getJob({ id: throwLater })).toMatchObject({ state: 'completed', result: 'returned' });
      // Released by the stop: due again, no attempt spent.
      expect(await store.getJob({ id: hang })).toMatchObject({ state: 'retrying', error: { code: 'worker_shutdown' } });
    });

    it('a stdout whose reader is gone stops the worker as a signal would: exit 0, nothing on stderr', async () => {
      const { code, stderr } = await cliWithClosedStdout(['worker', WORKER, ...db]);
      expect(stderr).toBe('');
      expect(code).toBe(0);
    });

    it('a module whose queues the supervisor refuses is a usage error (its default export read too)', async () => {
      const { code, stderr } = await cli(['worker', 'test/cli/fixtures/undeclared-gate.mjs', ...db]);
      expect(code).toBe(2);
      expect(lines(stderr)).toEqual(['jobvisor: queue "render" gate: gate "gpu" is not declared in the supervisor\'s gates']);
    });
  });

  describe('a server that never answers', () => {
    let server: Server;
    let port: number;
    const sockets = new Set<Socket>();

    beforeAll(async () => {
      server = createServer((socket) => sockets.add(socket));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    // The message says the connect timeout fired (a client without one would hang until the
    // test's own timeout); how soon is the benchmark's business, not this test's.
    it('gives up after --connect-timeout, with exit 4', async () => {
      const { code, stderr } = await cli(['stats', '--database-url', `postgres://postgres@127.0.0.1:${port}/test`, '--connect-timeout', '300']);
      expect(code).toBe(4);
      expect(lines(stderr)).toEqual([`jobvisor: cannot connect to the database at postgres://postgres@127.0.0.1:${port}/test: Connection terminated due to connection timeout`]);
    });
  });
});
