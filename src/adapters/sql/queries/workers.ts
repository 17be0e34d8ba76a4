import { WORKER_FORGET_MS, type HeldJob, type WorkerHeartbeat, type WorkerInfo } from '../../store.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement, NOW } from '../statement.js';

interface WorkerRow {
  worker_id: string;
  host: string;
  pid: number;
  queues: string[];
  running: number;
  held: HeldJob[] | null;
  started_at: Date;
  last_seen_at: Date;
}

/** The heartbeat's upsert; the same statement drops rows long unseen (a handful at most). */
const RECORD_WORKER = defineStatement(
  'record_worker',
  (s) => `
with forgotten as (
  delete from ${s.quoted}.workers where last_seen_at < ${NOW} - $7::float8 * interval '1 millisecond' and worker_id <> $2
)
insert into ${s.quoted}.workers as w (worker_id, host, pid, queues, running, held, started_at, last_seen_at)
values ($2, $3, $4, $5::text[], $6, $8::jsonb, ${NOW}, ${NOW})
on conflict (worker_id) do update set
  host = excluded.host, pid = excluded.pid, queues = excluded.queues, running = excluded.running, held = excluded.held,
  last_seen_at = excluded.last_seen_at
`,
);

const REMOVE_WORKER = defineStatement('remove_worker', (s) => `delete from ${s.quoted}.workers where worker_id = $1`);

const LIST_WORKERS = defineStatement(
  'list_workers',
  (s) => `select worker_id, host, pid, queues, running, held, started_at, last_seen_at from ${s.quoted}.workers order by worker_id collate "C"`,
);

export async function recordWorker(ctx: SqlContext, params: { worker: WorkerHeartbeat }): Promise<void> {
  const { workerId, host, pid, queues, running, held } = params.worker;
  const heldJson = JSON.stringify(held.map(({ id, queue }) => ({ id, queue })));
  await ctx.run(RECORD_WORKER, [ctx.now(), workerId, host, pid, [...queues], running, WORKER_FORGET_MS, heldJson]);
}

export async function removeWorker(ctx: SqlContext, params: { workerId: string }): Promise<void> {
  await ctx.run(REMOVE_WORKER, [params.workerId]);
}

export async function listWorkers(ctx: SqlContext): Promise<WorkerInfo[]> {
  const rows = await ctx.run<WorkerRow>(LIST_WORKERS, []);
  return rows.map((row) => ({
    workerId: row.worker_id,
    host: row.host,
    pid: row.pid,
    queues: row.queues,
    running: row.running,
    held: row.held,
    startedAt: row.started_at,
    lastSeenAt: row.last_seen_at,
  }));
}
