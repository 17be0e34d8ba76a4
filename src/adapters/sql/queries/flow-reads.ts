import type { FlowRecord, JobDependency } from '../../store.js';
import type { JobRecord } from '../../../types.js';
import { jobColumns, nullJobColumns, toDbId, toJobRecord } from '../job-row.js';
import type { JobRow } from '../job-row.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement } from '../statement.js';
import { CANCEL_PAYLOAD_PREFIX } from '../wake-hub.js';

/** Reads of flows (migration 0009) for handlers (`job.parents()`), the CLI and the
 *  inspector: by primary key or jobs_flow_idx, never a scan. */

interface EdgeRow {
  job_id: string;
  dep_id: string;
  name: string;
  role: 'parent' | 'child';
  on_failure: JobDependency['onFailure'];
}

const EDGE_COLUMNS = 'e.job_id::text as job_id, e.dep_id::text as dep_id, e.name, e.role, e.on_failure';

const GET_JOB_DEPENDENCIES = defineStatement(
  'get_job_dependencies',
  (s) => `
select ${EDGE_COLUMNS}, ${jobColumns('j', s)}
from ${s.quoted}.job_deps e join ${s.quoted}.jobs j on j.id = e.dep_id
where e.job_id = $1 order by e.dep_id
`,
);

/** The flow, then its jobs (id order), then its edges: one round trip, three kinds of row. */
const GET_FLOW = defineStatement(
  'get_flow',
  (s) => `
with flow as (
  select f.* from ${s.quoted}.flows f
  where f.id = coalesce($1::bigint, (select flow_id from ${s.quoted}.jobs where id = $2::bigint))
)
select 'flow' as row_kind, f.id::text as flow_id, f.name as flow_name, f.created_at as flow_created_at,
  null as flow_node, ${nullJobColumns()}, null as job_id, null as dep_id, null as name, null as role, null as on_failure
from flow f
union all
select 'job', null, null, null, j.flow_node, ${jobColumns('j', s)}, null, null, null, null, null
from flow f join ${s.quoted}.jobs j on j.flow_id = f.id
union all
select 'edge', null, null, null, null, ${nullJobColumns()}, ${EDGE_COLUMNS}
from flow f join ${s.quoted}.jobs j on j.flow_id = f.id join ${s.quoted}.job_deps e on e.job_id = j.id
`,
);

/** As cancelJob, for every job of the flow at once: waiting, pending and retrying jobs are
 *  cancelled (their own dependents follow through the trigger), running ones are asked to
 *  stop (NOTIFY, and their next renewal). */
const CANCEL_FLOW = defineStatement(
  'cancel_flow',
  (s) => `
with flow as (
  select id from ${s.quoted}.flows where id = $2
),
target as (
  select j.id, j.state from ${s.quoted}.jobs j join flow f on j.flow_id = f.id
  where j.state in ('pending', 'retrying', 'waiting', 'running', 'sleeping')
  order by j.id for update of j
),
cancelled as (
  update ${s.quoted}.jobs j
  set state = 'cancelled', error = '{"code": "cancelled", "message": "flow cancelled by request"}',
    finished_at = coalesce($1::timestamptz, now()), updated_at = coalesce($1::timestamptz, now())
  from target t
  where j.id = t.id and t.state in ('pending', 'retrying', 'waiting', 'sleeping')
  returning j.id, t.state as from_state, j.state, j.attempt, j.updated_at, j.error
),
requested as (
  update ${s.quoted}.jobs j
  set cancel_requested_at = coalesce(j.cancel_requested_at, $1::timestamptz, now()), updated_at = coalesce($1::timestamptz, now())
  from target t
  where j.id = t.id and t.state = 'running'
  returning j.id
),
notified as (
  select count(pg_notify('${s.channel}', '${CANCEL_PAYLOAD_PREFIX}' || id)) as n from requested
),
history as (
  insert into ${s.quoted}.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
  select id, from_state, state, attempt, null, updated_at, error from cancelled
)
select (select count(*)::int from cancelled) as cancelled, (select count(*)::int from requested) as requested,
  (select n from notified) as notified
from flow
`,
);

const WAIT_FOR_CHILDREN = defineStatement(
  'wait_for_children',
  (s) => `select ${s.quoted}.wait_for_children($1::timestamptz, $2::bigint, $3::text, $4::jsonb) as state`,
);

function toEdge(row: EdgeRow): JobDependency {
  return { jobId: row.job_id, dependsOnId: row.dep_id, name: row.name, role: row.role, onFailure: row.on_failure };
}

export async function getJobDependencies(ctx: SqlContext, params: { id: string }): Promise<Array<JobDependency & { job: JobRecord }>> {
  const id = toDbId(params.id);
  if (id === null) return [];
  const rows = await ctx.run<EdgeRow & JobRow>(GET_JOB_DEPENDENCIES, [id]);
  // The job's own columns come after the edge's: `id` is the dependency's.
  return rows.map((row) => ({ ...toEdge(row), job: toJobRecord(row) }));
}

type FlowRow = JobRow &
  EdgeRow & { row_kind: 'flow' | 'job' | 'edge'; flow_id: string; flow_name: string; flow_created_at: Date; flow_node: string };

export async function getFlow(ctx: SqlContext, params: { id: string } | { jobId: string }): Promise<FlowRecord | null> {
  const flowId = 'id' in params ? toDbId(params.id) : null;
  const jobId = 'jobId' in params ? toDbId(params.jobId) : null;
  if (flowId === null && jobId === null) return null;
  const rows = await ctx.run<FlowRow>(GET_FLOW, [flowId, jobId]);
  const head = rows.find((row) => row.row_kind === 'flow');
  if (!head) return null;
  const jobs = rows
    .filter((row) => row.row_kind === 'job')
    .map((row) => ({ node: row.flow_node, job: toJobRecord(row) }))
    .sort((a, b) => Number(a.job.id) - Number(b.job.id));
  const edges = rows
    .filter((row) => row.row_kind === 'edge')
    .map(toEdge)
    .sort((a, b) => Number(a.jobId) - Number(b.jobId) || Number(a.dependsOnId) - Number(b.dependsOnId));
  return { id: head.flow_id, name: head.flow_name, createdAt: head.flow_created_at, jobs, edges };
}

export async function cancelFlow(ctx: SqlContext, params: { id: string }): Promise<{ cancelled: number; requested: number } | null> {
  const id = toDbId(params.id);
  if (id === null) return null;
  const [row] = await ctx.run<{ cancelled: number; requested: number }>(CANCEL_FLOW, [ctx.now(), id]);
  return row ? { cancelled: row.cancelled, requested: row.requested } : null;
}

/** Returns the row's new state (`waiting`, `pending` or `cancelled`), or null when the lease
 *  fence refused. */
export async function waitForChildren(
  ctx: SqlContext,
  params: { id: string; leaseToken: string; children: string },
): Promise<string | null> {
  const id = toDbId(params.id);
  if (id === null) return null;
  const [row] = await ctx.run<{ state: string | null }>(WAIT_FOR_CHILDREN, [ctx.now(), id, params.leaseToken, params.children]);
  return row?.state ?? null;
}
