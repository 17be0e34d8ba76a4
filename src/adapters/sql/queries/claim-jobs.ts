import type { ClaimedJob, JobErrorInfo } from '../../../types.js';
import type { ClaimParams, ClaimQueue, JobOutcome } from '../../store.js';
import { checkedJobRecord, jobColumns } from '../job-row.js';
import type { JobRow } from '../job-row.js';
import type { SqlContext } from '../sql-context.js';
import type { SqlSchema } from '../sql-schema.js';
import { defineStatement, NOW, type StatementDefinition } from '../statement.js';
import { setStatesIfRunning } from './set-states-if-running.js';

/**
 * Claim: one statement for every queue the supervisor has free slots for.
 * - The LATERAL subselect runs once per (queue, limit): `queue = … ORDER BY priority desc,
 *   run_at, id LIMIT n` is exactly jobs_claim_idx, so it reads the first n entries of that
 *   queue's claimable rows and nothing else, however long the backlog.
 * - Sleeping jobs (durable sleeps and signal waits) are not in jobs_claim_idx (migration
 *   0022): they would sort after the due jobs, and a claim that finds fewer than n due would
 *   read past every one of them. `woken` takes the queue's due sleepers from jobs_later_idx
 *   (run_at first: a range read of the rows due by now, few), and the first n of the two
 *   sets in the claim's order are the candidates. A row locked there but not among the n
 *   is simply passed over by other claims until this statement commits.
 * - FOR UPDATE SKIP LOCKED: concurrent claimers pass over rows another one is taking instead
 *   of waiting for it, and never take the same job.
 * - `id = any(array(…))` makes the UPDATE fetch the picked rows by primary key; a join would
 *   be planned from jsonb_to_recordset's fixed guess of 100 input rows, and for a table of a
 *   few thousand rows that guess picks a hash join over a scan of the whole table.
 * - The locked row's old state is kept in `picked` for the history row (UPDATE … RETURNING
 *   only sees new values), which the same statement appends.
 * - The claim commits without waiting for its WAL flush (`synchronous_commit` off for this
 *   statement's transaction only). A claim is a lease, not a result: if the database crashes
 *   before the flush, the job is simply pending again and runs again (at-least-once, as
 *   after any crash), and the worker's fenced writes find no lease and apply nothing. Waiting
 *   for the flush would put a disk sync (about 1 ms here) inside every free slot's turn.
 *   Enqueues and outcomes keep the server's setting: they must survive a crash.
 * - Concurrency keys: the scan passes over the keys already at their limit as this
 *   statement's snapshot sees them (`full_keys`, read once per queue from
 *   jobs_running_key_idx, which holds running keyed jobs only); then claim_key_slots
 *   (migration 0004) locks each candidate key and counts its running jobs afresh, and at most
 *   that many candidates of the key are taken (`key_rank`). A key another claim is taking
 *   right now gives 0: skipped this round, never waited for, so claims cannot deadlock.
 *   `full_keys` is an array compared per row, not a subquery per row: a SubPlan in the
 *   scan's filter lifts the generic plan's estimated cost past jit_above_cost, and the server
 *   then JIT-compiles every claim (tens of ms each).
 * - A paused queue (migration 0008) is dropped from the input by one primary-key probe per
 *   queue; a pause that commits while a claim runs stops the next claim, not that one.
 * - Rate limits: claim_rate_allowance cuts a queue's limit to what its window has left, under
 *   a lock held to commit, and `starts` logs the claims in the same statement.
 * - Jobs without a key and queues without a rate limit call neither function: what they add
 *   to the plain path is a null check per row and a sort of the few picked rows.
 * - Planned with sequential scans off (`indexScansOnly`): a worker that starts on a
 *   near-empty table would otherwise keep the plan made then, which fetches the picked rows
 *   with a scan of the whole table (cheapest while it is small), and run it on every claim
 *   after a burst of enqueues until autovacuum analyzes the table: 40 ms a claim, a ninth of
 *   the throughput, with 200,000 jobs queued. Planning it on every call instead (unprepared)
 *   avoids that too, but costs an idle worker about 0.9 ms of its enqueue-to-start latency;
 *   the Postgres driver sends the settings, the claim and the commit as one round trip.
 */
function claimText(s: SqlSchema, shape: ClaimShape): string {
  return `
with async_commit as (
  select set_config('synchronous_commit', 'off', true)
),
input as materialized (
  select r.queue, r.key_limit, r.rate_max,
    case when r.rate_max is null then r.lim
      else least(r.lim, ${s.quoted}.claim_rate_allowance(r.queue, r.rate_max, r.rate_ms, ${NOW})) end as lim,
    array(
      select k.concurrency_key from ${s.quoted}.jobs k
      where k.queue = r.queue and k.state = 'running' and k.concurrency_key is not null
      group by k.concurrency_key having count(*) >= r.key_limit
    ) as full_keys
  from jsonb_to_recordset($2::jsonb) as r(queue text, lim int, key_limit int, rate_max int, rate_ms float8)
  where not exists (select from ${s.quoted}.queues p where p.name = r.queue and p.paused_at is not null)
),
ready as materialized (
  select j.*, i.key_limit, i.lim
  from input i
  cross join lateral (
    select ${shape.columns} from ${s.quoted}.jobs
    where queue = i.queue and ${shape.where}state in ('pending', 'retrying') and run_at <= ${NOW}
      and (concurrency_key is null or concurrency_key <> all(i.full_keys))
    order by ${shape.order}
    limit i.lim
    for update skip locked
  ) j
  where i.lim > 0
),
woken as materialized (
  select j.*, i.key_limit, i.lim
  from input i
  cross join lateral (
    select ${shape.columns} from ${s.quoted}.jobs
    where queue = i.queue and ${shape.where}state = 'sleeping' and run_at <= ${NOW}
      and (concurrency_key is null or concurrency_key <> all(i.full_keys))
    order by run_at, id
    limit i.lim
    for update skip locked
  ) j
  where i.lim > 0
),
candidates as materialized (
  select * from (
    select c.*, row_number() over (partition by c.queue order by ${prefixed(shape.order, 'c')}) as queue_rank
    from (select * from ready union all select * from woken) c
  ) c
  where c.queue_rank <= c.lim
),
key_slots as materialized (
  select k.queue, k.concurrency_key, ${s.quoted}.claim_key_slots(k.queue, k.concurrency_key, k.key_limit) as free
  from (select distinct queue, concurrency_key, key_limit from candidates where concurrency_key is not null) k
),
ranked as (
  select c.id, c.state, c.queue, c.concurrency_key,
    row_number() over (partition by c.queue, c.concurrency_key order by ${prefixed(shape.order, 'c')}) as key_rank
  from candidates c
),
picked as (
  select r.id, r.state from ranked r
  left join key_slots k on k.queue = r.queue and k.concurrency_key = r.concurrency_key
  where r.concurrency_key is null or r.key_rank <= k.free
),
claimed as (
  update ${s.quoted}.jobs j
  set state = 'running', attempt = j.attempt + 1, worker_id = $3, lease_token = gen_random_uuid(), wait_signal = null,
    lease_expires_at = ${NOW} + $4::float8 * interval '1 millisecond', updated_at = ${NOW}
  where j.id = any(array(select id from picked))
  returning j.*
),
history as (
  insert into ${s.quoted}.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
  select c.id, p.state, 'running', c.attempt, c.worker_id, c.updated_at, null
  from claimed c join picked p on p.id = c.id
),
starts as (
  insert into ${s.quoted}.queue_starts (queue, at)
  select c.queue, c.updated_at from claimed c join input i on i.queue = c.queue where i.rate_max is not null
)
select ${jobColumns('c', s, { when: 'c.attempt > 1' })} from claimed c
cross join async_commit
order by ${prefixed(shape.order, 'c')}
`;
}

/** What tells the plain claim from the fair one: the order it takes jobs in, the columns that
 *  order reads, and a condition its index holds. */
interface ClaimShape {
  order: string;
  columns: string;
  where: string;
}

/** The claim's order with each column under `alias`. */
function prefixed(order: string, alias: string): string {
  return order.replace(/\b(priority|run_at|id|fair_rank)\b/g, `${alias}.$1`);
}

export const CLAIM_JOBS = defineStatement(
  'claim_jobs',
  (s) => claimText(s, { order: 'priority desc, run_at, id', columns: 'id, state, queue, concurrency_key, priority, run_at', where: '' }),
  { indexScansOnly: true },
);

/**
 * The claim of queues defined with `fairShare` (migration 0020): the same statement in the
 * order of jobs_fair_claim_idx, rounds of the tenants' ranks first. Each job's rank was set
 * as it was enqueued (fair_rank: after its tenant's previous job, by 1/weight, and never
 * before the queue's earliest unclaimed rank), so taking the first n in that order is taking
 * them round-robin across tenants, and costs what the plain claim costs: the first n entries
 * of one index. Jobs without a rank (enqueued without fairShare) are not claimed here.
 */
export const CLAIM_FAIR_JOBS = defineStatement(
  'claim_fair_jobs',
  (s) =>
    claimText(s, {
      order: 'fair_rank, priority desc, run_at, id',
      columns: 'id, state, queue, concurrency_key, priority, run_at, fair_rank',
      where: 'fair_rank is not null and ',
    }),
  { indexScansOnly: true },
);

export async function claimJobs(ctx: SqlContext, params: ClaimParams): Promise<ClaimedJob[]> {
  const requested = params.queues.filter((q) => q.limit > 0);
  // A queue named twice takes both limits; the rows are handed out per entry below.
  const merged = new Map<string, ClaimQueue>();
  for (const entry of requested) {
    const seen = merged.get(entry.queue);
    merged.set(entry.queue, seen ? { ...seen, limit: seen.limit + entry.limit } : entry);
  }
  if (merged.size === 0) return [];
  // Fair queues take their own statement, so the plain claim's text and plan stay as they are.
  const plain = [...merged.values()].filter((q) => !q.fairShare);
  const fair = [...merged.values()].filter((q) => q.fairShare);
  const rows = [
    ...(plain.length > 0 ? await runClaim(ctx, CLAIM_JOBS, plain, params) : []),
    ...(fair.length > 0 ? await runClaim(ctx, CLAIM_FAIR_JOBS, fair, params) : []),
  ];
  const jobs: ClaimedJob[] = [];
  const unrunnable: JobOutcome[] = [];
  for (const row of rows) {
    const { job, problems } = checkedJobRecord(row);
    if (problems.length === 0) jobs.push(job as ClaimedJob);
    else unrunnable.push({ id: job.id, leaseToken: job.leaseToken!, state: 'dead', error: invalidRowError(problems) });
  }
  // A row written around the library (SQL, by hand, an older version) with a time no job can
  // have: dead at once, alone, under the lease just taken, and never handed to the worker,
  // where it would throw in the midst of the batch.
  if (unrunnable.length > 0) await setStatesIfRunning(ctx, { outcomes: unrunnable });
  return inRequestOrder(jobs, requested);
}

async function runClaim(ctx: SqlContext, statement: StatementDefinition, queues: readonly ClaimQueue[], params: ClaimParams): Promise<JobRow[]> {
  const input = JSON.stringify(
    queues.map((q) => ({
      queue: q.queue,
      lim: q.limit,
      key_limit: q.perKeyLimit ?? 1,
      rate_max: q.rateLimit?.max ?? null,
      rate_ms: q.rateLimit?.intervalMs ?? null,
    })),
  );
  return ctx.run<JobRow>(statement, [ctx.now(), input, params.workerId, params.leaseMs]);
}

function invalidRowError(problems: readonly string[]): JobErrorInfo {
  return { code: 'invalid_row', message: `the row cannot be run as a job: ${problems.join('; ')}` };
}

/** Per requested entry, in request order: that queue's next jobs in claim order. */
function inRequestOrder(jobs: ClaimedJob[], requested: ClaimParams['queues']): ClaimedJob[] {
  const byQueue = new Map<string, ClaimedJob[]>();
  for (const job of jobs) {
    const list = byQueue.get(job.queue) ?? [];
    list.push(job);
    byQueue.set(job.queue, list);
  }
  return requested.flatMap(({ queue, limit }) => byQueue.get(queue)?.splice(0, limit) ?? []);
}
