/**
 * PGlite runs PostgreSQL inside one process and takes no lock on its data directory: two
 * processes (or two instances in one process) opening the same directory both write to it
 * and corrupt it silently. The store holds a lock file beside the directory, `<dir>.lock`,
 * while it is open; the CLI opens its embedded store through the same code.
 *
 * The file is created exclusively (O_EXCL) and names its holder: pid, host and, on Linux,
 * the process's start time. It goes when the store closes or the process exits; a process
 * that crashed leaves it, and the next opener takes it over once the holder is gone (no such
 * pid on this host, or the pid now belongs to a process that started later), as PostgreSQL
 * does with `postmaster.pid`. A holder on another host (a shared volume) cannot be checked:
 * the lock stands until it is released or removed by hand.
 */
import { accessSync, constants, linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { DataDirLockedError, DataDirUnusableError } from '../../errors.js';

export interface DataDirLock {
  readonly path: string;
  /** Removes the lock file if it is still this process's; idempotent. */
  release(): void;
}

interface Holder {
  pid: number;
  host: string;
  /** The process's start time in clock ticks since boot (Linux), else null. */
  start: string | null;
}

/** Lock files this process holds: an instance of this process is a holder too. */
const held = new Set<string>();
/** Takeovers of a stale lock raced by other openers, at most, before giving up. */
const MAX_ATTEMPTS = 5;

/** Takes the lock of `dir` (created if missing) or throws `DataDirLockedError`, or
 *  `DataDirUnusableError` when the directory cannot be created or written. */
export function lockDataDir(dir: string): DataDirLock {
  const dataDir = resolve(dir);
  const path = `${dataDir}.lock`;
  usable(dataDir, () => {
    mkdirSync(dataDir, { recursive: true });
    accessSync(dataDir, constants.R_OK | constants.W_OK | constants.X_OK);
  });
  const mine: Holder = { pid: process.pid, host: hostname(), start: processStart(process.pid) };
  const content = JSON.stringify(mine);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    try {
      writeFileSync(path, content, { flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') usable(dataDir, () => { throw error; });
      const found = readHolder(path);
      if (found === undefined) continue; // Released meanwhile: try again.
      if (holds(found.holder, path)) {
        const { pid, host } = found.holder;
        const holder = host !== mine.host ? 'another host' : pid === mine.pid ? 'this process' : 'this host';
        throw new DataDirLockedError({ dataDir, lockFile: path, holderPid: pid, holderHost: host, holder });
      }
      takeOver(path, found.text);
      continue;
    }
    held.add(path);
    const onExit = () => removeIfMine(path, content);
    process.once('exit', onExit);
    let released = false;
    return {
      path,
      release() {
        if (released) return;
        released = true;
        process.off('exit', onExit);
        held.delete(path);
        removeIfMine(path, content);
      },
    };
  }
  throw new Error(`cannot take the lock ${path}: other processes kept taking it over`);
}

const REASONS: Record<string, string> = {
  ENOTDIR: 'a part of its path is a regular file, not a directory',
  EEXIST: 'a part of its path is a regular file, not a directory',
  ENOENT: 'its path cannot be created (a parent is missing or read-only)',
  EACCES: 'no permission to create or write it',
  EPERM: 'no permission to create or write it',
  EROFS: 'it is on a read-only file system',
};

/** Runs `fn`, turning a system error about the directory into `DataDirUnusableError`. */
function usable(dataDir: string, fn: () => void): void {
  try {
    fn();
  } catch (error) {
    const { code, path } = error as NodeJS.ErrnoException;
    if (code === undefined) throw error;
    throw new DataDirUnusableError({ dataDir, path: path ?? dataDir, errno: code, reason: REASONS[code] ?? 'it cannot be created or written', cause: error });
  }
}

/** Whether the process the file names still holds it. */
function holds(holder: Holder, path: string): boolean {
  if (holder.host !== hostname()) return true; // Cannot check: assume it does.
  if (holder.pid === process.pid) return held.has(path); // Else left by an earlier process with our pid.
  if (!isAlive(holder.pid)) return false;
  const start = processStart(holder.pid);
  // A live pid that started after the holder did is another process reusing the pid.
  return holder.start === null || start === null || start === holder.start;
}

/** Removes a stale lock, unless another opener replaced it meanwhile (then puts it back). */
function takeOver(path: string, staleText: string): void {
  const aside = `${path}.${process.pid}.stale`;
  try {
    renameSync(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // Another opener took it over.
    throw error;
  }
  try {
    if (readFileSync(aside, 'utf8') !== staleText) linkSync(aside, path);
  } catch {
    // A third opener holds the path now: its lock stands.
  } finally {
    unlinkSync(aside);
  }
}

function readHolder(path: string): { text: string; holder: Holder } | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<Holder>;
    if (typeof parsed.pid === 'number') return { text, holder: { pid: parsed.pid, host: String(parsed.host), start: parsed.start ?? null } };
  } catch {
    // Not JSON: an older lock file, holding the pid alone.
  }
  return { text, holder: { pid: Number(text.trim()), host: hostname(), start: null } };
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

/** Field 22 of /proc/<pid>/stat (after the parenthesised name): when the process started. */
function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function removeIfMine(path: string, content: string): void {
  try {
    if (readFileSync(path, 'utf8') === content) unlinkSync(path);
  } catch {
    // Already gone.
  }
}
