/**
 * Runs the built CLI as a user would, as a child process: `node dist/cli/main.js …`
 * (built once per run by build-dist.ts). Without the caller's DATABASE_URL, and without
 * colours, so that output is the same on every machine.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, inject } from 'vitest';

export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export interface CliResult {
  /** null when the process was killed (the timeout). */
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Added to the environment (DATABASE_URL is removed unless given here). */
  env?: Record<string, string>;
  timeoutMs?: number;
  /** Written to its stdin, which is then closed (closed at once without). */
  input?: string;
}

/** Fails every test of the calling file when dist/ could not be built. */
export function requireBuiltCli(): void {
  beforeAll(() => {
    const build = inject('distBuild');
    if ('error' in build) throw new Error(build.error);
  });
}

export function cli(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      { env: cliEnv(options.env), timeout: options.timeoutMs ?? 30_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin?.end(options.input);
  });
}

/** `cli(...)` with a stdout whose reader is gone before the CLI writes, as in `jobvisor … | head -1`
 *  once head has exited: every write fails with EPIPE. */
export function cliWithClosedStdout(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: cliEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: '', stderr });
    });
  });
}

/** `cli(...)` on a terminal (a pseudo-terminal from util-linux's `script`): its stdout and
 *  stderr together, with "\n" line ends. */
export function cliOnTerminal(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  const quote = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`;
  const command = [process.execPath, CLI, ...args].map(quote).join(' ');
  return new Promise((resolve) => {
    const child = execFile(
      'script',
      ['--quiet', '--return', '--command', command, '/dev/null'],
      { env: cliEnv(options.env), timeout: options.timeoutMs ?? 30_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout: stdout.replaceAll('\r\n', '\n'), stderr: '' });
      },
    );
    child.stdin?.end();
  });
}

/** `cli(...)`, then JSON.parse of its stdout; throws with its stderr when it failed. */
export async function cliJson<T = any>(args: readonly string[], options?: CliOptions): Promise<T> {
  const result = await cli([...args, '--json'], options);
  if (result.code !== 0) throw new Error(`jobvisor ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

/** A long-running CLI process (the worker): its output so far, and a way to wait for a line. */
export interface RunningCli {
  child: ChildProcess;
  output(): { stdout: string; stderr: string };
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startCli(args: readonly string[], options: CliOptions = {}): RunningCli {
  const child = spawn(process.execPath, [CLI, ...args], { env: cliEnv(options.env) });
  let stdout = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  const changed = () => {
    for (const listener of listeners) listener();
  };
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    changed();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    changed();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      resolve({ code, signal });
      changed();
    }),
  );
  return {
    child,
    output: () => ({ stdout, stderr }),
    exited,
    waitFor(pattern, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (pattern.test(stdout) || pattern.test(stderr)) done(resolve);
          else if (child.exitCode !== null) done(() => reject(new Error(`exited ${child.exitCode} before ${pattern}:\n${stdout}${stderr}`)));
        };
        const timer = setTimeout(() => done(() => reject(new Error(`no ${pattern} within ${timeoutMs} ms:\n${stdout}${stderr}`))), timeoutMs);
        const done = (settle: () => void) => {
          clearTimeout(timer);
          listeners.delete(check);
          settle();
        };
        listeners.add(check);
        check();
      });
    },
  };
}

function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', ...extra };
  if (!('DATABASE_URL' in extra)) delete env.DATABASE_URL;
  return env;
}

/** stderr as lines, for "one clear line" checks. */
export function lines(text: string): string[] {
  return text.split('\n').filter((line) => line.trim() !== '');
}
