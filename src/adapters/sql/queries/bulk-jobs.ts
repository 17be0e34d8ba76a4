import type { BoundedCount, BulkResult, CountJobsUpToParams, ErrorMatch, JobFilters } from '../../store.js';
import type { JobState } from '../../../types.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement, NOW, type StatementDefinition } from '../statement.js';
import { CANCEL_PAYLOAD_PREFIX } from '../wake-hub.js';
import { CANCELLED_BY_REQUEST } from './cancel-job.js';

/**
 * The inspector's count of the jobs its list's filters match, and its bulk retry and cancel,
 * each one statement whatever the number of jobs.
 *
 * Each statement's text is built for the filters given (a state as a literal, a queue or kind
 * condition only when one is given), so that the planner proves the partial index that holds
 * the state: jobs_claim_idx (pending, retrying), jobs_later_idx (sleeping, beside retrying and
 * later pending jobs), jobs_lease_expiry_idx (running),
 * jobs_unhappy_idx (dead, skipped, cancelled), jobs_waiting_idx (waiting). Completed jobs
 * have none (the index would tax every completion): a count of them, or of jobs of any state
 * with a queue or kind, looks at the newest `maxScan` jobs down the primary key instead, and
 * says it is a lower bound when there were more.
 */
const STATE_INDEX: Partial<Record<JobState, string>> = {
  pending: "('pending', 'retrying')",
  retrying: "('pending', 'retrying')",
  sleeping: "('retrying', 'sleeping')",
  running: "('running')",
  dead: "('dead', 'skipped', 'cancelled')",
  skipped: "('dead', 'skipped', 'cancelled')",
  cancelled: "('dead', 'skipped', 'cancelled')",
  waiting: "('waiting')",
};

/** The statements built so far, by their filters' shape: at most a few dozen. */
const statements = new Map<string, StatementDefinition>();

function statement(key: string, build: () => StatementDefinition): StatementDefinition {
  let definition = statements.get(key);
  if (!definition) statements.set(key, (definition = build()));
  return definition;
}

/** The state (a literal of a known state, never user text) and its index's predicate. */
function stateCondition(alias: string, state: JobState): string {
  return `${alias}.state = '${state}' and ${alias}.state in ${STATE_INDEX[state]}`;
}

/** The queue and kind conditions, each only when given, as parameters from `$first` on; and
 *  their values in that order. */
function filterConditions(alias: string, filters: JobFilters, first: number): { sql: string; values: string[] } {
  const given = (['queue', 'kind'] as const).filter((name) => filters[name] !== undefined);
  return {
    sql: given.map((name, i) => ` and ${alias}.${name} = $${first + i}`).join(''),
    values: given.map((name) => filters[name]!),
  };
}

/** The filters' shape (which are given, and the state): what a statement's text depends on. */
function shape(filters: JobFilters): string {
  return `${filters.state ?? '-'}:${filters.queue === undefined ? '' : 'q'}${filters.kind === undefined ? '' : 'k'}`;
}

const DEFAULT_MAX_SCAN = 20_000;

/** $1 max + 1, $2 max scan, then the queue and kind given. Rows: (count, examined). */
export function countStatement(filters: JobFilters): StatementDefinition {
  const { state } = filters;
  return statement(`count:${shape(filters)}`, () => {
    if (state !== undefined && STATE_INDEX[state] && filters.kind === undefined) {
      // The state's index holds exactly its jobs (the queue its first column, or a filter).
      const { sql } = filterConditions('j', filters, 3);
      return defineStatement(`count_jobs_${state}`, (s) => `
select count(*)::int as count, 0 as examined from (
  select from ${s.quoted}.jobs j where ${stateCondition('j', state)}${sql} and $2::int > 0 limit $1
) c`);
    }
    if (state === undefined && filters.queue === undefined && filters.kind === undefined) {
      // Every job: the newest $1 entries of the primary key.
      return defineStatement('count_jobs_all', (s) => `
select count(*)::int as count, 0 as examined from (select from ${s.quoted}.jobs where $2::int > 0 order by id desc limit $1) c`);
    }
    // The kind is in no index, and completed jobs have none: look at most at $2 of the
    // state's index entries, or of the newest jobs.
    const indexed = state !== undefined && STATE_INDEX[state] !== undefined;
    const { sql } = filterConditions('w', filters, 3);
    const match = `${!indexed && state !== undefined ? `w.state = '${state}'` : 'true'}${sql}`;
    return defineStatement(`count_jobs_window_${state ?? 'any'}`, (s) => `
with w as materialized (
  ${
    indexed
      ? `select j.queue, j.kind from ${s.quoted}.jobs j where ${stateCondition('j', state)} limit $2`
      : `select j.queue, j.state, j.kind from ${s.quoted}.jobs j order by j.id desc limit $2`
  }
)
select (select count(*) from (select from w where ${match} limit $1) c)::int as count,
  (select count(*) from w)::int as examined`);
  });
}

export async function countJobsUpTo(ctx: SqlContext, params: CountJobsUpToParams): Promise<BoundedCount> {
  const max = Math.max(0, params.max);
  const maxScan = Math.max(1, params.maxScan ?? DEFAULT_MAX_SCAN);
  const { values } = filterConditions('j', params, 3);
  const [row] = await ctx.run<{ count: number; examined: number }>(countStatement(params), [max + 1, maxScan, ...values]);
  const count = row?.count ?? 0;
  return { count: Math.min(count, max), capped: count > max || (row?.examined ?? 0) >= maxScan };
}

/**
 * $1 now, $2 max, then the queue and kind given, then the error's code and message when
 * given. The newest $2 dead, cancelled or skipped jobs matching, one per (queue, unique key) (two revived holders of a key would break
 * jobs_unique_key_idx), retried at once by retry_jobs as retryJob does one (migration 0018):
 * a key a live job holds keeps its job as it is. Rows: (matched, applied, capped).
 */
export function retryStatement(filters: JobFilters & { error?: ErrorMatch }): StatementDefinition {
  const states = filters.state === undefined ? "j.state in ('dead', 'skipped', 'cancelled')" : stateCondition('j', filters.state);
  const conditions = filterConditions('j', filters, 3);
  // A group of dead jobs (groupDeadJobs): the error's code and message, after the filters.
  const next = 3 + conditions.values.length;
  const sql =
    filters.error === undefined
      ? conditions.sql
      : `${conditions.sql} and j.error ->> 'code' is not distinct from $${next}::text and j.error ->> 'message' is not distinct from $${next + 1}::text`;
  return statement(`retry:${shape(filters)}${filters.error === undefined ? '' : 'e'}`, () =>
    defineStatement('retry_jobs_matching', (s) => `
with picked as materialized (
  select j.id, j.queue, j.unique_key from ${s.quoted}.jobs j
  where ${states}${sql}
  order by j.id desc limit $2::int + 1
),
seeds as materialized (
  select distinct on (p.queue, coalesce(p.unique_key, p.id::text)) p.id
  from (select * from picked order by id desc limit $2::int) p
  order by p.queue, coalesce(p.unique_key, p.id::text), p.id desc
)
select least((select count(*) from picked), $2::int)::int as matched,
  (select count(*) from ${s.quoted}.retry_jobs($1::timestamptz, array(select id from seeds), true) r
    where r.r_id in (select id from seeds))::int as applied,
  (select count(*) from picked) > $2::int as capped`),
  );
}

/** A live job took a unique key after the statement's snapshot. */
const UNIQUE_VIOLATION = '23505';

export async function retryJobsMatching(ctx: SqlContext, params: JobFilters & { max: number; error?: ErrorMatch }): Promise<BulkResult> {
  if (params.state !== undefined && !['dead', 'skipped', 'cancelled'].includes(params.state)) return { matched: 0, applied: 0, capped: false };
  const error = params.error === undefined ? [] : [params.error.code, params.error.message];
  const values = [ctx.now(), Math.max(0, params.max), ...filterConditions('j', params, 3).values, ...error];
  for (let attempt = 1; ; attempt++) {
    try {
      const [row] = await ctx.run<BulkResult>(retryStatement(params), values);
      return row ?? { matched: 0, applied: 0, capped: false };
    } catch (error) {
      // Read again: the key's new holder keeps that job out of the seeds.
      if ((error as { code?: unknown }).code !== UNIQUE_VIOLATION || attempt === 3) throw error;
    }
  }
}

/**
 * $1 now, $2 max, then the queue and kind given. cancel_job (cancel-job.ts) on the newest $2 live jobs
 * matching at once, each row locked first and acted on by the state it was locked in: one
 * that no worker holds ends `cancelled` (with its history row; migration 0009's trigger lets
 * the jobs that wait for it follow their failure policy), a running one only gets its cancel
 * request and a NOTIFY, as its lease rules allow (its worker writes the outcome).
 */
export function cancelStatement(filters: JobFilters): StatementDefinition {
  // Without a state, one arm per partial index that holds live jobs: a bitmap scan of each.
  const states =
    filters.state === undefined
      ? `(j.state in ${STATE_INDEX.pending} or j.state in ${STATE_INDEX.sleeping} or j.state in ${STATE_INDEX.waiting} or j.state in ${STATE_INDEX.running})`
      : stateCondition('j', filters.state);
  const { sql } = filterConditions('j', filters, 3);
  return statement(`cancel:${shape(filters)}`, () =>
    defineStatement('cancel_jobs_matching', (s) => `
with target as materialized (
  select j.id, j.state from ${s.quoted}.jobs j
  where ${states}${sql}
  order by j.id desc limit $2::int
  for update
),
more as (
  select count(*) as n from (select from ${s.quoted}.jobs j where ${states}${sql} limit $2::int + 1) c
),
cancelled as (
  update ${s.quoted}.jobs j
  set state = 'cancelled', error = '${CANCELLED_BY_REQUEST}', finished_at = ${NOW}, updated_at = ${NOW}
  from target t
  where j.id = t.id and t.state in ('pending', 'retrying', 'waiting', 'sleeping')
  returning j.id, j.state, j.attempt, j.error, j.updated_at, t.state as from_state
),
requested as (
  update ${s.quoted}.jobs j
  set cancel_requested_at = coalesce(j.cancel_requested_at, ${NOW}), updated_at = ${NOW}
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
select (select count(*) from target)::int as matched,
  ((select count(*) from cancelled) + (select n from notified))::int as applied,
  (select n from more) > $2::int as capped`),
  );
}

export async function cancelJobsMatching(ctx: SqlContext, params: JobFilters & { max: number }): Promise<BulkResult> {
  if (params.state !== undefined && !['pending', 'retrying', 'waiting', 'sleeping', 'running'].includes(params.state)) {
    return { matched: 0, applied: 0, capped: false };
  }
  const [row] = await ctx.run<BulkResult>(cancelStatement(params), [
    ctx.now(),
    Math.max(0, params.max),
    ...filterConditions('j', params, 3).values,
  ]);
  return row ?? { matched: 0, applied: 0, capped: false };
}
