/**
 * One chaos worker process: a supervisor on the Postgres store whose handler records every
 * execution in the `executions` table (job, attempt, worker, lease token, start, end), in
 * its own statements that commit synchronously, as a real handler's side effects would.
 *
 *   node --import tsx scripts/chaos/chaos-worker.ts '<ChaosWorkerConfig as JSON>'
 *
 * stdout carries one JSON line per event: `ready` once the supervisor runs, `stopped` with
 * its counters and how many of its writes the store's fence refused. Logs go to stderr.
 * SIGTERM stops gracefully; a closed stdin (the orchestrator is gone) ends it at once.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { pino } from 'pino';
import { postgresStore } from '../../src/adapters/postgres/index.js';
import { createSupervisor, defineQueue, type Job, type QueueCounters } from '../../src/index.js';
import { CHAOS_QUEUE, type ChaosResult } from './chaos-schema.js';

export interface ChaosWorkerConfig {
  url: string;
  schema: string;
  workerId: string;
  concurrency: number;
  leaseMs: number;
  pollIntervalMs: number;
  reaperIntervalMs: number;
  errorBackoffMs: number;
  maxErrorBackoffMs: number;
  writeRetryMs: number;
  /** Each execution works for a random time in this range, in ms. */
  workMs: readonly [number, number];
}

export type ChaosWorkerLine =
  | { event: 'ready'; worker: string }
  | {
      event: 'stopped';
      worker: string;
      counters: QueueCounters | undefined;
      /** Outcome writes the store refused (the row no longer running under our lease): when
       *  each was answered (wall-clock ms), and the state it would have written. */
      refusals: Array<[at: number, state: string]>;
      /** Lease renewals the store refused. */
      rejectedRenewals: number;
    };

const config = JSON.parse(process.argv[2] ?? '') as ChaosWorkerConfig;
const worker = config.workerId;
const emit = (line: ChaosWorkerLine): void => void process.stdout.write(`${JSON.stringify(line)}\n`);
const now = (): number => performance.timeOrigin + performance.now();

const logger = pino({ name: worker, level: 'warn' }, pino.destination(2));
const pool = new pg.Pool({ connectionString: config.url, max: config.concurrency + 4, connectionTimeoutMillis: 2_000 });
// Idle connections die with the server when it is stopped; the pool replaces them.
pool.on('error', () => {});
const store = postgresStore({ pool, schema: config.schema, logger });

let rejectedRenewals = 0;
const refusals: Array<[number, string]> = [];
const setStates = store.setStatesIfRunning.bind(store);
store.setStatesIfRunning = async (params) => {
  const applied = await setStates(params);
  applied.forEach((ok, i) => {
    if (!ok) refusals.push([Date.now(), params.outcomes[i]!.state]);
  });
  return applied;
};
const renew = store.renewLeases.bind(store);
store.renewLeases = async (params) => {
  const renewed = await renew(params);
  rejectedRenewals += renewed.filter((answer) => answer === 'lost').length;
  return renewed;
};

const executions = `"${config.schema}".executions`;

/** Records the execution, works, records its end. A failed record fails the attempt. */
async function execute(job: Job<{ n: number }>): Promise<ChaosResult> {
  const token = job.record.leaseToken;
  const { rows } = await pool.query<{ id: string }>(
    `insert into ${executions} (job_id, attempt, worker, lease_token, started_ms) values ($1, $2, $3, $4, $5) returning id`,
    [job.id, job.attempt, worker, token, now()],
  );
  try {
    const [min, max] = config.workMs;
    await sleep(min + Math.random() * (max - min), undefined, { signal: job.signal });
  } finally {
    await pool.query(`update ${executions} set ended_ms = $2 where id = $1`, [rows[0]!.id, now()]);
  }
  return { worker, token };
}

const queue = defineQueue(CHAOS_QUEUE, {
  concurrency: config.concurrency,
  leaseMs: config.leaseMs,
  // Each job carries its own maxAttempts (chaos-schema.ts).
  backoff: () => 200,
  handlers: {
    work: execute,
    poison: async (job: Job<{ n: number }>) => {
      await execute(job);
      throw new Error(`poison job ${job.id} fails every attempt`);
    },
  },
});

const supervisor = createSupervisor({
  store,
  queues: [queue],
  workerId: worker,
  logger,
  pollIntervalMs: config.pollIntervalMs,
  reaperIntervalMs: config.reaperIntervalMs,
  errorBackoffMs: config.errorBackoffMs,
  maxErrorBackoffMs: config.maxErrorBackoffMs,
  writeRetryMs: config.writeRetryMs,
});

process.stdin.on('end', () => process.exit(1));
process.stdin.resume();
process.once('SIGTERM', () => {
  void (async () => {
    await supervisor.stop({ graceMs: 5_000 });
    await store.close();
    await pool.end();
    const counters = supervisor.counters.getSnapshot().context.queues[CHAOS_QUEUE];
    const line: ChaosWorkerLine = { event: 'stopped', worker, counters, refusals, rejectedRenewals };
    process.stdout.write(`${JSON.stringify(line)}\n`, () => process.exit(0));
  })();
});

await supervisor.start();
emit({ event: 'ready', worker });
