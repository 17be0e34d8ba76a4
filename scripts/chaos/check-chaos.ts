/**
 * The chaos run's verdict, from the rows, the history and the executions table: every job
 * completed exactly once (or, for a poison job, dead once), every execution belongs to a
 * claimed attempt, nothing lost or stuck, the zombie's late results not applied. Returns the
 * counts it checked, in print order, and a line per failure.
 */
import type pg from 'pg';
import type { ChaosResult } from './chaos-schema.js';
import type { ChaosWorkerLine } from './chaos-worker.js';

export interface ChaosFacts {
  schema: string;
  total: number;
  poison: number;
  /** The paused worker: when, and the executions it had in flight when it stopped. */
  zombie: { worker: string; pausedAt: number; resumedAt: number; inflight: readonly string[] };
  /** When the server was crashed, when it answered again, and when a job finished again. */
  crash: { at: number; restartedAt: number; resumedAt: number };
  kills: ReadonlyArray<{ worker: string; at: number }>;
  stopped: ReadonlyArray<Extract<ChaosWorkerLine, { event: 'stopped' }>>;
}

export interface ChaosVerdict {
  counts: Array<[label: string, value: number]>;
  failures: string[];
}

interface JobRow {
  id: string;
  kind: string;
  state: string;
  attempt: number;
  worker_id: string | null;
  result: ChaosResult | null;
  n: number;
}

interface EventRow {
  job_id: string;
  to_state: string;
  attempt: number;
  worker_id: string | null;
  code: string | null;
  at_ms: number;
}

interface ExecutionRow {
  id: string;
  job_id: string;
  attempt: number;
  worker: string;
  lease_token: string;
  started_ms: number;
  ended_ms: number | null;
}

export async function checkChaos(pool: pg.Pool, facts: ChaosFacts): Promise<ChaosVerdict> {
  const s = `"${facts.schema}"`;
  const { rows: jobs } = await pool.query<JobRow>(
    `select id::text, kind, state, attempt, worker_id, result, (payload->>'n')::int as n from ${s}.jobs`,
  );
  const { rows: events } = await pool.query<EventRow>(
    `select job_id::text, to_state, attempt, worker_id, error->>'code' as code, extract(epoch from at) * 1000 as at_ms from ${s}.job_events`,
  );
  const { rows: executions } = await pool.query<ExecutionRow>(
    `select id::text, job_id::text, attempt, worker, lease_token::text, started_ms, ended_ms from ${s}.executions`,
  );
  const failures: string[] = [];
  const fail = (count: number, what: string, examples: readonly string[] = []) => {
    if (count > 0) failures.push(`${count} ${what}${examples.length ? `: ${examples.slice(0, 5).join(', ')}` : ''}`);
  };

  // Jobs: none lost, none left unfinished, the poison ones dead and only they.
  const ns = new Set(jobs.map((j) => j.n));
  fail(facts.total - ns.size, 'jobs missing (enqueued numbers with no row)');
  fail(jobs.length - ns.size, 'jobs duplicated (two rows for one enqueued number)');
  const byState = count(jobs.map((j) => j.state));
  const work = jobs.filter((j) => j.kind === 'work');
  const poison = jobs.filter((j) => j.kind === 'poison');
  const unfinished = jobs.filter((j) => j.state !== 'completed' && j.state !== 'dead');
  fail(unfinished.length, 'jobs stuck (not completed or dead)', unfinished.map((j) => `${j.id}:${j.state}`));
  const deadWork = work.filter((j) => j.state === 'dead');
  fail(deadWork.length, 'normal jobs dead', deadWork.map((j) => j.id));
  const livePoison = poison.filter((j) => j.state !== 'dead');
  fail(livePoison.length, 'poison jobs not dead', livePoison.map((j) => `${j.id}:${j.state}`));

  // History: each normal job completed exactly once, by the attempt the row names.
  const eventsOf = groupBy(events, (e) => e.job_id);
  const wrongCompletions = work.filter((j) => {
    const done = (eventsOf.get(j.id) ?? []).filter((e) => e.to_state === 'completed');
    return done.length !== 1 || done[0]!.attempt !== j.attempt || done[0]!.worker_id !== j.worker_id;
  });
  fail(wrongCompletions.length, 'normal jobs not completed exactly once by the attempt their row names', wrongCompletions.map((j) => j.id));
  const wrongDeaths = poison.filter((j) => {
    const history = eventsOf.get(j.id) ?? [];
    return history.filter((e) => e.to_state === 'dead').length !== 1 || history.some((e) => e.to_state === 'completed');
  });
  fail(wrongDeaths.length, 'poison jobs not dead exactly once, or completed', wrongDeaths.map((j) => j.id));

  // Executions: each belongs to a claimed attempt (a running event for its job, attempt and
  // worker). One that does not may only be a claim the crash lost (claims commit without
  // waiting for the WAL flush), and then it started after the crash.
  const claims = new Set(events.filter((e) => e.to_state === 'running').map((e) => `${e.job_id}/${e.attempt}/${e.worker_id}`));
  const unclaimed = executions.filter((x) => !claims.has(`${x.job_id}/${x.attempt}/${x.worker}`));
  const lostClaims = unclaimed.filter((x) => x.started_ms >= facts.crash.at);
  const orphans = unclaimed.filter((x) => x.started_ms < facts.crash.at);
  fail(orphans.length, 'executions of no claimed attempt', orphans.map((x) => `${x.job_id}#${x.attempt}@${x.worker}`));

  // The completing execution: the result names its lease token; it ran to its end.
  const executionsOf = groupBy(executions, (x) => x.job_id);
  const completing = new Set<string>();
  const unbacked = work.filter((j) => {
    const found = (executionsOf.get(j.id) ?? []).find(
      (x) => x.attempt === j.attempt && x.worker === j.worker_id && x.lease_token === j.result?.token && x.ended_ms !== null,
    );
    if (found) completing.add(found.id);
    return !found || j.result?.worker !== j.worker_id;
  });
  fail(unbacked.length, 'completed jobs whose result no finished execution of that attempt produced', unbacked.map((j) => j.id));

  // The zombie: what it had in flight when paused finished after it resumed, and applied nothing.
  // Those executions were still open when read after the pause, and a stopped process writes
  // nothing: any end recorded for them came after the resume. No clock comparison across
  // processes (the parent's Date.now() and the worker's clock may differ by a millisecond,
  // and the parent may be descheduled between its SIGCONT and reading the time).
  const inflight = executions.filter((x) => facts.zombie.inflight.includes(x.id));
  const late = inflight.filter((x) => x.ended_ms !== null);
  const lateApplied = late.filter((x) => completing.has(x.id));
  fail(lateApplied.length, "of the zombie's late results applied", lateApplied.map((x) => x.job_id));
  if (inflight.length === 0) failures.push('the zombie had no handler in flight when paused: the scenario tested nothing');
  if (late.length === 0) failures.push("none of the zombie's handlers finished after it resumed");
  // A handler the zombie started after it resumed, on a claim from before its pause: its own
  // clock said that lease had lapsed, so it must not start at all.
  const claimedAt = new Map(events.filter((e) => e.to_state === 'running').map((e) => [`${e.job_id}/${e.attempt}/${e.worker_id}`, e.at_ms]));
  const staleStarts = executions.filter(
    (x) =>
      x.worker === facts.zombie.worker &&
      x.started_ms >= facts.zombie.resumedAt &&
      (claimedAt.get(`${x.job_id}/${x.attempt}/${x.worker}`) ?? Infinity) < facts.zombie.pausedAt,
  );
  fail(staleStarts.length, 'handlers the zombie started after resuming, on leases that lapsed while it was paused', staleStarts.map((x) => x.job_id));
  const zombieLine = facts.stopped.find((line) => line.worker === facts.zombie.worker);
  if (!zombieLine) failures.push('the zombie did not report its counters at the end');
  const zombieRefusedLate = (zombieLine?.refusals ?? []).filter(([at]) => at >= facts.zombie.resumedAt && at < facts.crash.at).length;

  const poisonIds = new Set(poison.map((j) => j.id));
  const superseded = executions.filter((x) => x.ended_ms !== null && !poisonIds.has(x.job_id) && !completing.has(x.id)).length;
  const sum = (pick: (line: ChaosFacts['stopped'][number]) => number) => facts.stopped.reduce((total, line) => total + pick(line), 0);
  const workAttempts = work.map((j) => j.attempt);
  const counts: ChaosVerdict['counts'] = [
    ['jobs enqueued', facts.total],
    ['jobs in the table', jobs.length],
    ['completed (expected: normal jobs)', byState.get('completed') ?? 0],
    ['normal jobs', work.length],
    ['dead (expected: poison jobs)', byState.get('dead') ?? 0],
    ['poison jobs', poison.length],
    ['stuck: pending, retrying or running at the end', unfinished.length],
    ['normal jobs completed other than exactly once', wrongCompletions.length],
    ['normal jobs that needed more than one attempt', workAttempts.filter((a) => a > 1).length],
    ['most attempts a normal job needed', Math.max(0, ...workAttempts)],
    ['leases expired and rescued by a reaper', events.filter((e) => e.code === 'lease_expired').length],
    ['executions recorded', executions.length],
    ['  of a claimed attempt (job, attempt, worker in the history)', executions.length - unclaimed.length],
    ['  of a claim the database crash lost (started after it)', lostClaims.length],
    ['  of no claimed attempt', orphans.length],
    ['  cut short (killed, aborted or database down)', executions.filter((x) => x.ended_ms === null).length],
    ['  of poison jobs (each one failing)', executions.filter((x) => poisonIds.has(x.job_id)).length],
    ['  of normal jobs, finished but superseded (result not applied)', superseded],
    ['completed jobs without a finished execution of their attempt', unbacked.length],
    ['workers killed with SIGKILL (and restarted)', facts.kills.length],
    ['zombie: pause in ms (SIGSTOP to SIGCONT)', Math.round(facts.zombie.resumedAt - facts.zombie.pausedAt)],
    ['zombie: handlers in flight when paused', inflight.length],
    ['zombie: late results, finished after it resumed', late.length],
    ['zombie: late results applied', lateApplied.length],
    ['zombie: handlers started after resuming on a lapsed lease', staleStarts.length],
    ['zombie: its outcome writes refused by the fence after it resumed, before the crash', zombieRefusedLate],
    ['zombie: its actors that ended lost (whole run)', zombieLine?.counters?.lost ?? 0],
    ['workers alive at the end: outcome writes refused by the fence', sum((line) => line.refusals.length)],
    ['workers alive at the end: lease renewals refused by the fence', sum((line) => line.rejectedRenewals)],
    ['workers alive at the end: actors ended lost', sum((line) => line.counters?.lost ?? 0)],
    ['database: down for ms after its crash', Math.round(facts.crash.restartedAt - facts.crash.at)],
    ['database: ms from its restart to the next job finished', Math.round(facts.crash.resumedAt - facts.crash.restartedAt)],
    ['database: ms from its restart to the slowest surviving worker\'s next execution', slowestResume(executions, facts)],
    ['overlapping executions of one job (zombie excluded; see RELIABILITY.md)', overlaps(executions, facts)],
  ];
  return { counts, failures };
}

/** Pairs of executions of one job whose runs overlapped in time, leaving out the zombie's
 *  (overlap is what a pause past the lease means) and runs cut short, whose end is unknown
 *  (killed, or their end not recorded while the database was down). */
function overlaps(executions: readonly ExecutionRow[], facts: ChaosFacts): number {
  let found = 0;
  for (const runs of groupBy(executions, (x) => x.job_id).values()) {
    const known = runs
      .filter((x) => x.worker !== facts.zombie.worker && x.ended_ms !== null)
      .map((x) => ({ start: x.started_ms, end: x.ended_ms! }))
      .sort((a, b) => a.start - b.start);
    let latestEnd = -Infinity;
    for (const run of known) {
      if (run.start < latestEnd) found++;
      latestEnd = Math.max(latestEnd, run.end);
    }
  }
  return found;
}

/** Of the workers that ran jobs before the crash and after the restart, the longest wait from
 *  the restart to one's first execution after it: how long a supervisor took to resume alone. */
function slowestResume(executions: readonly ExecutionRow[], facts: ChaosFacts): number {
  let slowest = 0;
  for (const runs of groupBy(executions, (x) => x.worker).values()) {
    if (!runs.some((x) => x.started_ms < facts.crash.at)) continue;
    const after = runs.filter((x) => x.started_ms >= facts.crash.restartedAt).map((x) => x.started_ms);
    if (after.length > 0) slowest = Math.max(slowest, Math.min(...after) - facts.crash.restartedAt);
  }
  return Math.round(slowest);
}

function count(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return counts;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}
