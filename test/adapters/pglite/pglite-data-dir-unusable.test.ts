/**
 * A data directory that cannot be used is refused with DataDirUnusableError naming the path
 * and the cause, before PGlite starts (so no instance is started here).
 */
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { DataDirUnusableError, pgliteStore } from '../../../src/adapters/pglite/index.js';
import { DataDirUnusableError as FromRoot } from '../../../src/index.js';

const root = await mkdtemp(join(tmpdir(), 'jobvisor-pglite-unusable-'));
afterAll(() => rm(root, { recursive: true, force: true }));

function refusal(dataDir: string): DataDirUnusableError {
  try {
    pgliteStore({ dataDir });
  } catch (error) {
    return error as DataDirUnusableError;
  }
  throw new Error(`pgliteStore({ dataDir: ${dataDir} }) was not refused`);
}

it('refuses a directory under a regular file, naming the path and the cause', () => {
  const file = join(root, 'a-file');
  writeFileSync(file, 'not a directory');
  const error = refusal(join(file, 'data'));
  expect(error).toBeInstanceOf(FromRoot);
  expect(error).toMatchObject({ code: 'data_dir_unusable', dataDir: join(file, 'data'), errno: 'ENOTDIR' });
  expect(error.message).toContain(join(file, 'data'));
  expect(error.message).toContain('regular file');
  expect((error.cause as NodeJS.ErrnoException).code).toBe('ENOTDIR');
  expect(existsSync(`${join(file, 'data')}.lock`)).toBe(false);
});

it('refuses a regular file given as the directory', () => {
  const file = join(root, 'plain-file');
  writeFileSync(file, '');
  expect(refusal(file)).toMatchObject({ code: 'data_dir_unusable', dataDir: file, errno: 'EEXIST' });
});

// Root may write anywhere: a read-only directory refuses only other users.
it.skipIf(process.getuid?.() === 0)('refuses a directory under a read-only one', () => {
  const readOnly = join(root, 'read-only');
  mkdirSync(readOnly);
  chmodSync(readOnly, 0o500);
  try {
    const error = refusal(join(readOnly, 'data'));
    expect(error).toMatchObject({ code: 'data_dir_unusable', dataDir: join(readOnly, 'data'), errno: 'EACCES' });
    expect(error.message).toContain('permission');
  } finally {
    chmodSync(readOnly, 0o700);
  }
});
