/**
 * Who holds a PGlite data directory's lock, judged from the lock file alone (no PGlite
 * started): a live process under another user still holds it (EPERM from `kill(pid, 0)`), and
 * a live pid that started after the holder did is another process reusing the pid.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it, vi } from 'vitest';
import { lockDataDir } from '../../../src/adapters/pglite/data-dir-lock.js';
import { DataDirLockedError } from '../../../src/errors.js';

const root = await mkdtemp(join(tmpdir(), 'jobvisor-dir-lock-'));
afterAll(() => rm(root, { recursive: true, force: true }));
afterEach(() => {
  vi.restoreAllMocks();
});

/** Field 22 of /proc/<pid>/stat: when that process started, as the lock file records it. */
function startOf(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
}

/** A lock file left by `pid` (this host), as that process would have written it. */
function lockFileOf(dir: string, pid: number, start: string): void {
  writeFileSync(`${join(root, dir)}.lock`, JSON.stringify({ pid, host: hostname(), start }));
}

it('keeps a lock whose holder is alive under another user (kill answers EPERM)', () => {
  const holder = process.ppid;
  lockFileOf('other-user', holder, startOf(holder));
  const kill = vi.spyOn(process, 'kill').mockImplementation((pid) => {
    if (pid !== holder) throw new Error(`unexpected kill(${String(pid)})`);
    throw Object.assign(new Error('kill EPERM'), { code: 'EPERM' });
  });
  expect(() => lockDataDir(join(root, 'other-user'))).toThrow(DataDirLockedError);
  expect(kill).toHaveBeenCalledWith(holder, 0);
  expect(JSON.parse(readFileSync(`${join(root, 'other-user')}.lock`, 'utf8'))).toMatchObject({ pid: holder });
});

it('takes over a lock whose pid now belongs to a process that started later (pid reuse)', () => {
  const live = process.ppid;
  lockFileOf('reused', live, String(Number(startOf(live)) - 1));
  const lock = lockDataDir(join(root, 'reused'));
  try {
    expect(JSON.parse(readFileSync(lock.path, 'utf8'))).toMatchObject({ pid: process.pid, start: startOf(process.pid) });
  } finally {
    lock.release();
  }
});

it('keeps a lock whose live holder started when the file says', () => {
  const live = process.ppid;
  lockFileOf('live', live, startOf(live));
  expect(() => lockDataDir(join(root, 'live'))).toThrow(DataDirLockedError);
});
