/**
 * Vitest global setup: builds dist/ once per run (`npm run build`), for the tests that run
 * the CLI as a user would: `node dist/cli/main.js …`. A failed build fails those tests
 * (see cli.ts), not the others.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';

export type DistBuild = { ok: true } | { error: string };

declare module 'vitest' {
  export interface ProvidedContext {
    distBuild: DistBuild;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  // A run nested inside the suite (exit-status.test.ts) must not rebuild dist/ under the
  // CLI tests of the outer run.
  if (process.env.JOBVISOR_TEST_SKIP_BUILD === '1') {
    project.provide('distBuild', { error: 'dist/ not built: JOBVISOR_TEST_SKIP_BUILD=1' });
    return;
  }
  const root = fileURLToPath(new URL('../..', import.meta.url));
  try {
    await promisify(execFile)('npm', ['run', 'build'], { cwd: root, maxBuffer: 16 * 1024 * 1024 });
    project.provide('distBuild', { ok: true });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    project.provide('distBuild', { error: `npm run build failed:\n${stdout}${stderr}` });
  }
}
