/**
 * A TypeScript script run as a child process (`node --import tsx <script> <config as JSON>`,
 * from the repo root) that reports on stdout one JSON line per event, `{"event": …}`. The
 * lines are parsed as they come; anything else on stdout, and stderr, is kept (the tail) to
 * explain a failure. The chaos run's workers and the multi-process test's workers are these.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const KEPT_OUTPUT_CHARS = 8_000;

export type Exit = { code: number | null; signal: NodeJS.Signals | null };

export interface LineProcessOptions {
  /** Files preloaded after tsx (`--import`), as the script: absolute paths. */
  imports?: readonly string[];
  /** Added to this process's environment. */
  env?: Readonly<Record<string, string>>;
}

export class LineProcess<Config, Line extends { event: string }> {
  readonly lines: Line[] = [];
  readonly exited: Promise<Exit>;
  exit: Exit | undefined;
  #output = '';
  readonly #child: ChildProcess;

  constructor(
    script: string,
    readonly config: Config,
    options: LineProcessOptions = {},
  ) {
    const imports = (options.imports ?? []).flatMap((path) => ['--import', pathToFileURL(path).href]);
    this.#child = spawn(process.execPath, ['--import', 'tsx', ...imports, script, JSON.stringify(config)], {
      cwd: ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    createInterface({ input: this.#child.stdout! }).on('line', (line) => {
      if (line.startsWith('{"event":')) this.lines.push(JSON.parse(line) as Line);
      else this.#keep(`(stdout) ${line}\n`);
    });
    this.#child.stderr!.on('data', (chunk: Buffer) => this.#keep(chunk.toString()));
    this.exited = new Promise((resolve) => {
      this.#child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      });
    });
  }

  /** Its stderr, and stdout lines that were not events: the last 8,000 characters. */
  get stderr(): string {
    return this.#output;
  }

  /** Sends `signal`, unless the process has exited. */
  signal(signal: NodeJS.Signals): void {
    if (this.exit === undefined) this.#child.kill(signal);
  }

  #keep(text: string): void {
    this.#output = (this.#output + text).slice(-KEPT_OUTPUT_CHARS);
  }
}
