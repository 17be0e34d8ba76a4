/**
 * The performance issues' targets, each with its ratio from one full run and met or not: issue
 * 13's (the first targets against the peers) and issue 26's (the history's layout), which also
 * asks that every target of 13 met before it stays met.
 */
import { fmtInt, num } from './format.js';
import type { BenchResults } from './results.js';
import type { Spread } from './stats.js';
import type { SystemName } from './systems/system.js';

export type Get = (scenario: string, system: SystemName, metric: string) => Spread | undefined;

interface Target {
  /** Stable across runs (labels carry the run's sizes). */
  id: string;
  label: string;
  /** jobvisor's figure, and the one it is divided by; a target on jobvisor's figure alone has no `b`. */
  a: number | undefined;
  b?: number | undefined;
  digits: number;
  goal: string;
  /** Judged on the ratio, or on `a` itself when there is no `b`. */
  ok: (x: number) => boolean;
}

/** Issue 13's targets met in the full run of 2026-12-02, the last before issue 26 changed the history. */
export const MET_BEFORE_ISSUE_26 = ['statements-c50', 'drain-c10-pg-boss', 'multi-c10', 'multi-c50', 'latency-p99', 'backlog'];

const GW: SystemName = 'graphile-worker';

export function maxConcurrency(r: BenchResults): number {
  return Math.max(...r.concurrencies);
}

function medianOf(get: Get) {
  return (scenario: string, system: SystemName, metric: string) => get(scenario, system, metric)?.median;
}

export function issue13Targets(r: BenchResults, get: Get): Target[] {
  const med = medianOf(get);
  const top = maxConcurrency(r);
  const s = r.sizes;
  const vs = (id: string, label: string, scenario: string, metric: string, peer: SystemName, digits: number, goal: string, ok: (x: number) => boolean): Target => ({
    id,
    label,
    a: med(scenario, 'jobvisor', metric),
    b: med(scenario, peer, metric),
    digits,
    goal,
    ok,
  });
  const each = (make: (c: number) => Target) => r.concurrencies.map(make);
  return [
    ...each((c) => vs(`pg-cpu-c${c}`, `Postgres CPU per job, drain c${c} (µs) ÷ graphile-worker's`, `drain-c${c}`, 'pgCpuPerJobUs', GW, 0, 'ratio ≤ 1.0', (x) => x <= 1)),
    vs('life-pg-cpu', `Postgres CPU per job, whole life c${top} (µs) ÷ graphile-worker's`, `drain-c${top}`, 'lifePgCpuPerJobUs', GW, 0, 'ratio ≤ 1.0', (x) => x <= 1),
    ...each((c) => vs(`wal-c${c}`, `WAL per job, drain c${c} (bytes) ÷ graphile-worker's`, `drain-c${c}`, 'walBytesPerJob', GW, 0, 'ratio ≤ 1.5', (x) => x <= 1.5)),
    vs('life-wal', `WAL per job, whole life c${top} (bytes) ÷ graphile-worker's`, `drain-c${top}`, 'lifeWalBytesPerJob', GW, 0, 'ratio ≤ 1.5', (x) => x <= 1.5),
    vs('statements-c50', "statements per 1,000 jobs, drain c50 ÷ graphile-worker's", 'drain-c50', 'statementsPer1kJobs', GW, 1, 'ratio ≤ 1.0', (x) => x <= 1),
    nodeCpu(r, get, 'ratio ≤ 2.0', (x) => x <= 2),
    ...each((c) => vs(`drain-c${c}`, `drain c${c} (jobs/s) ÷ graphile-worker's`, `drain-c${c}`, 'jobsPerSec', GW, 0, 'ratio ≥ 0.5', (x) => x >= 0.5)),
    ...each((c) => vs(`drain-c${c}-pg-boss`, `drain c${c} (jobs/s) ÷ pg-boss's`, `drain-c${c}`, 'jobsPerSec', 'pg-boss', 0, 'ratio ≥ 3', (x) => x >= 3)),
    ...each((c) => ({
      id: `multi-c${c}`,
      label: `jobvisor multi-queue drain c${c} ÷ its single-queue drain (jobs/s)`,
      a: med(`multi-c${c}`, 'jobvisor', 'jobsPerSec'),
      b: med(`drain-c${c}`, 'jobvisor', 'jobsPerSec'),
      digits: 0,
      goal: 'ratio ≥ 0.9',
      ok: (x: number) => x >= 0.9,
    })),
    bulkEnqueue(get),
    vs('latency-p50', "enqueue → start p50 (ms) ÷ graphile-worker's", 'latency', 'p50Ms', GW, 1, 'ratio ≤ 1.0', (x) => x <= 1),
    vs('latency-p99', "enqueue → start p99 (ms) ÷ graphile-worker's", 'latency', 'p99Ms', GW, 1, 'ratio ≤ 1.0', (x) => x <= 1),
    { id: 'heap', label: 'heap per job in flight (KB)', a: med('memory', 'jobvisor', 'heapPerJobKb'), digits: 1, goal: '≤ 5 KB', ok: (x) => x <= 5 },
    retainedHeap(get),
    {
      id: 'backlog',
      label: `backlog ${fmtInt(s.backlogJobs)} vs ${fmtInt(s.drainJobs)}, c${s.backlogConcurrency} (jobs/s)`,
      a: med('backlog', 'jobvisor', 'jobsPerSec'),
      b: med(`drain-c${s.backlogConcurrency}`, 'jobvisor', 'jobsPerSec'),
      digits: 0,
      goal: 'ratio ≥ 0.8',
      ok: (x) => x >= 0.8,
    },
  ];
}

/** Issue 26's own targets; the targets of 13 it keeps are added by its section. */
export function issue26Targets(r: BenchResults, get: Get): Target[] {
  const med = medianOf(get);
  const top = maxConcurrency(r);
  const vsGw = (id: string, label: string, scenario: string, metric: string, goal: string, ok: (x: number) => boolean): Target => ({
    id,
    label: `${label} ÷ graphile-worker's`,
    a: med(scenario, 'jobvisor', metric),
    b: med(scenario, GW, metric),
    digits: 0,
    goal,
    ok,
  });
  const atMost = (limit: number) => (x: number) => x <= limit;
  return [
    vsGw('wal-c50', 'WAL per job, drain c50 (bytes)', 'drain-c50', 'walBytesPerJob', 'ratio ≤ 1.4', atMost(1.4)),
    ...r.concurrencies.map((c) => vsGw(`pg-cpu-c${c}`, `Postgres CPU per job, drain c${c} (µs)`, `drain-c${c}`, 'pgCpuPerJobUs', 'ratio ≤ 1.2', atMost(1.2))),
    vsGw('life-pg-cpu', `Postgres CPU per job, whole life c${top} (µs)`, `drain-c${top}`, 'lifePgCpuPerJobUs', 'ratio ≤ 1.2', atMost(1.2)),
    vsGw('life-wal', `WAL per job, whole life c${top} (bytes)`, `drain-c${top}`, 'lifeWalBytesPerJob', 'ratio ≤ 1.2', atMost(1.2)),
    bulkEnqueue(get),
    nodeCpu(r, get, 'ratio ≤ 4', atMost(4)),
    retainedHeap(get),
  ];
}

function bulkEnqueue(get: Get): Target {
  const med = medianOf(get);
  return { id: 'enqueue', label: "bulk enqueue (jobs/s) ÷ graphile-worker's", a: med('enqueue', 'jobvisor', 'jobsPerSec'), b: med('enqueue', GW, 'jobsPerSec'), digits: 0, goal: 'ratio ≥ 1.0', ok: (x) => x >= 1 };
}

function nodeCpu(r: BenchResults, get: Get, goal: string, ok: (x: number) => boolean): Target {
  const med = medianOf(get);
  const top = maxConcurrency(r);
  return {
    id: 'node-cpu',
    label: `Node CPU per job, drain c${top} ÷ the minimal XState actor's (µs)`,
    a: med(`drain-c${top}`, 'jobvisor', 'cpuPerJobUs'),
    b: med('actor', 'jobvisor', 'minimalActorUs'),
    digits: 1,
    goal,
    ok,
  };
}

function retainedHeap(get: Get): Target {
  return { id: 'retained-heap', label: 'heap per job in flight, retained after a full GC (KB)', a: medianOf(get)('memory', 'jobvisor', 'retainedHeapPerJobKb'), digits: 1, goal: '≤ 5 KB', ok: (x) => x <= 5 };
}

export function issue13Section(r: BenchResults, get: Get): string[] {
  return [
    '## Targets of issue 13',
    '',
    'Ratios of medians from this run. "jobvisor" and "peer" are the two figures the ratio divides.',
    '',
    ...table(issue13Targets(r, get)),
    '',
  ];
}

export function issue26Section(r: BenchResults, get: Get): string[] {
  const kept = issue13Targets(r, get)
    .filter((t) => MET_BEFORE_ISSUE_26.includes(t.id))
    .map((t) => ({ ...t, label: `issue 13, met on 2026-12-02: ${t.label}` }));
  return [
    '## Targets of issue 26',
    '',
    'The history\'s layout (issue 26): its targets, then every target of issue 13 that the full run of 2026-12-02 met, which must still be met. Ratios of medians from this run. Where a target is not met, [the floor under it](#the-targets-of-issue-26-that-are-not-met-and-the-floor-under-each-2026-12-07) is measured in the last section.',
    '',
    ...table([...issue26Targets(r, get), ...kept]),
    '',
  ];
}

/** A target none of whose figures ran (a partial run) gets no row. */
function table(targets: readonly Target[]): string[] {
  const rows = ['| target | jobvisor | peer | ratio | goal | met |', '| --- | ---: | ---: | ---: | --- | :---: |'];
  for (const t of targets) {
    if (t.a === undefined && t.b === undefined) continue;
    const alone = !('b' in t);
    const ratio = !alone && t.a !== undefined && t.b !== undefined && t.b !== 0 ? t.a / t.b : undefined;
    const judged = alone ? t.a : ratio;
    const met = judged === undefined ? '–' : t.ok(judged) ? 'met' : '**not met**';
    rows.push(`| ${t.label} | ${num(t.a, t.digits)} | ${alone ? '' : num(t.b, t.digits)} | ${alone ? '' : ratio === undefined ? '–' : ratio.toFixed(2)} | ${t.goal} | ${met} |`);
  }
  return rows;
}
