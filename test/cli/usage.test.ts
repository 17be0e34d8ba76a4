/**
 * The CLI's command line, before any store is opened: help, version, and every kind of bad
 * input, each answered with one line on stderr and its exit code. Commands that would
 * connect get an unreachable database URL, which shows that bad input is refused first.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, cliWithClosedStdout, lines, requireBuiltCli } from '../support/cli.js';

requireBuiltCli();

const NOWHERE = ['--database-url', 'postgres://postgres@127.0.0.1:1/none'];
const COMMANDS = ['demo', 'migrate', 'worker', 'enqueue', 'jobs', 'job', 'stats', 'retry', 'cancel', 'signal', 'prune', 'queue', 'inspect', 'diagram'];
const fixture = (name: string) => `test/cli/fixtures/${name}`;

/** Exit code and the single stderr line of a failed command. */
async function fails(args: string[]): Promise<{ code: number | null; line: string; stdout: string }> {
  const { code, stdout, stderr } = await cli(args);
  expect(lines(stderr), stderr).toHaveLength(1);
  return { code, line: stderr.trim(), stdout };
}

describe('jobvisor help and version', () => {
  it('lists every command and the exit codes', async () => {
    const { code, stdout } = await cli(['--help']);
    expect(code).toBe(0);
    for (const command of COMMANDS) expect(stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
    expect(stdout).toContain('Exit codes:');
    expect(stdout).toMatch(/4 +store unavailable/);
  });

  it.each(COMMANDS)('%s --help', async (command) => {
    const { code, stdout, stderr } = await cli([command, '--help']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toMatch(new RegExp(`^Usage: jobvisor ${command} `));
    // demo always uses the embedded store; diagram reads no store at all; queue's subcommands connect.
    if (command === 'queue') for (const sub of ['pause', 'resume', 'list']) expect(stdout).toMatch(new RegExp(`^  ${sub} \\[options\\]`, 'm'));
    else if (command !== 'demo' && command !== 'diagram') expect(stdout).toContain('--database-url <url>');
  });

  it('the exit codes it lists are those the commands exit with', async () => {
    const { stdout } = await cli(['--help']);
    // Cancelling a running job asks its worker to stop it: exit 0, not 5.
    expect(stdout).toMatch(/ 5 +not applied \(the job's state does not allow it: retry a pending or completed job, cancel a\s+finished one, signal an ended one; cancelling a running job asks its worker and exits 0\)/);
    expect(stdout).toMatch(/ 2 +usage error \(.*bad value, payload not JSON, database URL not\s+postgres:\/\/, unknown queue or kind\)/);
  });

  it('every command has its row in docs/cli.md', async () => {
    const doc = await readFile('docs/cli.md', 'utf8');
    for (const command of COMMANDS) expect(doc, command).toMatch(new RegExp(`^\\| \`${command}[ \`]`, 'm'));
  });

  it('--version prints the package version', async () => {
    const { code, stdout } = await cli(['--version']);
    expect(code).toBe(0);
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('no command: help on stderr, usage exit', async () => {
    const { code, stdout, stderr } = await cli([]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('Usage: jobvisor');
  });
});

describe('bad input: one line on stderr, a non-zero exit', () => {
  it('an unknown command suggests the nearest', async () => {
    const { code, line } = await fails(['stat']);
    expect(code).toBe(2);
    expect(line).toBe("jobvisor: unknown command 'stat' (Did you mean stats?)");
  });

  it('--pooler transaction or --listen-database-url on the embedded store', async () => {
    for (const flag of [['--pooler', 'transaction'], ['--listen-database-url', 'postgres://db/jobs']]) {
      const { code, line } = await fails(['stats', ...flag, '--data-dir', '/nonexistent/jv']);
      expect(code).toBe(2);
      expect(line).toBe(`jobvisor: ${flag[0] === '--pooler' ? '--pooler transaction' : '--listen-database-url'} applies to PostgreSQL: give --database-url or DATABASE_URL`);
    }
  });

  it('an unknown option', async () => {
    // Not one commander finds close to an option (--colour: "Did you mean --pooler?").
    const { code, line } = await fails(['jobs', '--frobnicate']);
    expect(code).toBe(2);
    expect(line).toBe("jobvisor: unknown option '--frobnicate'");
  });

  it('a missing argument', async () => {
    const { code, line } = await fails(['enqueue', 'emails']);
    expect(code).toBe(2);
    expect(line).toBe("jobvisor: missing required argument 'kind'");
  });

  it('a payload that is not JSON, refused before connecting', async () => {
    const { code, line } = await fails(['enqueue', 'emails', 'welcome', '{to: bob}', ...NOWHERE]);
    expect(code).toBe(2);
    expect(line).toMatch(/^jobvisor: payload is not valid JSON: /);
  });

  it('a queue name the library refuses', async () => {
    const { code, line } = await fails(['enqueue', 'e mails', 'welcome', ...NOWHERE]);
    expect(code).toBe(2);
    expect(line).toMatch(/^jobvisor: queue: must be 1-128 characters/);
  });

  it('a bad --run-at, --priority, --state, duration, job id, schema', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['enqueue', 'q', 'k', '--run-at', 'tomorrow'], /option '--run-at <time>' argument 'tomorrow' is invalid/],
      [['enqueue', 'q', 'k', '--priority', '1.5'], /option '--priority <n>' argument '1.5' is invalid\. expected an integer/],
      [['jobs', '--state', 'done'], /Allowed choices are pending, running, retrying, completed, dead, skipped, cancelled/],
      [['prune', '--dead-older-than', 'a while'], /expected a duration such as/],
      [['prune', '--dead-older-than', '1d', '--batch-size', '0'], /option '--batch-size <n>' argument '0' is invalid\. expected a positive integer/],
      [['job', 'abc'], /value 'abc' is invalid for argument 'id'\. expected a job id/],
      [['stats', '--schema', 'pg_catalog'], /option '--schema <name>' argument 'pg_catalog' is invalid\. the prefix "pg_" is reserved/],
      [['stats', '--pool-size', '1'], /option '--pool-size <n>' argument '1' is invalid\. must be an integer from 2 \(one connection listens/],
      [['stats', '--pooler', 'statement'], /option '--pooler <mode>' argument 'statement' is invalid\. Allowed choices are session, transaction/],
      [['stats', '--listen-database-url', 'http://db'], /--listen-database-url: must be a postgres:\/\/ or postgresql:\/\/ URL, got "http:\/\/db/],
    ];
    for (const [args, message] of cases) {
      const { code, line } = await fails([...args, ...NOWHERE]);
      expect(code, args.join(' ')).toBe(2);
      expect(line).toMatch(message);
    }
  });

  it('enqueue: a bad --on-conflict, --debounce without its delay or with --run-at, a bad --tenant or --tenant-weight, refused before connecting', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['enqueue', 'q', 'k', '--on-conflict', 'merge'], /option '--on-conflict <mode>' argument 'merge' is invalid\. expected return, replace or replace-running/],
      [['enqueue', 'q', 'k', '--debounce', 'd'], /^jobvisor: --debounce needs --debounce-delay <duration>/],
      [['enqueue', 'q', 'k', '--debounce-delay', '5s'], /^jobvisor: --debounce-delay and --debounce-max-wait need --debounce <key>/],
      [['enqueue', 'q', 'k', '--debounce', 'd', '--debounce-delay', '5s', '--run-at', '1m'], /^jobvisor: runIn: cannot be given with debounce/],
      [['enqueue', 'q', 'k', '--tenant-weight', '2'], /^jobvisor: --tenant-weight needs --tenant/],
      [['enqueue', 'q', 'k', '--tenant', 'a', '--tenant-weight', '0'], /option '--tenant-weight <n>' argument '0' is invalid\. expected a number above 0 and at most 1000/],
      [['enqueue', 'q', 'k', '--tenant', 'x'.repeat(1_001)], /^jobvisor: tenant: is 1001 bytes of UTF-8/],
    ];
    for (const [args, message] of cases) {
      const { code, line } = await fails([...args, ...NOWHERE]);
      expect(code, args.join(' ')).toBe(2);
      expect(line).toMatch(message);
    }
  });

  it('signal: a bad job id, name or payload, refused before connecting', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['signal', 'abc', 'shipped'], /value 'abc' is invalid for argument 'id'\. expected a job id/],
      [['signal', '7', 'ship ped'], /value 'ship ped' is invalid for argument 'name'\. must be 1-128 characters/],
      [['signal', '7', 'shipped', '{carrier: dhl}'], /^jobvisor: payload is not valid JSON: /],
      [['signal', '7'], /missing required argument 'name'/],
    ];
    for (const [args, message] of cases) {
      const { code, line } = await fails([...args, ...NOWHERE]);
      expect(code, args.join(' ')).toBe(2);
      expect(line).toMatch(message);
    }
  });

  it('prune without a cutoff', async () => {
    const { code, line } = await fails(['prune', ...NOWHERE]);
    expect(code).toBe(2);
    expect(line).toBe('jobvisor: prune needs --completed-older-than or --dead-older-than (or both)');
  });

  it('a database URL that is not a postgres:// URL, given or from the environment, as the library refuses it', async () => {
    for (const url of ['not-a-url', 'mysql://app:s3cret@db/app', '']) {
      const { code, line } = await fails(['stats', '--database-url', url]);
      expect(code, url).toBe(2);
      expect(line).toBe(`jobvisor: --database-url: must be a postgres:// or postgresql:// URL, got ${JSON.stringify(url.replace('s3cret', '***'))}`);
    }
    const { code, stderr } = await cli(['jobs'], { env: { DATABASE_URL: 'http://db:5432/app' } });
    expect([code, stderr]).toEqual([2, 'jobvisor: DATABASE_URL: must be a postgres:// or postgresql:// URL, got "http://db:5432/app"\n']);
  });

  it('a payload as an argument and as a file; a file that cannot be read; stdin that is not JSON', async () => {
    const both = await fails(['enqueue', 'q', 'k', '{}', '--payload-file', 'p.json', ...NOWHERE]);
    expect([both.code, both.line]).toEqual([2, 'jobvisor: give the payload as an argument or --payload-file, not both']);
    const missing = await fails(['enqueue', 'q', 'k', '--payload-file', fixture('missing.json'), ...NOWHERE]);
    expect(missing.code).toBe(2);
    expect(missing.line).toMatch(/^jobvisor: cannot read --payload-file test\/cli\/fixtures\/missing\.json: ENOENT: /);
    const notJson = await cli(['enqueue', 'q', 'k', '-', ...NOWHERE], { input: '{to: bob}' });
    expect(notJson.code).toBe(2);
    expect(lines(notJson.stderr)).toEqual([expect.stringMatching(/^jobvisor: payload from stdin is not valid JSON: /)]);
  });

  it('a payload over several lines that is not JSON: one line that names the problem and where, the input not echoed raw', async () => {
    const cases: Array<[string, RegExp]> = [
      ['{\n  "a": 1,\n  oops\n}', /^jobvisor: payload from stdin is not valid JSON: Expected double-quoted property name in JSON at position 14 \(line 3 column 3\)\n$/],
      ['{\n "a": "x\ny"\n}', /^jobvisor: payload from stdin is not valid JSON: Bad control character in string literal in JSON at position 10 \(line 2 column 9\)\n$/],
      // V8 quotes the text it refused: its line breaks and escape characters come out escaped.
      ['{\n  "a": tru\n}', /^jobvisor: payload from stdin is not valid JSON: Unexpected token .*"\{\\n  "a": tru\\n\}" is not valid JSON\n$/],
      ['\u001b[2J{', /^jobvisor: payload from stdin is not valid JSON: Unexpected token .*"\\u001b\[2J\{" is not valid JSON\n$/],
    ];
    for (const [input, message] of cases) {
      const { code, stderr } = await cli(['enqueue', 'q', 'k', '-', ...NOWHERE], { input });
      expect(code, input).toBe(2);
      expect(stderr).toMatch(message);
    }
    const { code, stderr } = await cli(['signal', '7', 'shipped', '[1,\n2,\n]', ...NOWHERE]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^jobvisor: payload is not valid JSON: Unexpected token .*"\[1,\\n2,\\n\]" is not valid JSON\n$/);
  });

  it('a message that quotes a line break from the command line is still one line', async () => {
    const { code, stderr } = await cli(['enqueue', 'q', 'k', '--payload-file', 'no\nsuch.json', ...NOWHERE]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^jobvisor: cannot read --payload-file no such\.json: ENOENT: [^\n]*\n$/);
  });

  it('both a database URL and a data directory', async () => {
    const { code, line } = await fails(['stats', ...NOWHERE, '--data-dir', 'somewhere']);
    expect(code).toBe(2);
    expect(line).toBe('jobvisor: give --database-url or --data-dir, not both');
  });

  it('a worker module that is not there', async () => {
    const { code, line } = await fails(['worker', fixture('missing.mjs'), ...NOWHERE]);
    expect(code).toBe(2);
    expect(line).toBe(`jobvisor: worker module ${fixture('missing.mjs')} not found`);
  });

  it('a worker module that does not export queues', async () => {
    const { code, line } = await fails(['worker', fixture('no-queues.mjs'), ...NOWHERE]);
    expect(code).toBe(2);
    expect(line).toBe(`jobvisor: worker module ${fixture('no-queues.mjs')} does not export \`queues\`: an array of defineQueue(...) results`);
  });

  it('a worker module that throws on import', async () => {
    const { code, line } = await fails(['worker', fixture('throws-on-import.mjs'), ...NOWHERE]);
    expect(code).toBe(1);
    expect(line).toBe(`jobvisor: worker module ${fixture('throws-on-import.mjs')} failed to load: SMTP_URL is not set`);
  });

  it('a TypeScript worker module on a Node that cannot import it: a hint', async () => {
    const { code, line } = await fails(['worker', fixture('worker.ts'), ...NOWHERE]);
    if ((process.features as { typescript?: unknown }).typescript) {
      // This Node strips types: the module loads, and its empty `queues` is refused.
      expect(code).toBe(2);
      expect(line).toMatch(/does not export `queues`/);
    } else {
      expect(code).toBe(1);
      expect(line).toBe(
        `jobvisor: worker module ${fixture('worker.ts')} failed to load: Unknown file extension ".ts" for ${process.cwd()}/${fixture('worker.ts')} ` +
          `(Node ${process.version} does not run TypeScript: use Node 22.18 or later, which strips types, compile the module to JavaScript, ` +
          "or run with NODE_OPTIONS='--import tsx')",
      );
    }
  });

  it('a worker module whose schedules are not defineSchedule results', async () => {
    const { code, line } = await fails(['worker', fixture('bad-schedules.mjs'), ...NOWHERE]);
    expect(code).toBe(2);
    expect(line).toBe(`jobvisor: worker module ${fixture('bad-schedules.mjs')}: \`schedules\` must be an array of defineSchedule(...) results`);
  });

  it('enqueue --worker-module: a queue or kind the module does not define', async () => {
    const queue = await fails(['enqueue', 'post', 'send', '--worker-module', fixture('worker.mjs'), ...NOWHERE]);
    expect(queue.code).toBe(2);
    expect(queue.line).toBe(`jobvisor: unknown queue "post": ${fixture('worker.mjs')} defines mail`);
    const kind = await fails(['enqueue', 'mail', 'fax', '--worker-module', fixture('worker.mjs'), ...NOWHERE]);
    expect(kind.code).toBe(2);
    expect(kind.line).toBe('jobvisor: kind: queue "mail" has no handler for kind "fax" (it has send, bounce, slow)');
  });
});

describe('a stdout whose reader is gone (`| head -1`): the command ends quietly', () => {
  it.each([['diagram'], ['--help'], ['jobs', '--help']])('%s', async (...args) => {
    const { code, stderr } = await cliWithClosedStdout(args);
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});

describe('unreachable stores: one line, exit 4, fast', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'jobvisor-cli-usage-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('a refused connection', async () => {
    const { code, line } = await fails(['stats', ...NOWHERE]);
    expect(code).toBe(4);
    expect(line).toBe('jobvisor: cannot connect to the database at postgres://postgres@127.0.0.1:1/none: connect ECONNREFUSED 127.0.0.1:1');
  });

  it('the password is not printed', async () => {
    const { line } = await fails(['stats', '--database-url', 'postgres://app:s3cret@127.0.0.1:1/none']);
    expect(line).toContain('postgres://app:***@127.0.0.1:1/none');
    expect(line).not.toContain('s3cret');
  });

  it('DATABASE_URL from the environment', async () => {
    const { code, stderr } = await cli(['jobs'], { env: { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/from_env' } });
    expect(code).toBe(4);
    expect(stderr).toContain('at postgres://postgres@127.0.0.1:1/from_env');
  });

  it('a data directory that cannot be created', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, '');
    const { code, line } = await fails(['stats', '--data-dir', join(file, 'data')]);
    expect(code).toBe(4);
    expect(line).toMatch(/^jobvisor: cannot open the embedded database in .*a-file\/data: ENOTDIR/);
  });
});
