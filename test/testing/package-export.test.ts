/**
 * `jobvisor/testing` as a user imports it: through the package's exports, from dist/ (built
 * once per run by build-dist.ts), in plain Node with no test framework loaded.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, expect, inject, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const SCRIPT = `
import { defineQueue } from 'jobvisor';
import { assertEnqueued, assertJobState, memoryStore, runJob } from 'jobvisor/testing';
const places = defineQueue('places', { handlers: { collect: async ({ payload }) => ({ photos: payload.n * 2 }) } });
const run = await runJob(places, 'collect', { n: 10 });
await assertEnqueued(run.store, places, 'collect', { n: 10 });
await assertJobState(run.store, run.job, 'completed');
const failure = await assertJobState(memoryStore(), '1', 'completed').catch((error) => error.message);
console.log(JSON.stringify({ path: run.path, result: run.result, failure }));
`;

beforeAll(() => {
  const build = inject('distBuild');
  if ('error' in build) throw new Error(build.error);
});

it('works from the package export, without any test framework', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', SCRIPT], { cwd: ROOT });
  expect(JSON.parse(stdout)).toEqual({
    path: ['pending', 'running', 'completed'],
    result: { photos: 20 },
    failure: 'no job with id 1',
  });
});
