import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DURABLE_SHAPES, type DurableShape } from './durable-shapes.js';
import { KEYS_SHAPES, type KeysShape } from './keys-shapes.js';
import { STEADY_SHAPES, type SteadyShape } from './steady-shapes.js';
import { SYSTEM_NAMES, type SystemName } from './systems/system.js';

/** The scenarios a user can pick with --scenarios; drain and multi expand to one per concurrency. */
export const SCENARIO_NAMES = ['enqueue', 'drain', 'multi', 'latency', 'memory', 'backlog', 'pgbench', 'profile', 'actor', 'schedules', 'flows', 'durable', 'keys', 'steady'] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];
/** A full run's: all but schedules, flows, durable, keys and steady, which run on their own
 *  (their figures are kept in results/schedules.json, flows.json, durable.json, keys.json and
 *  steady.json, and the report takes them from there). */
const ON_THEIR_OWN: readonly ScenarioName[] = ['schedules', 'flows', 'durable', 'keys', 'steady'];
const DEFAULT_SCENARIOS = SCENARIO_NAMES.filter((s) => !ON_THEIR_OWN.includes(s));

export interface Sizes {
  enqueueJobs: number;
  drainJobs: number;
  drainWarmup: number;
  latencySamples: number;
  latencyWarmup: number;
  memoryJobs: number;
  backlogJobs: number;
  /** Jobs timed out of the big backlog; the same count as a drain, so the rates compare. */
  backlogMeasure: number;
  backlogConcurrency: number;
  pgbenchSeconds: number;
  pgbenchClients: number;
  /** keys: jobs per tenant of a drain's backlog (100 tenants), and enqueues of an enqueue shape. */
  keysJobsPerTenant: number;
  keysEnqueues: number;
  /** steady: seconds measured per rate shape, after `steadyWarmupS` at the same rate. */
  steadySeconds: number;
  steadyWarmupS: number;
  /** steady: the backlog of its drain shape. */
  steadyDrainJobs: number;
}

export interface BenchOptions {
  quick: boolean;
  runs: number;
  systems: SystemName[];
  scenarios: ScenarioName[];
  concurrencies: number[];
  sizes: Sizes;
  connectionString: string;
  /** Checkouts whose src/ runs as jobvisor; with several, each is a variant measured
   *  interleaved with the others (an A/B of engine changes). */
  jobvisorRoots: string[];
  /** Seconds to wait, before each run, for the other processes on the machine to go quiet. */
  quietWaitS: number;
  /** Most seconds of such waiting in the whole bench, so a busy machine cannot stretch it. */
  quietBudgetS: number;
  /** A full default run writes results/latest.json and BENCHMARKS.md; others a side file. */
  full: boolean;
  out: string;
  reportOnly: boolean;
  /** durable: which of its shapes (durable-load.ts); all when absent. */
  durableShapes?: DurableShape[];
  /** keys: which of its shapes (keys-load.ts); all when absent. */
  keysShapes?: KeysShape[];
  /** steady: which of its shapes (steady-load.ts); all when absent. */
  steadyShapes?: SteadyShape[];
  /** Per-run timeout of a child process. */
  runTimeoutS: number;
}

const FULL: Sizes = {
  enqueueJobs: 20_000,
  drainJobs: 20_000,
  drainWarmup: 1_000,
  latencySamples: 200,
  latencyWarmup: 20,
  memoryJobs: 10_000,
  backlogJobs: 200_000,
  backlogMeasure: 20_000,
  backlogConcurrency: 50,
  pgbenchSeconds: 10,
  pgbenchClients: 10,
  keysJobsPerTenant: 100,
  keysEnqueues: 2_000,
  steadySeconds: 30,
  steadyWarmupS: 5,
  steadyDrainJobs: 20_000,
};

const QUICK: Sizes = {
  enqueueJobs: 5_000,
  drainJobs: 5_000,
  drainWarmup: 500,
  latencySamples: 50,
  latencyWarmup: 10,
  memoryJobs: 2_000,
  backlogJobs: 50_000,
  backlogMeasure: 5_000,
  backlogConcurrency: 50,
  pgbenchSeconds: 3,
  pgbenchClients: 10,
  keysJobsPerTenant: 20,
  keysEnqueues: 500,
  steadySeconds: 10,
  steadyWarmupS: 3,
  steadyDrainJobs: 5_000,
};

export const USAGE = `usage: npm run bench -- [options]      (from the repo root; runs on Node 22)

  --quick                 1 run, smaller N (5,000 jobs, 50 latency samples …) for iteration
  --runs N                runs per figure (default 3; --quick 1)
  --systems a,b           jobvisor,graphile-worker,pg-boss (default all)
  --scenarios a,b         ${SCENARIO_NAMES.join(',')} (default all but schedules, flows, durable, keys, steady)
  --concurrency 10,50     drain concurrencies (default 10,50)
  --durable a,b           the durable scenario's shapes: ${DURABLE_SHAPES.join(',')} (default all)
  --keys a,b              the keys scenario's shapes: ${KEYS_SHAPES.join(',')} (default all)
  --steady a,b            the steady scenario's shapes: ${STEADY_SHAPES.join(',')} (default all)
  --steady-seconds S      seconds measured per steady rate shape (default 30; --quick 10)
  --steady-warmup S       seconds at the rate before they are measured (default 5; --quick 3)
  --latency-samples N     enqueue → start samples per latency run (default 200; --quick 50): more
                          samples read the p99 with less spread (not a full run then)
  --jobvisor-root DIR     benchmark the src/ of another checkout (e.g. a git worktree); give it
                          twice (or DIR1,DIR2) to run them side by side as jobvisor@<commit>
  --database URL          default $DATABASE_URL or postgres://postgres@127.0.0.1:5432/test
  --quiet-wait S          before each run wait up to S s for the machine to go idle (default 15,
                          at most 150 s in all; --quick 0)
  --out FILE              results file (default results/latest.json for a full run, else results/last-run.json)
  --report-only           regenerate BENCHMARKS.md and the chart from results/latest.json
  --help`;

export function parseOptions(argv: string[], benchDir: string): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      runs: { type: 'string' },
      systems: { type: 'string' },
      scenarios: { type: 'string' },
      concurrency: { type: 'string' },
      durable: { type: 'string' },
      keys: { type: 'string' },
      steady: { type: 'string' },
      'steady-seconds': { type: 'string' },
      'steady-warmup': { type: 'string' },
      'latency-samples': { type: 'string' },
      'jobvisor-root': { type: 'string', multiple: true },
      database: { type: 'string' },
      'quiet-wait': { type: 'string' },
      out: { type: 'string' },
      'report-only': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    allowPositionals: false,
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const quick = values.quick ?? false;
  const list = <T extends string>(raw: string | undefined, allowed: readonly T[], what: string, fallback: readonly T[] = allowed): T[] => {
    if (raw === undefined) return [...fallback];
    const items = raw.split(',').map((s) => s.trim()).filter(Boolean);
    for (const item of items) {
      if (!allowed.includes(item as T)) throw new Error(`unknown ${what} "${item}"; one of ${allowed.join(', ')}`);
    }
    return items as T[];
  };
  const positiveInt = (raw: string | undefined, fallback: number, what: string): number => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0) throw new Error(`${what} must be a non-negative integer, got "${raw}"`);
    return n;
  };
  const sizes = quick ? QUICK : FULL;
  const systems = list(values.systems, SYSTEM_NAMES, 'system');
  const scenarios = list(values.scenarios, SCENARIO_NAMES, 'scenario', DEFAULT_SCENARIOS);
  const concurrencies = (values.concurrency ?? '10,50').split(',').map((c) => positiveInt(c, 0, '--concurrency'));
  const runs = Math.max(1, positiveInt(values.runs, quick ? 1 : 3, '--runs'));
  const jobvisorRoots = (values['jobvisor-root'] ?? ['..'])
    .flatMap((r) => r.split(','))
    .map((r) => resolve(r === '..' ? resolve(benchDir, '..') : r));
  const full =
    !quick &&
    values.systems === undefined &&
    values.scenarios === undefined &&
    values.concurrency === undefined &&
    values['latency-samples'] === undefined &&
    jobvisorRoots.length === 1 &&
    runs >= 3;
  return {
    quick,
    runs,
    systems,
    scenarios,
    concurrencies,
    sizes: {
      ...sizes,
      steadySeconds: Math.max(1, positiveInt(values['steady-seconds'], sizes.steadySeconds, '--steady-seconds')),
      steadyWarmupS: positiveInt(values['steady-warmup'], sizes.steadyWarmupS, '--steady-warmup'),
      latencySamples: Math.max(1, positiveInt(values['latency-samples'], sizes.latencySamples, '--latency-samples')),
    },
    connectionString: values.database ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    jobvisorRoots,
    quietWaitS: positiveInt(values['quiet-wait'], quick ? 0 : 15, '--quiet-wait'),
    quietBudgetS: 150,
    full,
    out: resolve(benchDir, values.out ?? (full || values['report-only'] ? 'results/latest.json' : 'results/last-run.json')),
    reportOnly: values['report-only'] ?? false,
    ...(values.durable === undefined ? {} : { durableShapes: list(values.durable, DURABLE_SHAPES, 'durable shape') }),
    ...(values.keys === undefined ? {} : { keysShapes: list(values.keys, KEYS_SHAPES, 'keys shape') }),
    ...(values.steady === undefined ? {} : { steadyShapes: list(values.steady, STEADY_SHAPES, 'steady shape') }),
    runTimeoutS: 600,
  };
}
