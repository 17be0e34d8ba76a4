import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { pgliteStore } from '../../../src/adapters/pglite/index.js';
import { loadMigrations } from '../../../src/adapters/sql/migrate.js';

// Two PGlite instances, one after the other (the first is closed before the second opens).
const dir = await mkdtemp(join(tmpdir(), 'jobvisor-pglite-'));

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('keeps jobs and their history in its data directory across a restart', async () => {
  const first = pgliteStore({ dataDir: dir });
  expect(await first.migrate()).toEqual((await loadMigrations()).map((m) => m.version));
  const [created] = await first.enqueueJobs({ jobs: [{ queue: 'q', kind: 'k', payload: { keep: true }, maxAttempts: 2 }] });
  const [claimed] = await first.claimJobs({ workerId: 'w1', leaseMs: 60_000, queues: [{ queue: 'q', limit: 1 }] });
  await first.close();

  const second = pgliteStore({ dataDir: dir });
  try {
    expect(await second.migrate()).toEqual([]);
    expect(await second.getJob({ id: created!.job.id })).toMatchObject({
      payload: { keep: true },
      state: 'running',
      leaseToken: claimed!.leaseToken,
    });
    expect((await second.getJobEvents({ id: created!.job.id })).map((e) => e.toState)).toEqual(['pending', 'running']);
    expect(
      await second.setStatesIfRunning({ outcomes: [{ id: claimed!.id, leaseToken: claimed!.leaseToken, state: 'completed', result: 1 }] }),
    ).toEqual([true]);
  } finally {
    await second.close();
  }
  // Two PGlite instances start one after the other: seconds each on a busy machine.
}, 120_000);
