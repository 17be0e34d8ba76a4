/**
 * The benchmark of issue 6: jobvisor against graphile-worker and pg-boss on one Postgres
 * server. Forks one process per (run, scenario, system), each on a fresh schema that is
 * dropped afterwards; runs are interleaved (run 1 of everything, then run 2 …) so that a
 * burst of load from elsewhere on the machine lands on all systems alike.
 */
import { fork } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { summariseProfile } from './cpu-profile.js';
import { machineInfo, versions, waitForQuiet } from './machine.js';
import { PATH_PARTS } from './latency-path.js';
import { type BenchOptions, parseOptions } from './options.js';
import { PGBENCH_SCRIPT, pgbenchOnce, type PgbenchRun, withPgbenchDatabase } from './pgbench.js';
import { DURABLE_TITLE, FLOWS_TITLE, SCHEDULES_TITLE, writeKeysSection, writeReport, writeSteadySection } from './report.js';
import { SCHEDULE_COUNTS, scheduleScenario, type ScheduleResults } from './schedule-load.js';
import { FLOW_CONCURRENCY, FLOW_SHAPES, FLOW_WIDTH, flowScenario, type FlowResults } from './flow-load.js';
import { durableSpec, type DurableResults } from './durable-load.js';
import { DURABLE_SHAPES, durableScenario } from './durable-shapes.js';
import { keysSpec, type KeysResults } from './keys-load.js';
import { KEYS_SHAPES, keysScenario } from './keys-shapes.js';
import { steadySpec, type SteadyResults } from './steady-load.js';
import { STEADY_SHAPES, steadyScenario } from './steady-shapes.js';
import type { BenchResults, Measurement } from './results.js';
import type { ChildMessage, RunResult, RunSpec } from './run-spec.js';
import { spread } from './stats.js';
import { SYSTEM_SETTINGS, type SystemName } from './systems/system.js';

const benchDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const repoRoot = join(benchDir, '..');
const SCHEMA_PREFIX = 'jvbench_';
let quietWaitedS = 0;

/** A system as run: jobvisor once per checkout compared. */
interface Entry {
  system: SystemName;
  label: string;
  root: string;
}

interface Task {
  scenario: string;
  spec: Omit<RunSpec, 'connectionString' | 'schema' | 'jobvisorRoot' | 'system'>;
  systems: SystemName[];
}

const options = parseOptions(process.argv.slice(2), benchDir);
if (options.reportOnly) {
  const results = JSON.parse(await readFile(options.out, 'utf8')) as BenchResults;
  await writeReport(results, { ...benchmarksPaths(), keep: true });
  console.log('BENCHMARKS.md regenerated from', relative(repoRoot, options.out));
  process.exit(0);
}
await main(options);

async function main(opts: BenchOptions): Promise<void> {
  const startedAt = new Date();
  await mkdir(join(benchDir, 'results'), { recursive: true });
  const admin = new pg.Client({ connectionString: opts.connectionString });
  await admin.connect();
  await dropLeftoverSchemas(admin);
  const machine = await machineInfo(opts.connectionString);
  const vers = versions(benchDir, opts.jobvisorRoots[0]!);
  const jobvisors: Entry[] = opts.jobvisorRoots.map((root) => ({
    system: 'jobvisor',
    root,
    label: opts.jobvisorRoots.length === 1 ? 'jobvisor' : `jobvisor@${checkoutLabel(root)}`,
  }));
  const entries = (systems: SystemName[]): Entry[] =>
    systems.flatMap((system) => (system === 'jobvisor' ? jobvisors : [{ system, label: system, root: opts.jobvisorRoots[0]! }]));
  log(`bench: ${opts.full ? 'full run' : opts.quick ? 'quick run' : 'partial run'} on Node ${machine.node}, PostgreSQL ${machine.postgres}, ${machine.cores} cores`);
  log(`bench: jobvisor ${vers.jobvisor.version} @ ${vers.jobvisor.commit}${vers.jobvisor.dirtySrcFiles.length ? ` + ${vers.jobvisor.dirtySrcFiles.length} uncommitted src files` : ''} from ${opts.jobvisorRoots.join(', ')}; graphile-worker ${vers['graphile-worker']}; pg-boss ${vers['pg-boss']}`);

  const results: BenchResults = {
    full: opts.full,
    quick: opts.quick,
    startedAt: startedAt.toISOString(),
    finishedAt: '',
    durationS: 0,
    quietWaitedS: 0,
    runs: opts.runs,
    concurrencies: opts.concurrencies,
    sizes: opts.sizes,
    machine,
    versions: vers,
    settings: { ...SYSTEM_SETTINGS },
    measurements: [],
    summary: {},
  };

  if (opts.scenarios.includes('pgbench')) results.pgbench = await runPgbench(opts);

  const tasks = plan(opts);
  for (let run = 1; run <= opts.runs; run++) {
    for (const task of tasks) {
      for (const entry of entries(task.systems)) {
        results.measurements.push(await runOne(opts, admin, task, entry, run));
      }
    }
  }

  if (opts.scenarios.includes('profile') && opts.systems.includes('jobvisor') && jobvisors.length === 1) {
    const c = Math.max(...opts.concurrencies);
    const file = join(benchDir, 'results', `jobvisor-drain-c${c}.cpuprofile`);
    const task: Task = {
      scenario: `profile-c${c}`,
      systems: ['jobvisor'],
      spec: { kind: 'profile', jobs: opts.sizes.drainJobs, concurrency: c, warmup: opts.sizes.drainWarmup, profileOut: file },
    };
    const m = await runOne(opts, admin, task, jobvisors[0]!, 1);
    if (m.ok) {
      results.profile = { scenario: task.scenario, file: relative(repoRoot, file), ...(await summariseProfile(file, opts.sizes.drainJobs, jobvisors[0]!.root)) };
    }
  }
  await admin.end();

  results.summary = summarise(results.measurements);
  results.quietWaitedS = Math.round(quietWaitedS);
  const finishedAt = new Date();
  results.finishedAt = finishedAt.toISOString();
  results.durationS = Math.round((finishedAt.getTime() - startedAt.getTime()) / 1000);
  await writeFile(opts.out, `${JSON.stringify(results, null, 2)}\n`);
  if (!opts.full && opts.scenarios.includes('schedules')) await keepScheduleResults(results);
  if (!opts.full && opts.scenarios.includes('flows')) await keepFlowResults(results);
  if (!opts.full && opts.scenarios.includes('durable')) await keepDurableResults(results, vers);
  if (!opts.full && opts.scenarios.includes('keys') && jobvisors.length === 1) await keepKeysResults(results, opts);
  if (!opts.full && opts.scenarios.includes('steady') && jobvisors.length === 1) await keepSteadyResults(results, opts);
  const side = opts.out.replace(/\.json$/, '');
  await writeReport(results, {
    markdownPath: opts.full ? join(repoRoot, 'BENCHMARKS.md') : `${side}.md`,
    keep: opts.full,
    chartPath: opts.full ? join(benchDir, 'results/throughput-by-concurrency.svg') : `${side}.svg`,
    repoRoot,
    benchDir,
  });
  printSummary(results);
  log(`bench: done in ${results.durationS} s; results in ${relative(process.cwd(), opts.out)}${opts.full ? ', BENCHMARKS.md regenerated' : ` and ${relative(process.cwd(), side)}.md`}`);
  const failed = results.measurements.filter((m) => !m.ok);
  if (failed.length > 0) {
    log(`bench: ${failed.length} run(s) failed`);
    process.exitCode = 1;
  }
}

/** A run of the schedules scenario alone keeps its figures in results/schedules.json, and
 *  BENCHMARKS.md is redone from latest.json with them (its other figures unchanged). */
async function keepScheduleResults(results: BenchResults): Promise<void> {
  const summary = Object.fromEntries(Object.entries(results.summary).filter(([scenario]) => scenario.startsWith('schedules-')));
  const kept: ScheduleResults = { startedAt: results.startedAt, runs: results.runs, machine: results.machine, versions: results.versions, summary };
  await writeFile(join(benchDir, 'results/schedules.json'), `${JSON.stringify(kept, null, 2)}\n`);
  const latest = JSON.parse(await readFile(join(benchDir, 'results/latest.json'), 'utf8')) as BenchResults;
  await writeReport(latest, { ...benchmarksPaths(), keep: true, renewed: [SCHEDULES_TITLE] });
  log('bench: schedules figures kept in bench/results/schedules.json; BENCHMARKS.md regenerated');
}

/** As the schedules: a run of the flows scenario keeps its figures in results/flows.json, with
 *  the machine's load before each run, and BENCHMARKS.md is redone from latest.json with them. */
async function keepFlowResults(results: BenchResults): Promise<void> {
  const ours = (scenario: string) => scenario.startsWith('flows-');
  const summary = Object.fromEntries(Object.entries(results.summary).filter(([scenario]) => ours(scenario)));
  const load = results.measurements.filter((m) => ours(m.scenario)).map(({ scenario, run, busyBefore, load1 }) => ({ scenario, run, busyBefore, load1 }));
  const kept: FlowResults = { startedAt: results.startedAt, runs: results.runs, machine: results.machine, versions: results.versions, summary, load };
  await writeFile(join(benchDir, 'results/flows.json'), `${JSON.stringify(kept, null, 2)}\n`);
  const latest = JSON.parse(await readFile(join(benchDir, 'results/latest.json'), 'utf8')) as BenchResults;
  await writeReport(latest, { ...benchmarksPaths(), keep: true, renewed: [FLOWS_TITLE] });
  log('bench: flows figures kept in bench/results/flows.json; BENCHMARKS.md regenerated');
}

/** As the flows: a run of the durable scenario keeps its figures in results/durable.json. */
async function keepDurableResults(results: BenchResults, vers: BenchResults['versions']): Promise<void> {
  const ours = (scenario: string) => scenario.startsWith('durable-');
  const summary = Object.fromEntries(Object.entries(results.summary).filter(([scenario]) => ours(scenario)));
  const load = results.measurements.filter((m) => ours(m.scenario)).map(({ scenario, run, busyBefore, load1 }) => ({ scenario, run, busyBefore, load1 }));
  const dbos = await readFile(join(benchDir, 'node_modules/@dbos-inc/dbos-sdk/package.json'), 'utf8').then((t) => (JSON.parse(t) as { version: string }).version, () => '?');
  const kept: DurableResults = { startedAt: results.startedAt, runs: results.runs, machine: results.machine, versions: vers, dbos, summary, load };
  await writeFile(join(benchDir, 'results/durable.json'), `${JSON.stringify(kept, null, 2)}\n`);
  const latest = JSON.parse(await readFile(join(benchDir, 'results/latest.json'), 'utf8')) as BenchResults;
  await writeReport(latest, { ...benchmarksPaths(), keep: true, renewed: [DURABLE_TITLE] });
  log('bench: durable figures kept in bench/results/durable.json; BENCHMARKS.md regenerated');
}

/** As the durable: a run of the keys scenario keeps its figures in results/keys.json; in
 *  BENCHMARKS.md only their section is redone, in place (report.ts, writeKeysSection). */
async function keepKeysResults(results: BenchResults, opts: BenchOptions): Promise<void> {
  const ours = (scenario: string) => scenario.startsWith('keys-');
  const summary = Object.fromEntries(Object.entries(results.summary).filter(([scenario]) => ours(scenario)));
  const load = results.measurements.filter((m) => ours(m.scenario)).map(({ scenario, run, busyBefore, load1 }) => ({ scenario, run, busyBefore, load1 }));
  const sizes = { jobsPerTenant: opts.sizes.keysJobsPerTenant, enqueues: opts.sizes.keysEnqueues };
  const kept: KeysResults = { startedAt: results.startedAt, runs: results.runs, machine: results.machine, versions: results.versions, sizes, summary, load };
  await writeFile(join(benchDir, 'results/keys.json'), `${JSON.stringify(kept, null, 2)}\n`);
  await writeKeysSection(join(repoRoot, 'BENCHMARKS.md'), kept);
  log('bench: keys figures kept in bench/results/keys.json; their section of BENCHMARKS.md redone in place');
}

/** As the keys: a run of the steady scenario keeps its figures in results/steady.json, and only
 *  their section of BENCHMARKS.md is redone, in place (report.ts, writeSteadySection). */
async function keepSteadyResults(results: BenchResults, opts: BenchOptions): Promise<void> {
  const ours = (scenario: string) => scenario.startsWith('steady-');
  const summary = Object.fromEntries(Object.entries(results.summary).filter(([scenario]) => ours(scenario)));
  const load = results.measurements.filter((m) => ours(m.scenario)).map(({ scenario, run, busyBefore, load1 }) => ({ scenario, run, busyBefore, load1 }));
  const sizes = { seconds: opts.sizes.steadySeconds, warmupS: opts.sizes.steadyWarmupS, drainJobs: opts.sizes.steadyDrainJobs };
  const kept: SteadyResults = { startedAt: results.startedAt, runs: results.runs, machine: results.machine, versions: results.versions, sizes, summary, load };
  await writeFile(join(benchDir, 'results/steady.json'), `${JSON.stringify(kept, null, 2)}\n`);
  await writeSteadySection(join(repoRoot, 'BENCHMARKS.md'), kept);
  log('bench: steady figures kept in bench/results/steady.json; their section of BENCHMARKS.md redone in place');
}

function plan(opts: BenchOptions): Task[] {
  const s = opts.sizes;
  const tasks: Task[] = [];
  const all = opts.systems;
  const jobvisorOnly: SystemName[] = all.includes('jobvisor') ? ['jobvisor'] : [];
  for (const scenario of opts.scenarios) {
    switch (scenario) {
      case 'enqueue':
        tasks.push({ scenario, systems: all, spec: { kind: 'enqueue', jobs: s.enqueueJobs, warmup: 100 } });
        break;
      case 'drain':
        for (const c of opts.concurrencies) {
          tasks.push({ scenario: `drain-c${c}`, systems: all, spec: { kind: 'drain', jobs: s.drainJobs, concurrency: c, warmup: s.drainWarmup } });
        }
        break;
      case 'multi':
        for (const c of opts.concurrencies) {
          tasks.push({
            scenario: `multi-c${c}`,
            systems: all,
            spec: { kind: 'drain', layout: 'multi', jobs: s.drainJobs, concurrency: c, warmup: s.drainWarmup },
          });
        }
        break;
      case 'latency':
        tasks.push({ scenario, systems: all, spec: { kind: 'latency', jobs: 0, samples: s.latencySamples, warmup: s.latencyWarmup, concurrency: 10 } });
        break;
      case 'memory':
        tasks.push({ scenario, systems: jobvisorOnly, spec: { kind: 'memory', jobs: s.memoryJobs, concurrency: s.memoryJobs } });
        break;
      case 'backlog':
        tasks.push({
          scenario,
          systems: jobvisorOnly,
          spec: { kind: 'drain', jobs: s.backlogJobs, measure: s.backlogMeasure, concurrency: s.backlogConcurrency, warmup: s.drainWarmup },
        });
        break;
      case 'actor':
        tasks.push({ scenario, systems: jobvisorOnly, spec: { kind: 'actor', jobs: s.drainJobs, concurrency: s.backlogConcurrency } });
        break;
      case 'schedules':
        for (const count of SCHEDULE_COUNTS) {
          tasks.push({ scenario: scheduleScenario(count), systems: jobvisorOnly, spec: { kind: 'schedules', jobs: count } });
        }
        break;
      case 'flows':
        for (const shape of FLOW_SHAPES) {
          tasks.push({ scenario: flowScenario(shape), systems: jobvisorOnly, spec: { kind: 'flows', flowShape: shape, jobs: FLOW_WIDTH, concurrency: FLOW_CONCURRENCY } });
        }
        break;
      case 'durable':
        for (const shape of opts.durableShapes ?? DURABLE_SHAPES) {
          tasks.push({ scenario: durableScenario(shape), systems: jobvisorOnly, spec: { kind: 'durable', durableShape: shape, ...durableSpec(shape) } });
        }
        break;
      case 'keys':
        for (const shape of opts.keysShapes ?? KEYS_SHAPES) {
          tasks.push({ scenario: keysScenario(shape), systems: jobvisorOnly, spec: { kind: 'keys', keysShape: shape, ...keysSpec(shape, s) } });
        }
        break;
      case 'steady':
        for (const shape of opts.steadyShapes ?? STEADY_SHAPES) {
          tasks.push({ scenario: steadyScenario(shape), systems: jobvisorOnly, spec: { kind: 'steady', steadyShape: shape, ...steadySpec(shape, s) } });
        }
        break;
      case 'pgbench':
      case 'profile':
        break;
    }
  }
  return tasks.filter((t) => t.systems.length > 0);
}

async function runOne(opts: BenchOptions, admin: pg.Client, task: Task, entry: Entry, run: number): Promise<Measurement> {
  const { system, label } = entry;
  const quiet = await quietMachine(opts);
  const schema = `${SCHEMA_PREFIX}${task.scenario}_${system}_r${run}_${process.pid}`.replace(/-/g, '_');
  const spec: RunSpec = { ...task.spec, system, schema, connectionString: opts.connectionString, jobvisorRoot: entry.root };
  const t0 = performance.now();
  let outcome: ChildMessage;
  try {
    outcome = { ok: true, result: await runChild(spec, opts.runTimeoutS) };
  } catch (error) {
    outcome = { ok: false, error: error instanceof Error ? error.message : String(error) };
  } finally {
    await admin.query(`drop schema if exists "${schema}" cascade`);
  }
  const m: Measurement = {
    scenario: task.scenario,
    system,
    label,
    run,
    ok: outcome.ok,
    ...(outcome.ok ? {} : { error: outcome.error }),
    metrics: outcome.ok ? outcome.result.metrics : {},
    busyBefore: round(quiet.busy, 3),
    load1: round(quiet.load1, 2),
    wallS: round((performance.now() - t0) / 1000, 1),
  };
  const headline = m.ok ? describe(m.metrics) : `FAILED: ${m.error?.split('\n')[0]}`;
  log(`[run ${run}/${opts.runs}] ${task.scenario.padEnd(10)} ${label.padEnd(15)} ${headline}  (${m.wallS} s, machine ${Math.round(quiet.busy * 100)}% busy before)`);
  return m;
}

async function quietMachine(opts: BenchOptions): ReturnType<typeof waitForQuiet> {
  const quiet = await waitForQuiet(Math.min(opts.quietWaitS, Math.max(0, opts.quietBudgetS - quietWaitedS)));
  quietWaitedS += quiet.waitedS;
  return quiet;
}

function runChild(spec: RunSpec, timeoutS: number): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = fork(join(benchDir, 'src/child.ts'), [JSON.stringify(spec)], {
      // tsx runs the TypeScript (jobvisor's src/ too); --expose-gc lets a run start from a collected heap.
      execArgv: ['--import', 'tsx', '--expose-gc'],
      cwd: benchDir,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let answer: ChildMessage | undefined;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`run timed out after ${timeoutS} s`));
    }, timeoutS * 1000);
    child.on('message', (message) => (answer = message as ChildMessage));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (answer?.ok) resolve(answer.result);
      else reject(new Error(answer && !answer.ok ? answer.error : `run exited with ${signal ?? code} and no result`));
    });
  });
}

async function runPgbench(opts: BenchOptions): Promise<NonNullable<BenchResults['pgbench']>> {
  const setup = { connectionString: opts.connectionString, clients: opts.sizes.pgbenchClients, seconds: opts.sizes.pgbenchSeconds };
  const runs: PgbenchRun[] = await withPgbenchDatabase(opts.connectionString, async (url) => {
    const out: PgbenchRun[] = [];
    for (let run = 1; run <= opts.runs; run++) {
      const quiet = await quietMachine(opts);
      const r = await pgbenchOnce(url, setup);
      log(`[run ${run}/${opts.runs}] pgbench    one-row update, ${setup.clients} clients, ${setup.seconds} s: ${fmt(r.tps)} TPS (machine ${Math.round(quiet.busy * 100)}% busy before)`);
      out.push(r);
    }
    return out;
  });
  return {
    clients: setup.clients,
    seconds: setup.seconds,
    script: PGBENCH_SCRIPT,
    runs,
    tps: spread(runs.map((r) => r.tps)),
    latencyMs: spread(runs.map((r) => r.latencyMs)),
  };
}

function summarise(measurements: Measurement[]): BenchResults['summary'] {
  const summary: BenchResults['summary'] = {};
  for (const m of measurements) {
    if (!m.ok) continue;
    const bySystem = (summary[m.scenario] ??= {});
    const metrics = (bySystem[m.label] ??= {});
    for (const name of Object.keys(m.metrics)) {
      const values = measurements
        .filter((o) => o.ok && o.scenario === m.scenario && o.label === m.label)
        .map((o) => o.metrics[name]!)
        .filter((v) => v !== undefined);
      metrics[name] = spread(values);
    }
  }
  return summary;
}

/** Schemas and pgbench databases of an earlier bench run that was killed: only ours (by
 *  prefix), only of processes that are gone. */
async function dropLeftoverSchemas(admin: pg.Client): Promise<void> {
  const { rows } = await admin.query(`select nspname from pg_namespace where nspname like '${SCHEMA_PREFIX}%'`);
  for (const { nspname } of rows as { nspname: string }[]) {
    const pid = Number(/_(\d+)$/.exec(nspname)?.[1]);
    if (Number.isInteger(pid) && pid !== process.pid && isAlive(pid)) continue;
    await admin.query(`drop schema if exists "${nspname}" cascade`);
  }
  const dbs = await admin.query(`select datname from pg_database where datname like 'jobvisor_bench_pgbench_%'`);
  for (const { datname } of dbs.rows as { datname: string }[]) {
    const pid = Number(/_(\d+)$/.exec(datname)?.[1]);
    if (Number.isInteger(pid) && isAlive(pid)) continue;
    await admin.query(`drop database if exists "${datname}"`);
  }
}

/** `<short commit>` of a checkout, `+` when its src/ has uncommitted changes. */
function checkoutLabel(root: string): string {
  const v = versions(benchDir, root).jobvisor;
  return `${v.commit || root}${v.dirtySrcFiles.length > 0 ? '+' : ''}`;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function describe(metrics: Record<string, number>): string {
  const parts: string[] = [];
  if (metrics.jobsPerSec !== undefined) parts.push(`${fmt(metrics.jobsPerSec)} jobs/s`);
  if (metrics.cpuPerJobUs !== undefined) parts.push(`${fmt(metrics.cpuPerJobUs)} µs CPU/job`);
  if (metrics.statementsPer1kJobs !== undefined) parts.push(`${fmt(metrics.statementsPer1kJobs)} statements/1k jobs`);
  if (metrics.jobs !== undefined && metrics.ms !== undefined) parts.push(`${fmt(metrics.jobs)} jobs in ${fmt(metrics.ms)} ms end to end`);
  if (metrics.pgCpuPerJobUs !== undefined) parts.push(`Postgres ${fmt(metrics.pgCpuPerJobUs)} µs CPU/job`);
  if (metrics.walBytesPerJob !== undefined) parts.push(`WAL ${fmt(metrics.walBytesPerJob)} B/job`);
  if (metrics.lifeWalBytesPerJob !== undefined) parts.push(`with enqueue ${fmt(metrics.lifeWalBytesPerJob)} B/job`);
  if (metrics.enqueueWalBytesPerJob !== undefined) parts.push(`WAL ${fmt(metrics.enqueueWalBytesPerJob)} B/job, Postgres ${fmt(metrics.enqueuePgCpuPerJobUs!)} µs CPU/job`);
  if (metrics.enqueuedPerSec !== undefined) {
    parts.push(`offered ${fmt(metrics.rate!)} jobs/s: enqueued ${fmt(metrics.enqueuedPerSec)}/s, completed ${fmt(metrics.completedPerSec!)}/s, enqueue → start p50 ${metrics.startP50Ms!.toFixed(1)} ms, p99 ${metrics.startP99Ms!.toFixed(1)} ms`);
  }
  if (metrics.lifeDiskBytesPerJob !== undefined) {
    parts.push(`whole life per job: ${metrics.lifeStatementsPerJob!.toFixed(2)} statements (${metrics.outcomeStatementsPerJob!.toFixed(3)} outcome), Postgres ${fmt(metrics.lifePgCpuPerJobUs!)} µs, disk ${fmt(metrics.lifeDiskBytesPerJob)} B`);
  }
  if (metrics.p50Ms !== undefined) parts.push(`p50 ${metrics.p50Ms.toFixed(1)} ms, p95 ${metrics.p95Ms!.toFixed(1)} ms, p99 ${metrics.p99Ms!.toFixed(1)} ms`);
  if (metrics.claimRoundTripP50Ms !== undefined) {
    const ms = (x: number | undefined) => x!.toFixed(2);
    const split = (kind: 'P50' | 'Tail') =>
      PATH_PARTS.map((part) => ms(metrics[`${part}${kind}Ms`])).join(' + ');
    parts.push(`split (notified + → claim sent + claim + → start, ms): p50 ${split('P50')}, slowest 2% ${split('Tail')}`);
  }
  if (metrics.jobActorUs !== undefined) parts.push(`job actor alone ${metrics.jobActorUs.toFixed(1)} µs CPU/job, minimal XState actor ${metrics.minimalActorUs!.toFixed(1)} µs`);
  if (metrics.ticksMissed !== undefined) {
    parts.push(`CPU ${fmt(metrics.idleCpuMsPerS!)} ms/s idle, ${fmt(metrics.tickCpuMsPerS!)} ms/s ticking, loop delay p99 ${fmt(metrics.loopDelayP99Ms!)} ms, ${metrics.ticksMissed} of ${metrics.ticksExpected} ticks missed, lag p99 ${fmt(metrics.tickLagP99Ms!)} ms`);
  }
  if (metrics.peakRssMb !== undefined) parts.push(`peak RSS ${fmt(metrics.peakRssMb)} MB, heap ${fmt(metrics.peakHeapUsedMb!)} MB, all started in ${fmt(metrics.startAllMs!)} ms`);
  return parts.join(', ');
}

function printSummary(results: BenchResults): void {
  log('');
  log('median [min–max] per scenario and system:');
  for (const [scenario, bySystem] of Object.entries(results.summary)) {
    for (const [system, metrics] of Object.entries(bySystem)) {
      const medians = Object.fromEntries(Object.entries(metrics).map(([k, v]) => [k, v.median]));
      log(`  ${scenario.padEnd(10)} ${system.padEnd(15)} ${describe(medians)}`);
    }
  }
  if (results.pgbench) log(`  pgbench    ${fmt(results.pgbench.tps.median)} TPS [${fmt(results.pgbench.tps.min)}–${fmt(results.pgbench.tps.max)}]`);
  // An A/B of checkouts: each later variant against the first, metric by metric.
  const labels = [...new Set(results.measurements.filter((m) => m.system === 'jobvisor').map((m) => m.label))];
  if (labels.length > 1) {
    const base = labels[0]!;
    log('');
    log(`ratios of medians against ${base}:`);
    for (const [scenario, bySystem] of Object.entries(results.summary)) {
      for (const label of labels.slice(1)) {
        const a = bySystem[base];
        const b = bySystem[label];
        if (!a || !b) continue;
        const keys = ['jobsPerSec', 'cpuPerJobUs', 'pgCpuPerJobUs', 'walBytesPerJob', 'lifeWalBytesPerJob', 'statementsPer1kJobs', 'enqueueWalBytesPerJob', 'p50Ms', 'p99Ms', 'peakRssMb', 'peakHeapUsedMb'].filter((k) => a[k] && b[k]);
        log(`  ${scenario.padEnd(10)} ${label.padEnd(15)} ${keys.map((k) => `${k} ${(b[k]!.median / a[k]!.median).toFixed(2)}×`).join(', ')}`);
      }
    }
  }
}

function fmt(n: number): string {
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1);
}

function round(n: number, digits: number): number {
  return Number.isFinite(n) ? Number(n.toFixed(digits)) : n;
}

function log(line: string): void {
  console.error(line);
}

function benchmarksPaths() {
  return { markdownPath: join(repoRoot, 'BENCHMARKS.md'), chartPath: join(benchDir, 'results/throughput-by-concurrency.svg'), repoRoot, benchDir };
}
