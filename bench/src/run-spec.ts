import type { KeysShape } from './keys-shapes.js';
import type { SteadyShape } from './steady-shapes.js';
import type { SystemName } from './systems/system.js';

/** What one child process measures: one system, one scenario, one run, one fresh schema. */
export type ScenarioKind = 'enqueue' | 'drain' | 'latency' | 'memory' | 'profile' | 'actor' | 'schedules' | 'flows' | 'durable' | 'keys' | 'steady';

export interface RunSpec {
  kind: ScenarioKind;
  system: SystemName;
  connectionString: string;
  schema: string;
  jobvisorRoot: string;
  /** enqueue: jobs in the one bulk call; drain/profile: backlog; memory: jobs in flight;
   *  actor: job actors run; schedules: schedules on the supervisor; flows: children of the fan-out;
   *  keys: a drain's backlog, or an enqueue shape's enqueues; steady: its drain's backlog. */
  jobs: number;
  /** drain/profile: jobs timed out of the backlog (≤ jobs). */
  measure?: number;
  concurrency?: number;
  /** drain: one queue, or one busy queue beside three idle ones (systems/system.ts). */
  layout?: 'single' | 'multi';
  /** Jobs run (drain) or enqueued (enqueue, latency) before measuring, to warm the JIT and pools. */
  warmup?: number;
  /** latency: jobs timed, one at a time. */
  samples?: number;
  /** flows: which shape (flow-load.ts). */
  flowShape?: 'plain' | 'static' | 'continue';
  /** durable: which shape (durable-load.ts). */
  durableShape?: 'plain' | 'steps' | 'dbos' | 'wake' | 'idle' | 'sleepers';
  /** keys: which shape (keys-load.ts). */
  keysShape?: KeysShape;
  /** steady: which shape (steady-load.ts), and for a rate shape its seconds measured and of warm-up. */
  steadyShape?: SteadyShape;
  seconds?: number;
  warmupS?: number;
  /** profile: where to write the .cpuprofile of the measured window. */
  profileOut?: string;
}

export interface RunResult {
  metrics: Record<string, number>;
  info?: Record<string, unknown>;
}

export type ChildMessage = { ok: true; result: RunResult } | { ok: false; error: string };
