/**
 * The suite's runner reports failure honestly: the README's test command, on this repo's own
 * vitest config and global setup, exits non-zero when a test fails, with the shared Postgres
 * server and with the server-less fallback (a server of our own). A dependency that hooks the
 * process's exit once turned every failed run without a server into exit status 0.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

function runFailingFixture(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const { CI: _ci, VITEST: _vitest, VITEST_POOL_ID: _pool, VITEST_WORKER_ID: _worker, ...rest } = process.env;
    const child = spawn(process.execPath, ['node_modules/vitest/vitest.mjs', 'run'], {
      cwd: root,
      env: { ...rest, JOBVISOR_TEST_INCLUDE: 'test/fixtures/failing-suite/fails.ts', JOBVISOR_TEST_SKIP_BUILD: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

describe('the test runner exit status', () => {
  it('is non-zero for a failing test when no server answers and the fallback server runs', async () => {
    const { code, output } = await runFailingFixture({ JOBVISOR_TEST_POSTGRES: 'embedded' });
    expect(code, output).toBe(1);
    expect(output).toContain('using a server of our own');
    expect(output).toContain('1 failed');
  }, 120_000);

  it('is non-zero for a failing test with the shared server', async () => {
    const { code, output } = await runFailingFixture({});
    expect(code, output).toBe(1);
    expect(output).toContain('1 failed');
  }, 120_000);
});
