/**
 * The chaos run's worker processes: started, killed with SIGKILL and replaced, paused with
 * SIGSTOP and resumed, stopped with SIGTERM. Each is a LineProcess: its event lines parsed
 * as they come, its stderr's tail kept to explain a failure.
 */
import { fileURLToPath } from 'node:url';
import { LineProcess } from '../line-process.js';
import type { ChaosWorkerConfig, ChaosWorkerLine } from './chaos-worker.js';

const WORKER_SCRIPT = fileURLToPath(new URL('./chaos-worker.ts', import.meta.url));

type Stopped = Extract<ChaosWorkerLine, { event: 'stopped' }>;

export class WorkerProcess extends LineProcess<ChaosWorkerConfig, ChaosWorkerLine> {
  /** Wall-clock ms when it was sent SIGKILL, if it was. */
  killedAt: number | undefined;

  constructor(config: ChaosWorkerConfig) {
    super(WORKER_SCRIPT, config);
  }

  get id(): string {
    return this.config.workerId;
  }

  get ready(): boolean {
    return this.lines.some((line) => line.event === 'ready');
  }

  override signal(signal: NodeJS.Signals): void {
    if (this.exit === undefined && signal === 'SIGKILL') this.killedAt = Date.now();
    super.signal(signal);
  }

  /** SIGTERM, then its `stopped` line and a clean exit, within `timeoutMs` (else SIGKILL). */
  async stop(timeoutMs: number): Promise<Stopped> {
    this.signal('SIGCONT');
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.signal('SIGKILL'), timeoutMs);
    const exit = await this.exited;
    clearTimeout(timer);
    const stopped = this.lines.find((line): line is Stopped => line.event === 'stopped');
    if (exit.code !== 0 || !stopped) {
      throw new Error(`worker ${this.id} did not stop cleanly within ${timeoutMs} ms (${JSON.stringify(exit)}):\n${this.stderr}`);
    }
    return stopped;
  }
}

/** The processes by slot: a killed one is replaced in its slot by a new incarnation. */
export class WorkerFleet {
  readonly all: WorkerProcess[] = [];
  readonly #slots: WorkerProcess[] = [];

  constructor(readonly base: Omit<ChaosWorkerConfig, 'workerId'>) {}

  start(slots: number): void {
    for (let slot = 0; slot < slots; slot++) this.#slots.push(this.#spawn(`w${slot + 1}`));
  }

  get current(): readonly WorkerProcess[] {
    return this.#slots;
  }

  /** SIGKILL the slot's process and start its next incarnation (`w2`, then `w2.1` …). */
  async killAndRestart(slot: number): Promise<{ killed: WorkerProcess; started: WorkerProcess }> {
    const killed = this.#slots[slot]!;
    killed.signal('SIGKILL');
    await killed.exited;
    const generation = this.all.filter((w) => w.id.split('.')[0] === `w${slot + 1}`).length;
    const started = this.#spawn(`w${slot + 1}.${generation}`);
    this.#slots[slot] = started;
    return { killed, started };
  }

  /** Throws, with its stderr, if a process that should be running has exited. */
  assertAlive(): void {
    for (const w of this.#slots) {
      if (w.exit) throw new Error(`worker ${w.id} exited unexpectedly (${JSON.stringify(w.exit)}):\n${w.stderr}`);
    }
  }

  /** Every process still running, killed: for a run that failed. */
  async killAll(): Promise<void> {
    for (const w of this.all) w.signal('SIGKILL');
    await Promise.all(this.all.map((w) => w.exited));
  }

  #spawn(workerId: string): WorkerProcess {
    const w = new WorkerProcess({ ...this.base, workerId });
    this.all.push(w);
    return w;
  }
}
