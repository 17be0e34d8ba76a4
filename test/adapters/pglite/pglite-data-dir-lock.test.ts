/**
 * One PGlite data directory, one process: a second opener, in another process or in this
 * one, is refused with DataDirLockedError naming the holder; a holder that crashed leaves a
 * lock that the next opener takes over; a store closed and opened again in one process is
 * not refused. Real processes (each starts PGlite: seconds), every wait on an event.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it, vi } from 'vitest';
import { LineProcess } from '../../../scripts/line-process.js';
import { DataDirLockedError, pgliteStore } from '../../../src/adapters/pglite/index.js';

type Line =
  | { event: 'open'; pid: number }
  | { event: 'refused'; code: string; holderPid: number; holder: string; message: string };

const root = await mkdtemp(join(tmpdir(), 'jobvisor-pglite-lock-'));
const children: LineProcess<{ dataDir: string }, Line>[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) {
    child.signal('SIGKILL');
    await child.exited;
  }
});

afterAll(() => rm(root, { recursive: true, force: true }));

function opener(dataDir: string) {
  const child = new LineProcess<{ dataDir: string }, Line>('test/adapters/pglite/fixtures/open-data-dir.ts', { dataDir });
  children.push(child);
  return child;
}

async function firstLine(child: LineProcess<{ dataDir: string }, Line>): Promise<Line> {
  return vi.waitFor(
    () => {
      if (child.exit && child.lines.length === 0) throw new Error(`exited ${JSON.stringify(child.exit)}: ${child.stderr}`);
      expect(child.lines.length, child.stderr).toBeGreaterThan(0);
      return child.lines[0]!;
    },
    { timeout: 60_000, interval: 50 },
  );
}

it('refuses a second process while another holds the directory, and takes over once it crashed', async () => {
  const dataDir = join(root, 'crash');
  const holder = opener(dataDir);
  expect(await firstLine(holder)).toMatchObject({ event: 'open' });
  const holderPid = (holder.lines[0] as { pid: number }).pid;

  let error: unknown;
  try {
    pgliteStore({ dataDir });
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(DataDirLockedError);
  expect(error).toMatchObject({ code: 'data_dir_locked', holderPid, holder: 'this host', dataDir, lockFile: `${dataDir}.lock` });
  expect((error as Error).message).toContain(`in use by process ${holderPid}`);

  holder.signal('SIGKILL');
  await holder.exited;
  expect(existsSync(`${dataDir}.lock`)).toBe(true);
  const store = pgliteStore({ dataDir });
  try {
    expect(await store.migrate()).toEqual([]);
    expect(await store.countJobs()).toEqual([]);
  } finally {
    await store.close();
  }
  expect(existsSync(`${dataDir}.lock`)).toBe(false);
}, 120_000);

it('refuses another process while this one holds it, naming this one', async () => {
  const dataDir = join(root, 'held-here');
  const store = pgliteStore({ dataDir });
  try {
    await store.migrate();
    const second = opener(dataDir);
    expect(await firstLine(second)).toMatchObject({ event: 'refused', code: 'data_dir_locked', holderPid: process.pid, holder: 'this host' });
    // The refused process opened nothing: this store goes on.
    await store.enqueueJobs({ jobs: [{ queue: 'q', kind: 'k', payload: {}, maxAttempts: 1 }] });
    expect(await store.countJobs()).toEqual([{ queue: 'q', state: 'pending', count: 1 }]);
  } finally {
    await store.close();
  }
}, 120_000);

it('takes over a lock an earlier process with this pid left, refuses a second store here, reopens once closed', async () => {
  const dataDir = join(root, 'reopen');
  // As after a container restart: this pid, but not this process's lock.
  writeFileSync(`${dataDir}.lock`, JSON.stringify({ pid: process.pid, host: hostname(), start: '1' }));
  const first = pgliteStore({ dataDir });
  await first.migrate();
  expect(() => pgliteStore({ dataDir })).toThrow(/in use by this process/);
  await first.close();
  expect(existsSync(`${dataDir}.lock`)).toBe(false);
  const second = pgliteStore({ dataDir });
  try {
    expect(await second.migrate()).toEqual([]);
  } finally {
    await second.close();
  }
}, 120_000);
