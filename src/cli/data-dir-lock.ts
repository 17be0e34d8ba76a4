/**
 * PGlite runs PostgreSQL inside one process and takes no lock on its data directory: two
 * processes opening the same directory would each write to it and corrupt it. The CLI holds
 * a lock file beside the directory (`<dir>.lock`, holding the pid) while it uses the store.
 */
import { readFileSync, unlinkSync } from 'node:fs';
import { readFile, unlink, writeFile } from 'node:fs/promises';
import { CliError, EXIT } from './cli-error.js';

export interface DataDirLock {
  release(): Promise<void>;
}

export async function lockDataDir(dir: string, label: string): Promise<DataDirLock> {
  const path = `${dir}.lock`;
  const mine = String(process.pid);
  for (let attempt = 0; ; attempt++) {
    try {
      await writeFile(path, mine, { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error;
      const holder = Number((await readFile(path, 'utf8').catch(() => '')).trim());
      if (isAlive(holder)) {
        throw new CliError(
          EXIT.unavailable,
          `the embedded database in ${label} is in use by process ${holder}; it serves one process at a time ` +
            '(stop that process, or use PostgreSQL with --database-url)',
        );
      }
      // Left by a process that died without cleaning up: take it over.
      await unlink(path).catch(() => {});
    }
  }
  // A signal or process.exit() skips the async release; remove the file on the way out anyway.
  const onExit = () => removeIfMine(path, mine);
  process.once('exit', onExit);
  return {
    async release() {
      process.off('exit', onExit);
      removeIfMine(path, mine);
    },
  };
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function removeIfMine(path: string, mine: string): void {
  try {
    if (readFileSync(path, 'utf8').trim() === mine) unlinkSync(path);
  } catch {
    // Already gone.
  }
}
