/**
 * The history's layout measured (issue 26): WAL and server CPU per job of a drain and of a
 * job's whole life (enqueue + claim + complete) for each way of keeping the story, on
 * PostgreSQL, without a supervisor. A probe for choosing, not a figure of the report:
 *
 *   cd bench && npx tsx src/history-layouts.ts [--jobs 20000] [--runs 3] [--layouts A,B,C,D,E,F,G,L,N]
 *     [--claim-batch 500] [--outcome-batch 500] [--readers] [--out results/history-layouts.json]
 *
 * `--readers`: on each layout's first run, what the history's readers pay (`readerCosts`).
 *
 * Each run makes a fresh schema with the library's migrations (`migrate()` of a SqlJobStore),
 * applies its layout's ALTERs, then drives the store's own statements (enqueue_new_jobs,
 * claim_jobs, set_states_if_running), each rewritten for the layout by a driver that edits
 * their text before it reaches pg (`layoutDriver`): for L the text is the library's as it is
 * (migration 0031 made the library's layout B; issue 26 took its creation row out). The drain is shaped as a supervisor at concurrency 50 shapes it since rows 10-15 of
 * optimisations.md (claims of a whole prefetch window, hundreds of jobs, and the outcomes of
 * that wave in statements as large), with the claim of wave k+1 in flight beside the outcomes
 * of wave k. Windows as the bench's: 1,000 jobs first (plans, pool), then the enqueue of
 * `jobs` in one call, a CHECKPOINT, the drain; WAL of the schema's relations and their
 * transactions (pg_walinspect, server-cost.ts), CPU of the run's own backends (/proc).
 * Layouts run interleaved (A B C … A B C …); medians per layout.
 *
 * Layouts (the story each keeps is the same: every transition, its time, attempt, worker, error):
 *  A  the layout before issue 26: one job_events row per transition, primary key on id,
 *     (job_id, id), BRIN on at.
 *  B  A without the primary key (the identity column stays, for the feed's order; a BRIN on
 *     id serves the feed: migration 0031).
 *  C  one row per attempt: the claim writes no row but sets jobs.claimed_at / claimed_from;
 *     the attempt's end writes one row carrying them (job_events.claimed_at, claimed_from).
 *  D  C + B.
 *  E  the history in the job row: a jsonb array, one compact entry appended by the UPDATE
 *     (or INSERT) that changes the state; no job_events row.
 *  F  D, and no creation row either (the creation read from jobs.created_at, as the issue
 *     suggests): one history row per job in all.
 *  G  F with a BRIN index on job_id (autosummarize) in place of the (job_id, id) btree: the
 *     floor of a history row per attempt; a job's story then reads the BRIN's unsummarised
 *     ranges whole (the newest pages, until autovacuum summarises them).
 *  L  the library's since issue 26: B without the creation row (read from the job row).
 *  N  no history at all: not a layout jobvisor may have (it breaks the promise), the floor
 *     under every layout, what the job row alone costs in this harness.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { pgDriver } from '../../src/adapters/postgres/pg-driver.js';
import type { SqlDriver, Statement } from '../../src/adapters/sql/sql-driver.js';
import { sqlSchema } from '../../src/adapters/sql/sql-schema.js';
import { SqlJobStore } from '../../src/adapters/sql/sql-store.js';
import { NOW } from '../../src/adapters/sql/statement.js';
import { GET_THROUGHPUT } from '../../src/adapters/sql/queries/get-throughput.js';
import { EVENTS_AFTER, NEWEST_EVENTS, SUMMARIZE } from '../../src/adapters/sql/queries/list-job-events.js';
import { GET_JOB_EVENTS } from '../../src/adapters/sql/queries/read-jobs.js';
import { PRUNE_JOBS_BATCH } from '../../src/adapters/sql/queries/prune-jobs.js';
import type { ClaimedJob } from '../../src/types.js';
import { openServerWindow, systemConnectionString, walOfSchema } from './server-cost.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '20000' },
    runs: { type: 'string', default: '3' },
    layouts: { type: 'string', default: 'A,B,C,D,E,F,G,L,N' },
    'claim-batch': { type: 'string', default: '500' },
    'outcome-batch': { type: 'string', default: '500' },
    out: { type: 'string' },
    readers: { type: 'boolean', default: false },
    url: { type: 'string', default: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test' },
  },
});
const jobs = Number(values.jobs);
const runs = Number(values.runs);
const claimBatch = Number(values['claim-batch']);
const outcomeBatch = Number(values['outcome-batch']);
const WARM_UP = 1_000;
const QUEUE = 'bench';
// As a supervisor names itself (supervisor-options.ts): host:pid:8 hex digits.
const WORKER_ID = `bench-host:${process.pid}:1a2b3c4d`;

interface Layout {
  key: string;
  /** Statements run on the fresh schema after the migrations; `{s}` is the quoted schema. */
  alter: string[];
  /** History rows a job leaves after its whole life (the check that the layout ran). */
  rowsPerJob: number;
  enqueue?: (text: string) => string;
  claim?: (text: string) => string;
  outcome?: (text: string) => string;
}

/** `text` with `from` replaced once; throws if the library's text no longer has it. */
function swap(text: string, from: string | RegExp, to: string): string {
  const found = typeof from === 'string' ? text.includes(from) : from.test(text);
  if (!found) throw new Error(`the statement no longer contains ${String(from)}: update history-layouts.ts`);
  return text.replace(from, () => to);
}

// The CTE that appends the history row, in the claim and the outcome.
const CLAIM_HISTORY = /history as \(\n {2}insert into "[A-Za-z0-9_]+"\.job_events [^]*?join picked p on p\.id = c\.id\n\),\n/;
const OUTCOME_HISTORY = /,\nhistory as \(\n {2}insert into "[A-Za-z0-9_]+"\.job_events [^]*? from written\n\)/;
const CLAIM_SET = `updated_at = ${NOW}\n  where j.id = any(array(select id from picked))`;
const OUTCOME_SET = `lease_token = null, lease_expires_at = null, updated_at = ${NOW}\n  from outcome o`;
const OUTCOME_RETURNING = 'returning j.id, j.state, j.attempt, j.worker_id, j.error, j.updated_at, o.i';

/** The creation's history row, as the library wrote it before issue 26 (since then an
 *  enqueue writes none): A-D keep it. */
function withCreationRow(t: string): string {
  const schema = /insert into ("[A-Za-z0-9_]+")\.jobs/.exec(t)![1]!;
  return swap(
    t,
    'notified as (',
    `history as (\n  insert into ${schema}.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)\n  select id, null, 'pending', 0, null, created_at, null from inserted\n),\nnotified as (`,
  );
}

/** C's statements: the claim keeps its transition in the job row, the outcome writes it with its own. */
const perAttempt: Pick<Layout, 'claim' | 'outcome'> = {
  // In an UPDATE's SET, j.state is the row's old state: the state the claim took it from.
  claim: (t) => swap(swap(t, CLAIM_HISTORY, ''), CLAIM_SET, `updated_at = ${NOW}, claimed_at = ${NOW}, claimed_from = j.state\n  where j.id = any(array(select id from picked))`),
  outcome: (t) =>
    swap(
      swap(t, OUTCOME_RETURNING, 'returning j.id, j.state, j.attempt, j.worker_id, j.error, j.updated_at, j.claimed_at, j.claimed_from, o.i'),
      "(job_id, from_state, to_state, attempt, worker_id, at, error)\n  select id, 'running', state, attempt, worker_id, updated_at, error from written",
      "(job_id, from_state, to_state, attempt, worker_id, at, error, claimed_at, claimed_from)\n  select id, 'running', state, attempt, worker_id, updated_at, error, claimed_at, claimed_from from written",
    ),
};
const PER_ATTEMPT_ALTER = [
  'alter table {s}.jobs add column claimed_at timestamptz, add column claimed_from text',
  'alter table {s}.job_events add column claimed_at timestamptz, add column claimed_from text',
];
/** The library's layout has been B since migration 0031; A and C put the primary key back
 *  (and drop the BRIN on id that replaced it) to measure the layout before it. */
const WITH_PKEY = ['drop index {s}.job_events_id_brin', 'alter table {s}.job_events add primary key (id)'];

/** E's entry: [state, µs since the job's creation, (attempt, worker,) (error)]; the from
 *  state is the entry before. Offsets from created_at keep the numbers short. */
const offset = (at: string) => `round(extract(epoch from ${at} - j.created_at) * 1e6)::bigint`;

const LAYOUTS: Record<string, Layout> = {
  A: { key: 'A', alter: WITH_PKEY, rowsPerJob: 3, enqueue: withCreationRow },
  B: { key: 'B', alter: [], rowsPerJob: 3, enqueue: withCreationRow },
  C: { key: 'C', alter: [...PER_ATTEMPT_ALTER, ...WITH_PKEY], rowsPerJob: 2, ...perAttempt, enqueue: withCreationRow },
  D: { key: 'D', alter: PER_ATTEMPT_ALTER, rowsPerJob: 2, ...perAttempt, enqueue: withCreationRow },
  E: {
    key: 'E',
    alter: ['alter table {s}.jobs add column history jsonb'],
    rowsPerJob: 0,
    enqueue: (t) =>
      swap(
        swap(t, 'trace_context, created_at, updated_at)', 'trace_context, created_at, updated_at, history)'),
        `trace_context, ${NOW}, ${NOW}\n  from numbered`,
        `trace_context, ${NOW}, ${NOW}, '[["pending", 0]]'::jsonb\n  from numbered`,
      ),
    claim: (t) =>
      swap(
        swap(t, CLAIM_HISTORY, ''),
        CLAIM_SET,
        `updated_at = ${NOW},\n    history = coalesce(j.history, '[]') || jsonb_build_array(jsonb_build_array('running', ${offset(NOW)}, j.attempt + 1, $3::text))\n  where j.id = any(array(select id from picked))`,
      ),
    outcome: (t) =>
      swap(
        swap(t, OUTCOME_HISTORY, ''),
        OUTCOME_SET,
        `lease_token = null, lease_expires_at = null, updated_at = ${NOW},
    history = coalesce(j.history, '[]') || jsonb_build_array(case when o.state = 'completed'
      then jsonb_build_array(o.state, ${offset(NOW)})
      else jsonb_build_array(case o.state when 'snoozed' then 'pending' when 'released' then 'retrying' else o.state end, ${offset(NOW)}, o.error) end)
  from outcome o`,
      ),
  },
  G: {
    key: 'G',
    alter: [
      ...PER_ATTEMPT_ALTER,
      'drop index {s}.job_events_job_idx',
      'create index job_events_job_brin on {s}.job_events using brin (job_id) with (autosummarize = on)',
    ],
    rowsPerJob: 1,
    ...perAttempt,
  },
  N: {
    key: 'N',
    alter: [],
    rowsPerJob: 0,
    claim: (t) => swap(t, CLAIM_HISTORY, ''),
    outcome: (t) => swap(t, OUTCOME_HISTORY, ''),
  },
  // The library's layout since issue 26: B without the creation row (an enqueue writes none).
  L: { key: 'L', alter: [], rowsPerJob: 2 },
  F: {
    key: 'F',
    alter: PER_ATTEMPT_ALTER,
    rowsPerJob: 1,
    ...perAttempt,
  },
};

/** The store's driver, with the three statements' text rewritten for the layout (a new name:
 *  pg prepares a name once per connection). */
function layoutDriver(inner: SqlDriver, layout: Layout): SqlDriver {
  const rewritten = new Map<string, Statement>();
  const rewrite = (statement: Statement): Statement => {
    const edit = statement.name.startsWith('jobvisor_enqueue_new_jobs_')
      ? layout.enqueue
      : statement.name.startsWith('jobvisor_claim_jobs_')
        ? layout.claim
        : statement.name.startsWith('jobvisor_set_states_if_running_')
          ? layout.outcome
          : undefined;
    if (!edit) return statement;
    let out = rewritten.get(statement.name);
    if (!out) {
      out = { ...statement, name: `${statement.name}_${layout.key.toLowerCase()}`, text: edit(statement.text) };
      rewritten.set(statement.name, out);
    }
    return out;
  };
  return {
    query: (statement, values) => inner.query(rewrite(statement), values),
    transaction: (fn) => inner.transaction(fn),
  };
}

async function enqueue(store: SqlJobStore, count: number, from: number): Promise<void> {
  const batch = Array.from({ length: count }, (_, i) => ({ queue: QUEUE, kind: 'noop', payload: { n: from + i }, maxAttempts: 3 }));
  await store.enqueueJobs({ jobs: batch });
}

/** Claims of `claimBatch`, each wave's outcomes in statements of `outcomeBatch`, the next
 *  claim beside them. Returns how many jobs completed. */
async function drain(store: SqlJobStore): Promise<number> {
  let completed = 0;
  let writing: Promise<void> = Promise.resolve();
  const complete = async (wave: ClaimedJob[]) => {
    for (let i = 0; i < wave.length; i += outcomeBatch) {
      const outcomes = wave.slice(i, i + outcomeBatch).map((job) => ({ id: job.id, leaseToken: job.leaseToken, state: 'completed' as const, result: null }));
      const applied = await store.setStatesIfRunning({ outcomes });
      completed += applied.filter(Boolean).length;
    }
  };
  for (;;) {
    const wave = await store.claimJobs({ workerId: WORKER_ID, leaseMs: 120_000, queues: [{ queue: QUEUE, limit: claimBatch }] });
    await writing;
    if (wave.length === 0) return completed;
    writing = complete(wave);
  }
}

/** Share of the machine's CPU time busy, and the 1-minute load average, over a window. */
function machineMark(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = fields[3]! + fields[4]!;
  const total = fields.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}
const loadAverage = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);

type Figures = Record<string, number>;

async function runOnce(admin: pg.Client, layout: Layout, run: number): Promise<Figures> {
  const schema = `jv_hist_${layout.key.toLowerCase()}_${process.pid}`;
  await admin.query(`drop schema if exists "${schema}" cascade`);
  const pool = new pg.Pool({ connectionString: systemConnectionString(values.url, schema), max: 4, idleTimeoutMillis: 0 });
  const store = new SqlJobStore({
    driver: layoutDriver(pgDriver(pool, { database: 'test' }), layout),
    schema: sqlSchema(schema),
    clock: undefined,
    listen: undefined,
    notifyDebounceMs: 0,
    release: async () => {},
  });
  try {
    await store.migrate();
    for (const sql of layout.alter) await admin.query(sql.replaceAll('{s}', `"${schema}"`));
    await enqueue(store, WARM_UP, 0);
    if ((await drain(store)) !== WARM_UP) throw new Error('the warm-up did not complete every job');

    const load = loadAverage();
    const m0 = machineMark();
    const enqueueWindow = await openServerWindow(admin, schema, 'enqueue');
    const e0 = performance.now();
    await enqueue(store, jobs, WARM_UP);
    const enqueueMs = performance.now() - e0;
    const enqueueFigures = await enqueueWindow.close(jobs);

    await admin.query('checkpoint');
    // A slot of our own keeps the drain's WAL for the breakdown by relation, read after it.
    const slot = `jv_hist_${process.pid}`;
    await admin.query('select pg_create_physical_replication_slot($1, true, true)', [slot]);
    const lsn0 = await insertLsn(admin);
    const drainWindow = await openServerWindow(admin, schema, '');
    const d0 = performance.now();
    const done = await drain(store);
    const drainMs = performance.now() - d0;
    const drainFigures = await drainWindow.close(jobs);
    // Flushed by now (the window's close waited for its end): pg_walinspect reads no further.
    const flushed = (await admin.query<{ l: string }>('select pg_current_wal_flush_lsn()::text as l')).rows[0]!.l;
    const byRelation = await walByRelation(admin, schema, lsn0, flushed);
    await admin.query('select pg_drop_replication_slot($1)', [slot]);
    const m1 = machineMark();
    if (done !== jobs) throw new Error(`${layout.key}: the drain completed ${done} of ${jobs} jobs`);

    // The layout ran as meant: every job completed, with the story its layout keeps.
    const { rows } = await admin.query<{ events: string; entries: string | null; completed: string }>(
      `select (select count(*) from "${schema}".job_events) as events,
        ${layout.key === 'E' ? `(select sum(jsonb_array_length(history)) from "${schema}".jobs)` : 'null'} as entries,
        (select count(*) from "${schema}".jobs where state = 'completed') as completed`,
    );
    const total = jobs + WARM_UP;
    const r = rows[0]!;
    if (Number(r.completed) !== total) throw new Error(`${layout.key}: ${r.completed} of ${total} jobs completed`);
    if (Number(r.events) !== total * layout.rowsPerJob) throw new Error(`${layout.key}: ${r.events} history rows, expected ${total * layout.rowsPerJob}`);
    if (layout.key === 'E' && Number(r.entries) !== total * 3) throw new Error(`E: ${r.entries} history entries, expected ${total * 3}`);

    const figures: Figures = {
      run,
      ...enqueueFigures,
      ...drainFigures,
      enqueueMs,
      drainMs,
      lifeWalBytesPerJob: enqueueFigures.enqueueWalBytesPerJob! + drainFigures.walBytesPerJob!,
      // Full-page images depend on when any session's checkpoint last ran: the rest is steadier.
      walNoFpiBytesPerJob: drainFigures.walBytesPerJob! - drainFigures.walFpiBytesPerJob!,
      lifePgCpuPerJobUs: enqueueFigures.enqueuePgCpuPerJobUs! + drainFigures.pgCpuPerJobUs!,
      loadAverage: load,
      machineBusyPercent: (100 * (m1.busy - m0.busy)) / (m1.total - m0.total),
      ...byRelation,
    };
    if (values.readers && run === 1) Object.assign(figures, await readerCosts(admin, schema, layout));
    console.error(`${layout.key} run ${run}: ${JSON.stringify(figures)}`);
    return figures;
  } finally {
    await store.close();
    await pool.end();
    await admin.query(`drop schema if exists "${schema}" cascade`);
  }
}

/** Shared buffers the statement touched and its execution time (median of 5), from EXPLAIN
 *  ANALYZE of a read-only statement (its top node counts its children's buffers). */
/** `indexScansOnly`: as the store runs such a statement (statement.ts), sequential scans off. */
async function readCost(admin: pg.Client, text: string, params: unknown[], indexScansOnly = false): Promise<{ buffers: number; ms: number }> {
  const times: number[] = [];
  let buffers = 0;
  for (let i = 0; i < 5; i++) {
    await admin.query('begin');
    try {
      if (indexScansOnly) await admin.query('set local enable_seqscan = off');
      const { rows } = await admin.query(`explain (analyze, buffers, format json) ${text}`, params);
      const plan = rows[0]['QUERY PLAN'][0];
      buffers = plan.Plan['Shared Hit Blocks'] + plan.Plan['Shared Read Blocks'];
      times.push(plan['Execution Time']);
    } finally {
      await admin.query('rollback');
    }
  }
  return { buffers, ms: median(times) };
}

/**
 * What the readers pay on each layout, on this run's 21,000 jobs (all finished): the live
 * feed's poll at the tail (500 events after the last 500) and its first call (the newest
 * 100), a job's story, the throughput of the last hour (buckets of a minute), and one prune
 * batch of 1,000 jobs (WAL per pruned job; rolled back). Tables analyzed first. C, D, F and G read the story and the
 * throughput through statements written here for them (the library has none yet); E's
 * throughput is an approximation (finished jobs only, by jobs_finished_idx). Layouts
 * without a primary key on the history read the feed through the library's BRIN on id
 * (migration 0031), with sequential scans off as the store runs those statements.
 */
async function readerCosts(admin: pg.Client, schema: string, layout: Layout): Promise<Figures> {
  const s = sqlSchema(schema);
  const q = s.quoted;
  const out: Figures = {};
  const put = (name: string, cost: { buffers: number; ms: number }) => {
    out[`read:${name}:buffers`] = cost.buffers;
    out[`read:${name}:ms`] = cost.ms;
  };
  const perAttempt = ['C', 'D', 'F', 'G'].includes(layout.key);
  // As autovacuum would have by now on a live database: plans made without statistics are not the readers'.
  await admin.query(`analyze ${q}.jobs, ${q}.job_events`);
  const { rows } = await admin.query<{ job: string; max: string | null }>(
    `select (select id from ${q}.jobs order by id offset ${Math.floor((jobs + WARM_UP) / 2)} limit 1)::text as job, (select max(id) from ${q}.job_events)::text as max`,
  );
  const job = rows[0]!.job;
  const since = new Date(Date.now() - 3_600_000).toISOString();
  if (layout.key !== 'E' && layout.key !== 'N') {
    // Through the primary key (A, C) or the BRIN on id (every other layout, as the library's since
    // 0031), whose new ranges the store summarises before it reads (list-job-events.ts): so here.
    if (!['A', 'C'].includes(layout.key)) await admin.query(SUMMARIZE.build(s));
    put('feed-tail', await readCost(admin, EVENTS_AFTER.build(s), [String(BigInt(rows[0]!.max!) - 1_000n), 500], EVENTS_AFTER.indexScansOnly));
    put('feed-newest', await readCost(admin, NEWEST_EVENTS.build(s), [100, '256'], NEWEST_EVENTS.indexScansOnly));
  }
  // A job's story, in the order of its transitions.
  const story = perAttempt
    ? `
select job_id, from_state, to_state, attempt, worker_id, at, error from (
  ${layout.key === 'F' || layout.key === 'G' ? `select j.id::text as job_id, null as from_state, 'pending' as to_state, 0 as attempt, null as worker_id, j.created_at as at, null::jsonb as error, 0::bigint as seq, 0 as k from ${q}.jobs j where j.id = $1
  union all` : ''}
  select e.job_id::text as job_id, v.from_state, v.to_state, e.attempt, e.worker_id, v.at, v.error, e.id as seq, v.k
  from ${q}.job_events e
  cross join lateral (values (0, e.claimed_from, 'running', e.claimed_at, null::jsonb), (1, e.from_state, e.to_state, e.at, e.error)) v(k, from_state, to_state, at, error)
  where e.job_id = $1 and v.at is not null
  union all
  select j.id::text, j.claimed_from, 'running', j.attempt, j.worker_id, j.claimed_at, null, 9223372036854775807, 0
  -- offset 0: by primary key; \`state = 'running'\` in the scan would let the planner pick the
  -- partial jobs_lease_expiry_idx, which holds an entry for every job run since the last vacuum.
  from (select * from ${q}.jobs where id = $1 offset 0) j where j.state = 'running'
) story order by seq, k`
    : layout.key === 'E'
      ? `select j.id::text as job_id, x.entry from ${q}.jobs j cross join lateral jsonb_array_elements(j.history) with ordinality x(entry, n) where j.id = $1 order by x.n`
      : layout.key === 'N'
        ? undefined
        : GET_JOB_EVENTS.build(s);
  if (story) put('story', await readCost(admin, story, [job]));
  // Throughput of the last hour, buckets of a minute.
  const throughputParams = [since, 60_000, 100_000, null];
  if (['A', 'B', 'L'].includes(layout.key)) put('throughput', await readCost(admin, GET_THROUGHPUT.build(s), throughputParams));
  if (perAttempt) {
    // The attempt's start is on its end's row: no walk back to the claim's row.
    const text = swap(
      swap(GET_THROUGHPUT.build(s), `select id, job_id, from_state, to_state, attempt, at from ${q}.job_events`, `select id, job_id, from_state, to_state, attempt, at, claimed_at from ${q}.job_events`),
      /left join lateral \([^]*?\) s on true/,
      "cross join lateral (select case when e.from_state = 'running' and e.claimed_at is not null then greatest(0, round(extract(epoch from e.at - e.claimed_at) * 1000))::float8 end as ms) s",
    );
    put('throughput', await readCost(admin, text, throughputParams));
  }
  if (layout.key === 'E') {
    // Finished jobs only: an attempt retried is in a row that is not finished.
    put(
      'throughput',
      await readCost(
        admin,
        `
select j.queue, date_bin(make_interval(secs => $2 / 1000.0), j.finished_at, $1::timestamptz) as bucket_start, count(*)::int as completed,
  percentile_disc(0.5) within group (order by ((j.history->-1->>1)::bigint - (j.history->-2->>1)::bigint) / 1000.0) as p50
from ${q}.jobs j where j.state in ('completed', 'dead') and j.finished_at >= $1::timestamptz and j.finished_at < coalesce($4::timestamptz, 'infinity')
  and $3::int > 0
group by 1, 2`,
        throughputParams,
      ),
    );
  }
  // One prune batch of 1,000 jobs, rolled back: its WAL per pruned job.
  const future = new Date(Date.now() + 86_400_000).toISOString();
  await admin.query('begin');
  await admin.query('set local enable_seqscan = off');
  const p0 = await insertLsn(admin);
  const t0 = performance.now();
  const pruned = (await admin.query<{ count: number }>(PRUNE_JOBS_BATCH.build(s), [future, future, 1_000])).rows[0]!.count;
  out['read:prune:ms'] = performance.now() - t0;
  const p1 = await insertLsn(admin);
  await admin.query('rollback');
  if (pruned !== 1_000) throw new Error(`the prune batch pruned ${pruned}`);
  // Full-page images depend on when the last checkpoint was (any session's): apart.
  const wal = await walOfSchema(admin, schema, p0, p1);
  out['read:prune:walPerJob'] = (wal.ours - wal.fpi) / pruned;
  out['read:prune:fpiPerJob'] = wal.fpi / pruned;
  return out;
}

async function insertLsn(admin: pg.Client): Promise<string> {
  return (await admin.query<{ l: string }>('select pg_current_wal_insert_lsn()::text as l')).rows[0]!.l;
}

/** The drain's WAL bytes per job by relation of the schema (`wal:<relation>`), and the
 *  records without a block (commits) as `wal:(commit)`. pg_walinspect as server-cost.ts
 *  installs it (its window has closed before: the extension is there). */
async function walByRelation(admin: pg.Client, schema: string, from: string, to: string): Promise<Figures> {
  const { rows } = await admin.query<{ rel: string; bytes: string }>(
    `
with recs as (
  select r.record_length, r.resource_manager, (regexp_match(coalesce(r.block_ref, ''), 'rel \\d+/\\d+/(\\d+)'))[1] as node
  from jobvisor_bench_walinspect.pg_get_wal_records_info($2::pg_lsn, $3::pg_lsn) r
)
select coalesce(c.relname, '(commit)') as rel, sum(r.record_length)::text as bytes
from recs r
left join pg_class c on c.relfilenode::text = r.node
  and c.relnamespace in (select oid from pg_namespace where nspname in ($1, 'pg_toast'))
where c.relname is not null or (r.node is null and r.resource_manager = 'Transaction')
group by 1
`,
    [schema, from, to],
  );
  // The pg_toast namespace holds other sessions' TOAST indexes too: only what this run wrote.
  return Object.fromEntries(rows.filter((r) => Number(r.bytes) / jobs >= 0.05).map((r) => [`wal:${r.rel}`, Number(r.bytes) / jobs]));
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

const admin = new pg.Client({ connectionString: values.url });
await admin.connect();
const chosen = values.layouts.split(',').map((k) => {
  const layout = LAYOUTS[k.trim()];
  if (!layout) throw new Error(`no layout ${k}`);
  return layout;
});
const results = new Map<string, Figures[]>(chosen.map((l) => [l.key, []]));
try {
  for (let run = 1; run <= runs; run++) {
    for (const layout of chosen) results.get(layout.key)!.push(await runOnce(admin, layout, run));
  }
} finally {
  await admin.end();
}

const fmt = (x: number, digits = 0) => x.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const cell = (figures: Figures[], key: string, digits = 0) => {
  const xs = figures.map((f) => f[key]!);
  return `${fmt(median(xs), digits)} [${fmt(Math.min(...xs), digits)}–${fmt(Math.max(...xs), digits)}]`;
};
console.log(
  `${jobs.toLocaleString('en')} jobs, claims of ${claimBatch}, outcome statements of ${outcomeBatch}, ${runs} runs per layout, interleaved; medians [min–max]\n`,
);
console.log('| layout | WAL/job drain (B) | of which FPI | drain without FPI | WAL records/job drain | WAL/job enqueue | WAL/job whole life | PG CPU/job drain (µs) | PG CPU/job enqueue | PG CPU/job whole life | drain (jobs/s) | load avg / machine busy |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
for (const [key, figures] of results) {
  const rate = figures.map((f) => (jobs / f.drainMs!) * 1000);
  console.log(
    `| ${key} | ${cell(figures, 'walBytesPerJob')} | ${cell(figures, 'walFpiBytesPerJob')} | ${cell(figures, 'walNoFpiBytesPerJob')} | ${cell(figures, 'walRecordsPerJob', 1)} | ${cell(figures, 'enqueueWalBytesPerJob')} | ${cell(figures, 'lifeWalBytesPerJob')} | ${cell(figures, 'pgCpuPerJobUs', 1)} | ${cell(figures, 'enqueuePgCpuPerJobUs', 1)} | ${cell(figures, 'lifePgCpuPerJobUs', 1)} | ${fmt(median(rate))} | ${figures.map((f) => `${f.loadAverage!.toFixed(1)}/${f.machineBusyPercent!.toFixed(0)}%`).join(', ')} |`,
  );
}
console.log('\nDrain WAL per job by relation (medians; commits of every session in the window count under (commit)):\n');
const relations = [...new Set([...results.values()].flatMap((figures) => figures.flatMap((f) => Object.keys(f).filter((k) => k.startsWith('wal:')))))].sort();
console.log(`| relation | ${[...results.keys()].join(' | ')} |`);
console.log(`| --- | ${[...results.keys()].map(() => '---:').join(' | ')} |`);
for (const rel of relations) {
  // Other sessions' TOAST indexes match the pg_toast namespace: only what this run wrote.
  if ([...results.values()].every((figures) => median(figures.map((f) => f[rel] ?? 0)) < 0.5)) continue;
  console.log(`| ${rel.slice(4)} | ${[...results.values()].map((figures) => fmt(median(figures.map((f) => f[rel] ?? 0)))).join(' | ')} |`);
}
if (values.readers) {
  console.log('\nReaders, on each layout\'s first run (21,000 finished jobs): shared buffers / ms (median of 5); prune: WAL per pruned job without full-page images (B), the images apart / ms for 1,000:\n');
  const reads = [...new Set([...results.values()].flatMap((figures) => Object.keys(figures[0]!).filter((k) => k.startsWith('read:')).map((k) => k.split(':')[1]!)))];
  console.log(`| read | ${[...results.keys()].join(' | ')} |`);
  console.log(`| --- | ${[...results.keys()].map(() => '---:').join(' | ')} |`);
  for (const read of reads) {
    const cellOf = (f: Figures) =>
      read === 'prune'
        ? `${fmt(f['read:prune:walPerJob']!)} B (+${fmt(f['read:prune:fpiPerJob']!)} FPI) / ${fmt(f['read:prune:ms']!, 1)} ms`
        : f[`read:${read}:buffers`] === undefined
          ? '–'
          : `${fmt(f[`read:${read}:buffers`]!)} / ${fmt(f[`read:${read}:ms`]!, 2)} ms`;
    console.log(`| ${read} | ${[...results.values()].map((figures) => cellOf(figures[0]!)).join(' | ')} |`);
  }
}
if (values.out) writeFileSync(values.out, `${JSON.stringify({ jobs, claimBatch, outcomeBatch, runs, results: Object.fromEntries(results) }, null, 2)}\n`);
