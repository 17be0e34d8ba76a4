import type { ProfileSummary } from './cpu-profile.js';
import type { MachineInfo, Versions } from './machine.js';
import type { Sizes } from './options.js';
import type { PgbenchRun } from './pgbench.js';
import type { Spread } from './stats.js';
import type { SystemName } from './systems/system.js';

/** One child process's run: one scenario, one system, one fresh schema. */
export interface Measurement {
  scenario: string;
  system: SystemName;
  /** The system's name, or jobvisor@<commit> when several checkouts are compared. */
  label: string;
  run: number;
  ok: boolean;
  error?: string;
  metrics: Record<string, number>;
  /** Share of the machine other processes kept busy just before the run (0..1). */
  busyBefore: number;
  load1: number;
  wallS: number;
}

/** bench/results/latest.json: everything BENCHMARKS.md is made from. */
export interface BenchResults {
  full: boolean;
  quick: boolean;
  startedAt: string;
  finishedAt: string;
  durationS: number;
  /** Seconds spent waiting for the machine to go idle before runs. */
  quietWaitedS: number;
  runs: number;
  concurrencies: number[];
  sizes: Sizes;
  machine: MachineInfo;
  versions: Versions;
  settings: Record<string, string>;
  measurements: Measurement[];
  /** scenario → system (label) → metric → median, min, max over the runs that succeeded. */
  summary: Record<string, Record<string, Record<string, Spread>>>;
  pgbench?: { clients: number; seconds: number; script: string; runs: PgbenchRun[]; tps: Spread; latencyMs: Spread };
  profile?: ProfileSummary & { scenario: string; file: string };
}
