/**
 * The chaos run. On a PostgreSQL server of its own, worker processes drain the jobs while
 * the run, in order of progress (finished jobs):
 *
 *   - kills random workers with SIGKILL and starts each one's replacement at once;
 *   - pauses one with SIGSTOP (the zombie) until every job it held was rescued and finished
 *     by others, then resumes it;
 *   - crashes the server (immediate stop: no shutdown checkpoint, WAL replay on start),
 *     keeps it down for `outageMs`, and starts it again.
 *
 * Jobs are enqueued in three waves (40%, then 30% after the zombie resumed, then 30% after
 * the restart), so that each fault meets a backlog. Then it waits for every job to finish,
 * stops the workers gracefully, and checks the result (check-chaos.ts).
 *
 * Waits poll with deadlines. The only plain wait is the outage itself: its length is the
 * fault being injected, not a guess at when something will have happened.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { postgresStore } from '../../src/adapters/postgres/index.js';
import { createExecutionsTable, enqueueChaosJobs, poisonCount } from './chaos-schema.js';
import type { ChaosWorkerConfig } from './chaos-worker.js';
import { type ChaosFacts, checkChaos, type ChaosVerdict } from './check-chaos.js';
import { startScratchPostgres } from './scratch-postgres.js';
import { until } from './until.js';
import { type WorkerProcess, WorkerFleet } from './worker-fleet.js';

export interface ChaosOptions extends Omit<ChaosWorkerConfig, 'url' | 'schema' | 'workerId'> {
  jobs: number;
  /** Every n-th job is a poison job (fails every attempt, must end dead). */
  poisonEvery: number;
  workers: number;
  kills: number;
  /** How long the database stays down after its crash. */
  outageMs: number;
  /** Bound on each phase's wait (and on the final drain). */
  phaseTimeoutMs: number;
  log: (line: string) => void;
}

export interface ChaosReport extends ChaosVerdict {
  durationMs: number;
}

const SCHEMA = 'chaos';

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const began = Date.now();
  const log = (line: string) => options.log(`[${((Date.now() - began) / 1000).toFixed(1).padStart(6)} s] ${line}`);
  const { jobs: total, poisonEvery, phaseTimeoutMs } = options;
  const server = await startScratchPostgres();
  log(`own PostgreSQL server at ${server.url}`);
  const admin = new pg.Pool({ connectionString: server.url, max: 3, connectionTimeoutMillis: 2_000 });
  admin.on('error', () => {});
  const store = postgresStore({ pool: admin, schema: SCHEMA });
  const fleet = new WorkerFleet({
    url: server.url,
    schema: SCHEMA,
    concurrency: options.concurrency,
    leaseMs: options.leaseMs,
    pollIntervalMs: options.pollIntervalMs,
    reaperIntervalMs: options.reaperIntervalMs,
    errorBackoffMs: options.errorBackoffMs,
    maxErrorBackoffMs: options.maxErrorBackoffMs,
    writeRetryMs: options.writeRetryMs,
    workMs: options.workMs,
  });
  const wait = <T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false) =>
    until(what, check, { timeoutMs: phaseTimeoutMs, guard: () => fleet.assertAlive() });
  const sql = <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) => admin.query<R>(text, values).then((r) => r.rows);

  let enqueued = 0;
  const enqueueUpTo = async (share: number) => {
    const to = Math.round(total * share);
    // After the crash the pool's old connections are dead: use it once they are gone.
    await wait('the database to answer', () => sql('select 1').then(() => true));
    await enqueueChaosJobs(store, enqueued, to, poisonEvery);
    log(`enqueued jobs ${enqueued} to ${to - 1}`);
    enqueued = to;
  };
  const finished = async () =>
    (await sql<{ n: number }>(`select count(*)::int as n from "${SCHEMA}".jobs where state in ('completed', 'dead')`))[0]!.n;

  const kills: Array<ChaosFacts['kills'][number]> = [];
  let zombie: WorkerProcess | undefined;

  /** SIGKILL a random worker (never the zombie) and start its replacement. */
  const kill = async () => {
    const slots = fleet.current.map((w, slot) => ({ w, slot })).filter(({ w }) => w !== zombie);
    const { slot } = slots[Math.floor(Math.random() * slots.length)]!;
    const { killed, started } = await fleet.killAndRestart(slot);
    kills.push({ worker: killed.id, at: killed.killedAt! });
    log(`SIGKILL ${killed.id}; started ${started.id}`);
  };

  /** SIGSTOP a worker with handlers in flight; SIGCONT once all it held is done by others. */
  const pauseZombie = async (): Promise<ChaosFacts['zombie']> => {
    const { candidate, pausedAt, inflight } = await wait('a worker paused with handlers in flight', async () => {
      const busy = await sql<{ worker: string }>(`select distinct worker from "${SCHEMA}".executions where ended_ms is null`);
      const w = fleet.current.find((p) => busy.some((row) => row.worker === p.id));
      if (!w) return undefined;
      w.signal('SIGSTOP');
      const at = Date.now();
      // Frozen now, but what it sent just before stopping (a handler's end) may still land:
      // read what it has open until two reads agree.
      const open = async () =>
        (await sql<{ id: string }>(`select id::text from "${SCHEMA}".executions where worker = $1 and ended_ms is null order by id`, [w.id]))
          .map((row) => row.id)
          .join(',');
      let last = await open();
      const settled = async () => {
        const now = await open();
        const same = now === last;
        last = now;
        return same;
      };
      await until("the paused worker's last writes", settled, { timeoutMs: 10_000, intervalMs: 50 });
      if (last !== '') return { candidate: w, pausedAt: at, inflight: last.split(',') };
      w.signal('SIGCONT'); // its handlers all ended just before the pause: try again
      return undefined;
    });
    zombie = candidate;
    log(`SIGSTOP ${candidate.id}, with ${inflight.length} handlers in flight`);
    await wait("the zombie's jobs rescued and finished by other workers", async () => {
      const [left] = await sql<{ held: number; unfinished: number }>(
        `select
           (select count(*)::int from "${SCHEMA}".jobs where state = 'running' and worker_id = $1) as held,
           (select count(*)::int from "${SCHEMA}".jobs j join "${SCHEMA}".executions x on x.job_id = j.id
             where x.id = any($2::bigint[]) and j.state not in ('completed', 'dead')) as unfinished`,
        [candidate.id, inflight],
      );
      return left!.held === 0 && left!.unfinished === 0;
    });
    // Read before the signal: nothing the zombie does after it can carry an earlier time.
    const resumedAt = Date.now();
    candidate.signal('SIGCONT');
    log(`SIGCONT ${candidate.id} after ${resumedAt - pausedAt} ms; others had rescued and finished its jobs`);
    await wait("the zombie's handlers to finish", async () => {
      const [open] = await sql<{ n: number }>(
        `select count(*)::int as n from "${SCHEMA}".executions where id = any($1::bigint[]) and ended_ms is null`,
        [inflight],
      );
      return open!.n === 0;
    });
    return { worker: candidate.id, pausedAt, resumedAt, inflight };
  };

  const crashServer = async (): Promise<ChaosFacts['crash']> => {
    const at = Date.now();
    await server.stop('immediate');
    log(`database crashed (immediate stop); down for ${options.outageMs} ms`);
    await sleep(options.outageMs);
    await server.start();
    const restartedAt = Date.now();
    log('database restarted (WAL replayed)');
    // No one tells the workers: each finds out at its next claim, after its error backoff.
    const before = await finished();
    await wait('a job finished after the restart', async () => (await finished()) > before);
    const resumedAt = Date.now();
    log(`the workers completed jobs again ${resumedAt - restartedAt} ms after the restart`);
    return { at, restartedAt, resumedAt };
  };

  try {
    await store.migrate();
    await createExecutionsTable(admin, SCHEMA);
    fleet.start(options.workers);
    await wait('every worker ready', () => fleet.current.every((w) => w.ready));
    log(`${options.workers} workers ready`);

    // In order of progress: kills spread from 5% to 90% of the jobs, the zombie at 10%, the
    // crash at 50%; the later waves of jobs go in right after the zombie and the crash.
    let zombieFacts: ChaosFacts['zombie'] | undefined;
    let crashFacts: ChaosFacts['crash'] | undefined;
    const steps: Array<{ at: number; run: () => Promise<void> }> = [
      ...Array.from({ length: options.kills }, (_, i) => ({ at: 0.05 + (0.85 * i) / Math.max(1, options.kills - 1), run: kill })),
      {
        at: 0.1,
        run: async () => {
          zombieFacts = await pauseZombie();
          await enqueueUpTo(0.7);
        },
      },
      {
        at: 0.5,
        run: async () => {
          crashFacts = await crashServer();
          await enqueueUpTo(1);
        },
      },
    ].sort((a, b) => a.at - b.at);
    await enqueueUpTo(0.4);
    // Each step also waits for 2% more jobs than the last: faults due during a long one (the
    // zombie's pause) come spread out after it, not all at once.
    let last = 0;
    for (const step of steps) {
      const target = Math.min(0.95 * total, Math.max(step.at * total, last + 0.02 * total));
      await wait(`${Math.round((target / total) * 100)}% of the jobs finished`, async () => (await finished()) >= target);
      await step.run();
      last = await finished();
    }
    await wait('every job finished', async () => (await finished()) === total);
    log(`all ${total} jobs finished; stopping the workers`);
    // A replacement started by the last kill may still be loading, its SIGTERM handler not yet set.
    await wait('every worker ready', () => fleet.current.every((w) => w.ready));
    const stopped = await Promise.all(fleet.current.map((w) => w.stop(30_000)));
    const verdict = await checkChaos(admin, {
      schema: SCHEMA,
      total,
      poison: poisonCount(total, poisonEvery),
      kills,
      zombie: zombieFacts!,
      crash: crashFacts!,
      stopped,
    });
    return { ...verdict, durationMs: Date.now() - began };
  } finally {
    await fleet.killAll();
    await store.close().catch(() => {});
    await admin.end().catch(() => {});
    await server.destroy();
  }
}
