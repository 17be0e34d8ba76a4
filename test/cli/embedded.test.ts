/**
 * The CLI on its embedded store (PGlite in a data directory), with no setup, as a new user
 * meets it: the demo, then its summary read back through the other commands; then a worker
 * module run on the same directory, and the directory's lock. PGlite costs seconds and
 * hundreds of MB per process, so the CLI is started here only a few times.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobEvent, JobRecord } from '../../src/types.js';
import { cli, cliJson, lines, requireBuiltCli, startCli } from '../support/cli.js';

requireBuiltCli();

// A story told in order on one data directory: the demo creates it, the worker comes after.
describe('jobvisor CLI on the embedded store', { shuffle: false }, () => {
  let root: string;
  let dataDir: string;
  let store: string[];

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'jobvisor-cli-embedded-'));
    dataDir = join(root, 'data');
    store = ['--data-dir', dataDir];
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  describe('demo', () => {
    let demo: { code: number | null; stdout: string; stderr: string };

    beforeAll(async () => {
      demo = await cli(['demo', ...store], { timeoutMs: 90_000 });
    }, 120_000);

    it('creates and migrates the store, says so, runs every job to a final state and exits 0', () => {
      expect(demo.code, demo.stderr).toBe(0);
      expect(lines(demo.stderr)).toEqual([
        `jobvisor: creating the embedded database in ${dataDir} (only the first time; a few seconds)`,
        expect.stringMatching(new RegExp(`^jobvisor: applied migrations 1(, \\d+)* to schema "jobvisor" in ${dataDir}$`)),
      ]);
      // Not a terminal: plain progress lines, no escape codes.
      expect(demo.stdout).toMatch(/^\[\d+\.\d s\] \d+\/32 finished: /m);
      expect(demo.stdout).not.toContain('\x1b[');
      expect(demo.stdout).toMatch(/^Done in (\d+\.\d) s: 32 jobs, \d+ attempts\.$/m);
    });

    it('its final states are the store’s', async () => {
      const line = /^Final states: (.*)$/m.exec(demo.stdout)![1]!;
      const printed = Object.fromEntries(line.split(', ').map((pair) => pair.split(' ')).map(([state, n]) => [state, Number(n)]));
      expect(printed).toEqual({ completed: 26, dead: 3, skipped: 2, cancelled: 1 });
      const { total, queues } = await cliJson(['stats', ...store]);
      expect(Object.fromEntries(Object.entries(total).filter(([, n]) => n !== 0))).toEqual(printed);
      expect(Object.keys(queues).sort()).toEqual(['emails', 'reports', 'thumbnails', 'webhooks']);
      // The table per queue, as printed.
      expect(demo.stdout).toMatch(/^ +thumbnails +· +· +· +10 +1 +· +· +· +· +12$/m);
      expect(queues.thumbnails).toMatchObject({ completed: 10, dead: 1 });
    });

    it('its paths through the machine are the jobs’ stored histories', async () => {
      const paths = [...demo.stdout.matchAll(/^ +(\d+)× +(pending(?: → \w+)+) +job (\d+) (\S+)/gm)].map(([, count, path, id, name]) => ({
        count: Number(count),
        path: path!,
        id: id!,
        name: name!,
      }));
      expect(paths.reduce((sum, p) => sum + p.count, 0)).toBe(32);
      const deadline = paths.find((p) => p.name === 'thumbnails/upscale')!;
      expect(deadline.path).toBe('pending → running → retrying → running → dead');
      const { job, events } = await cliJson<{ job: JobRecord; events: JobEvent[] }>(['job', deadline.id, ...store]);
      expect(job).toMatchObject({ state: 'dead', attempt: 2, error: { code: 'deadline_exceeded' } });
      expect(events.map((e) => e.toState).join(' → ')).toBe(deadline.path);
      expect(demo.stdout).toMatch(/pending → running → retrying → running → completed +job \d+ emails\/digest · handler_error: SMTP 421/);
      expect(demo.stdout).toMatch(/pending → running → skipped +job \d+ emails\/newsletter · unknown_kind: /);
      expect(demo.stdout).toMatch(/pending → running → dead +job \d+ reports\/render · permanent_error: /);
      expect(demo.stdout).toMatch(/^Unique key "monthly:acme:2026-05": enqueued twice, one job \(the second enqueue returned job \d+, created: false\)\.$/m);
      expect(demo.stdout).toContain('Gate "gpu" (size 2), shared by thumbnails and reports: at most 2 of their jobs ran at once.');
      expect(demo.stdout).toMatch(/^Dead-job alerts: 3 \(/m);
      expect(demo.stdout).toContain(`  npx jobvisor stats --data-dir ${dataDir}\n`);
    });
  });

  describe('worker', () => {
    it('enqueues, runs a module until SIGTERM, and holds the directory while it runs', async () => {
      const module = 'test/cli/fixtures/worker.mjs';
      const { job } = await cliJson(['enqueue', 'mail', 'send', '{"to":"ana@x"}', '--worker-module', module, ...store]);
      const worker = startCli(['worker', module, ...store]);
      await worker.waitFor(/worker running/);
      // A second process on the same directory would corrupt it: refused at once.
      const locked = await cli(['jobs', ...store]);
      expect(locked.code).toBe(4);
      expect(lines(locked.stderr)).toEqual([
        `jobvisor: the embedded database in ${dataDir} is in use by process ${worker.child.pid}; it serves one process at a time (stop that process, or use PostgreSQL with --database-url)`,
      ]);
      worker.child.kill('SIGTERM');
      expect((await worker.exited).code).toBe(0);
      expect(existsSync(`${dataDir}.lock`)).toBe(false);
      const { jobs } = await cliJson<{ jobs: JobRecord[] }>(['jobs', '--queue', 'mail', ...store]);
      expect(jobs).toMatchObject([{ id: job.id, state: 'completed', result: { sentTo: 'ana@x' } }]);
      // Four CLI processes, each starting PGlite on the directory: seconds each on a busy machine.
    }, 120_000);
  });
});
