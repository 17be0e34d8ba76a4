import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { postgresStore } from '../../../src/adapters/postgres/index.js';
import { loadMigrations } from '../../../src/adapters/sql/migrate.js';
import { CLAIM_FAIR_JOBS, CLAIM_JOBS } from '../../../src/adapters/sql/queries/claim-jobs.js';
import { CHECKPOINT_STEPS } from '../../../src/adapters/sql/queries/durable-jobs.js';
import { PRUNE_JOBS_BATCH } from '../../../src/adapters/sql/queries/prune-jobs.js';
import { SET_PROGRESS_IF_RUNNING } from '../../../src/adapters/sql/queries/set-progress-if-running.js';
import { SET_STATES_IF_RUNNING } from '../../../src/adapters/sql/queries/set-states-if-running.js';
import { sqlSchema } from '../../../src/adapters/sql/sql-schema.js';
import { buildStatement } from '../../../src/adapters/sql/statement.js';
import { InvalidOptionError } from '../../../src/errors.js';
import { describePostgres, dropSchema, freshSchema, settleStatistics, testPool } from '../../support/postgres.js';

/** A sequential scan of the jobs table in a JSON plan. (The queue table, one row per queue,
 *  may be read whole: the planner's choice for a table that small.) */
const SCANS_JOBS = /"Node Type":"Seq Scan"[^{}]*"Relation Name":"jobs"/;

const job = { queue: 'q', kind: 'k', payload: {}, maxAttempts: 3 };

interface PlanNode {
  'Index Name'?: string;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

/** The blocks each index's scans read, from an EXPLAIN (ANALYZE, BUFFERS) plan. A node's
 *  counts include its children's, so only index scans (the leaves that read an index) count. */
function indexBlocks(node: PlanNode, into = new Map<string, number>()): Map<string, number> {
  if (node['Index Name'] !== undefined) {
    const read = (node['Shared Hit Blocks'] ?? 0) + (node['Shared Read Blocks'] ?? 0);
    into.set(node['Index Name'], (into.get(node['Index Name']) ?? 0) + read);
  }
  for (const child of node.Plans ?? []) indexBlocks(child, into);
  return into;
}

describePostgres('postgresStore', (url) => {
  const schema = freshSchema('jv_pg_store');
  let pool: pg.Pool;

  beforeAll(async () => {
    pool = testPool(url);
    // Migrated here, not by whichever test happens to run first: the suite runs them in any order.
    await postgresStore({ pool, schema }).migrate();
  });

  afterAll(async () => {
    await dropSchema(pool, schema);
    await pool.end();
  });

  describe('options', () => {
    it("poolSize bounds the store's own pool, one connection listening among them", async () => {
      const app = `jv_pool_${process.pid}`;
      const store = postgresStore({ connectionString: `${url}${url.includes('?') ? '&' : '?'}application_name=${app}`, schema, poolSize: 2 });
      const unsubscribe = await store.subscribe(() => {});
      const jobs = Array.from({ length: 20 }, (_, n) => ({ queue: 'pool', kind: 'k', payload: { n }, maxAttempts: 1 }));
      const results = await Promise.all(jobs.map((job) => store.enqueueJobs({ jobs: [job] })));
      expect(results.flat().filter((r) => r.created)).toHaveLength(20);
      const { rows } = await pool.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where application_name = $1', [app]);
      expect(rows[0]!.n).toBe(2);
      await unsubscribe();
      await store.close();
    });

    it('refuses a hostile schema name before touching the pool', () => {
      const untouchable = {
        query: () => {
          throw new Error('no SQL may run');
        },
        connect: () => {
          throw new Error('no connection may open');
        },
      } as unknown as pg.Pool;
      for (const name of ['x"; drop table jobs; --', 'public.jobs', 'pg_catalog', 'a'.repeat(64), '']) {
        expect(() => postgresStore({ pool: untouchable, schema: name })).toThrow(InvalidOptionError);
      }
    });

    it('wants exactly one of pool and connectionString', () => {
      expect(() => postgresStore({})).toThrow(InvalidOptionError);
      expect(() => postgresStore({ pool, connectionString: url })).toThrow(InvalidOptionError);
    });

    it('refuses a negative notifyDebounceMs', () => {
      expect(() => postgresStore({ pool, notifyDebounceMs: -1 })).toThrow(InvalidOptionError);
    });

    it('quotes the schema name: a mixed-case name works end to end', async () => {
      const mixed = freshSchema('Jv_Mixed');
      const store = postgresStore({ pool, schema: mixed });
      try {
        expect(await store.migrate()).toEqual((await loadMigrations()).map((m) => m.version));
        const [result] = await store.enqueueJobs({ jobs: [job] });
        expect(await store.claimJobs({ workerId: 'w', leaseMs: 1_000, queues: [{ queue: 'q', limit: 1 }] })).toMatchObject([
          { id: result!.job.id },
        ]);
        const { rows } = await pool.query('select count(*)::int as n from pg_namespace where nspname = $1', [mixed]);
        expect(rows[0].n).toBe(1);
      } finally {
        await store.close();
        await dropSchema(pool, mixed);
      }
    });

    it('leaves the pool it was given open', async () => {
      const store = postgresStore({ pool, schema });
      await store.migrate();
      await store.close();
      await store.close();
      expect((await pool.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
    });

    it('closes the pool it opened from a connectionString', async () => {
      const appName = freshSchema('jv_own_pool');
      const connections = async (): Promise<number> =>
        (await pool.query('select count(*)::int as n from pg_stat_activity where application_name = $1', [appName]))
          .rows[0].n;
      const store = postgresStore({ connectionString: `${url}${url.includes('?') ? '&' : '?'}application_name=${appName}`, schema });
      await store.migrate();
      await store.countJobs();
      expect(await connections()).toBeGreaterThan(0);
      await store.close();
      await vi.waitFor(async () => expect(await connections()).toBe(0), { timeout: 5_000, interval: 20 });
    });
  });

  describe('SQL', () => {
    it('runs the hot path as named prepared statements', async () => {
      const single = testPool(url, { max: 1 });
      try {
        const store = postgresStore({ pool: single, schema });
        await store.enqueueJobs({ jobs: [job] });
        await store.enqueueJobs({ jobs: [{ ...job, uniqueKey: 'prepared' }] });
        const [claimed] = await store.claimJobs({ workerId: 'w', leaseMs: 1_000, queues: [{ queue: 'q', limit: 1 }] });
        await store.renewLeases({ leases: [claimed!], leaseMs: 1_000 });
        await store.setProgressIfRunning({ updates: [{ ...claimed!, percent: 50, message: null }] });
        await store.setStatesIfRunning({ outcomes: [{ ...claimed!, state: 'completed', result: null }] });
        const { rows } = await single.query('select name from pg_prepared_statements');
        const names = rows.map((row: { name: string }) => row.name.replace(/_[0-9a-f]{12}$/, ''));
        expect(names).toEqual(
          expect.arrayContaining([
            'jobvisor_enqueue_jobs',
            'jobvisor_enqueue_new_jobs',
            'jobvisor_claim_jobs',
            'jobvisor_renew_leases',
            'jobvisor_set_progress_if_running',
            'jobvisor_set_states_if_running',
          ]),
        );
        await store.close();
      } finally {
        await single.end();
      }
    });

    it('claims through jobs_claim_idx and the primary key, never scanning the table', async () => {
      const store = postgresStore({ pool, schema });
      await store.enqueueJobs({
        jobs: Array.from({ length: 5_000 }, (_, i) => ({ ...job, queue: `plan${i % 5}`, priority: i % 3 })),
      });
      await pool.query(`analyze "${schema}".jobs`);
      const claim = buildStatement(CLAIM_JOBS, sqlSchema(schema));
      const input = JSON.stringify([{ queue: 'plan1', lim: 10 }]);
      const { rows } = await pool.query(`explain (format json) ${claim.text}`, [null, input, 'w', 1_000]);
      const plan = JSON.stringify(rows[0]['QUERY PLAN']);
      expect(plan).toContain('jobs_claim_idx');
      expect(plan).toContain('jobs_pkey');
      expect(plan).not.toMatch(SCANS_JOBS);
      await store.close();
    });

    it('a fair queue claims through jobs_fair_claim_idx and the primary key, never scanning the table', async () => {
      const store = postgresStore({ pool, schema });
      await store.enqueueJobs({
        jobs: Array.from({ length: 2_000 }, (_, i) => ({ ...job, queue: 'fairplan', fairShare: { tenant: `t${i % 50}`, weight: 1 } })),
      });
      await pool.query(`analyze "${schema}".jobs`);
      const claim = buildStatement(CLAIM_FAIR_JOBS, sqlSchema(schema));
      const input = JSON.stringify([{ queue: 'fairplan', lim: 10 }]);
      const { rows } = await pool.query(`explain (format json) ${claim.text}`, [null, input, 'w', 1_000]);
      const plan = JSON.stringify(rows[0]['QUERY PLAN']);
      expect(plan).toContain('jobs_fair_claim_idx');
      expect(plan).toContain('jobs_pkey');
      expect(plan).not.toMatch(SCANS_JOBS);
      await store.close();
    });

    it('a claim beside 20,000 sleeping jobs reads a few pages, not their entries, and still takes a due one', async () => {
      const store = postgresStore({ pool, schema });
      // The sleepers are written asleep, copies of one enqueued job, not enqueued and then
      // updated: an update leaves 20,000 dead entries in jobs_claim_idx that the vacuum below
      // cannot remove while another test's transaction holds an older snapshot (CI runs the
      // files side by side), and the claim would then read them.
      const [first] = await store.enqueueJobs({ jobs: [{ ...job, queue: 'asleep' }] });
      const { rows: columns } = await pool.query(
        `select column_name from information_schema.columns
         where table_schema = $1 and table_name = 'jobs' and column_name not in ('id', 'state', 'run_at')`,
        [schema],
      );
      const copied = columns.map((c: { column_name: string }) => `"${c.column_name}"`).join(', ');
      // As suspend_job leaves them: asleep for 30 days, or waiting for a signal with no timeout.
      await pool.query(
        `insert into "${schema}".jobs (state, run_at, ${copied})
         select 'sleeping', case when n % 2 = 0 then now() + interval '30 days' else '9999-12-31' end, ${copied}
         from "${schema}".jobs, generate_series(1, 19999) n where id = $1`,
        [first!.job.id],
      );
      // The enqueued one sleeps too, and is due now.
      const ids = [Number(first!.job.id)];
      await pool.query(`update "${schema}".jobs set state = 'sleeping', run_at = now() - interval '1 second' where id = $1`, [ids[0]]);
      await store.enqueueJobs({ jobs: [{ ...job, queue: 'asleep', payload: { due: 1 } }, { ...job, queue: 'asleep', payload: { due: 2 } }] });
      await settleStatistics(pool, schema, ['jobs']);
      const claim = buildStatement(CLAIM_JOBS, sqlSchema(schema));
      const input = JSON.stringify([{ queue: 'asleep', lim: 10 }]);
      const client = await pool.connect();
      try {
        await client.query('begin');
        const { rows } = await client.query(`explain (analyze, buffers, format json) ${claim.text}`, [null, input, 'w', 1_000]);
        await client.query('rollback');
        const blocks = indexBlocks(rows[0]['QUERY PLAN'][0].Plan);
        const total = [...blocks.values()].reduce((sum, n) => sum + n, 0);
        // A few pages of each index and the claimed rows' own (about 30 in all); reading the
        // sleepers, by any index, is hundreds (20,000 entries and their rows: 600 through
        // the primary key when jobs_claim_idx held them).
        expect(total, JSON.stringify([...blocks])).toBeLessThan(100);
      } finally {
        client.release();
      }
      const claimed = await store.claimJobs({ workerId: 'w', leaseMs: 1_000, queues: [{ queue: 'asleep', limit: 10 }] });
      expect(claimed.map((c) => c.id).sort()).toEqual([String(ids[0]), ...(await dueIds())].sort());
      await store.close();

      async function dueIds(): Promise<string[]> {
        const { rows } = await pool.query(`select id::text from "${schema}".jobs where queue = 'asleep' and payload ? 'due'`);
        return rows.map((row: { id: string }) => row.id);
      }
    });

    it('writes outcomes, progress and step checkpoints by primary key beside 3,000 running jobs, never reading the others', async () => {
      // At a steady rate each of these statements carries one to five jobs; joined to the
      // table as planned from jsonb_to_recordset's guess of 100 input rows, the outcomes' UPDATE
      // read every running job (and the running index's entries for jobs finished since the
      // last vacuum) to write one.
      const store = postgresStore({ pool, schema });
      const [first] = await store.enqueueJobs({ jobs: [{ ...job, queue: 'busy' }] });
      const { rows: columns } = await pool.query(
        `select column_name from information_schema.columns
         where table_schema = $1 and table_name = 'jobs' and column_name not in ('id', 'state', 'lease_token', 'lease_expires_at', 'worker_id', 'attempt')`,
        [schema],
      );
      const copied = columns.map((c: { column_name: string }) => `"${c.column_name}"`).join(', ');
      await pool.query(
        `insert into "${schema}".jobs (state, lease_token, lease_expires_at, worker_id, attempt, ${copied})
         select 'running', gen_random_uuid(), now() + interval '1 hour', 'w', 1, ${copied}
         from "${schema}".jobs, generate_series(1, 3000) n where id = $1`,
        [first!.job.id],
      );
      await settleStatistics(pool, schema, ['jobs']);
      const { rows: held } = await pool.query(
        `select id::int as id, lease_token::text as token from "${schema}".jobs where queue = 'busy' and state = 'running' limit 2`,
      );
      const writes = [
        [SET_STATES_IF_RUNNING, held.map((h: { id: number; token: string }, i: number) => ({ i, id: h.id, token: h.token, state: 'completed', result: 1 }))],
        [SET_PROGRESS_IF_RUNNING, held.map((h: { id: number; token: string }, i: number) => ({ i, id: h.id, token: h.token, percent: 50, message: 'half' }))],
        [CHECKPOINT_STEPS, held.map((h: { id: number; token: string }, k: number) => ({ k, id: h.id, token: h.token, name: 'a', value: 1 }))],
      ] as const;
      for (const [definition, input] of writes) {
        const statement = buildStatement(definition, sqlSchema(schema));
        const { rows } = await pool.query(`explain (format json) ${statement.text}`, [null, JSON.stringify(input)]);
        const plan = JSON.stringify(rows[0]['QUERY PLAN']);
        expect(plan, statement.name).toContain('jobs_pkey');
        expect(plan, statement.name).not.toContain('jobs_lease_expiry_idx');
        expect(plan, statement.name).not.toMatch(SCANS_JOBS);
      }
      await pool.query(`delete from "${schema}".jobs where queue = 'busy'`);
      await store.close();
    });

    it("fences a batch of outcomes by primary key, not through jobs_lease_expiry_idx, when the last ANALYZE saw no running job", async () => {
      // A schema of its own: the statistics must say that nothing runs (as after a bulk
      // enqueue), which other tests' running jobs would contradict.
      const own = freshSchema('jv_pg_outcomes');
      const store = postgresStore({ pool, schema: own });
      try {
        await store.migrate();
        await store.enqueueJobs({ jobs: Array.from({ length: 400 }, (_, n) => ({ ...job, queue: 'outcomes', payload: { n } })) });
        await settleStatistics(pool, own, ['jobs']);
        const claimed = await store.claimJobs({ workerId: 'w', leaseMs: 60_000, queues: [{ queue: 'outcomes', limit: 300 }] });
        expect(claimed).toHaveLength(300);
        const outcomes = claimed.map((c, i) => ({ i, id: Number(c.id), token: c.leaseToken, state: 'completed', result: null, error: null, delay_ms: null }));
        const statement = buildStatement(SET_STATES_IF_RUNNING, sqlSchema(own));
        const client = await pool.connect();
        try {
          await client.query('begin');
          const { rows } = await client.query(`explain (analyze, buffers, format json) ${statement.text}`, [null, JSON.stringify(outcomes)]);
          await client.query('rollback');
          const blocks = indexBlocks(rows[0]['QUERY PLAN'][0].Plan);
          // One look-up by primary key per outcome (3 pages or fewer each), and at most one read
          // of the running jobs' index for the whole batch. Fenced through that index, each
          // outcome read every running job's entry: 2 pages or more per outcome, 600 and up.
          expect(blocks.get('jobs_lease_expiry_idx') ?? 0, JSON.stringify([...blocks])).toBeLessThan(50);
          expect(blocks.get('jobs_pkey'), JSON.stringify([...blocks])).toBeGreaterThanOrEqual(300);
        } finally {
          client.release();
        }
        const applied = await store.setStatesIfRunning({ outcomes: claimed.map((c) => ({ id: c.id, leaseToken: c.leaseToken!, state: 'completed', result: null })) });
        expect(applied.every(Boolean)).toBe(true);
      } finally {
        await store.close();
        await dropSchema(pool, own);
      }
    });

    it('a sleep beside 20,000 sleeping and 1,000 running jobs fetches its own row, not every running one', async () => {
      // Its own schema, analyzed with no job running (as a table of sleeping or finished jobs
      // mostly is: the planner then holds jobs_lease_expiry_idx for empty), then 1,000 running.
      const own = freshSchema('jv_pg_suspend');
      const store = postgresStore({ pool, schema: own });
      try {
        await store.migrate();
        const [first] = await store.enqueueJobs({ jobs: [{ ...job, queue: 'suspend' }] });
        const { rows: columns } = await pool.query(
          `select column_name from information_schema.columns
           where table_schema = $1 and table_name = 'jobs' and column_name not in ('id', 'state', 'run_at', 'lease_token', 'lease_expires_at')`,
          [own],
        );
        const copied = columns.map((c: { column_name: string }) => `"${c.column_name}"`).join(', ');
        const copies = (state: string, runAt: string, token: string, expires: string, n: number) =>
          pool.query(
            `insert into "${own}".jobs (state, run_at, lease_token, lease_expires_at, ${copied})
             select '${state}', ${runAt}, ${token}, ${expires}, ${copied}
             from "${own}".jobs, generate_series(1, ${n}) n where id = $1`,
            [first!.job.id],
          );
        await copies('sleeping', "now() + interval '30 days'", 'null', 'null', 20_000);
        await settleStatistics(pool, own, ['jobs']);
        await copies('running', 'now()', 'gen_random_uuid()', "now() + interval '1 minute' + n * interval '1 millisecond'", 1_000);
        const { rows: last } = await pool.query<{ id: string; token: string }>(
          `select id::text, lease_token::text as token from "${own}".jobs where state = 'running' order by id desc limit 1`,
        );
        const client = await pool.connect();
        try {
          // The rows this transaction fetched through indexes so far (not yet flushed to the
          // cumulative statistics, so no other session's reads count).
          const fetched = async () =>
            (await client.query<{ n: number }>(`select idx_tup_fetch::int as n from pg_stat_xact_user_tables where schemaname = $1 and relname = 'jobs'`, [own]))
              .rows[0]!.n;
          await client.query('begin');
          const before = await fetched();
          const suspend = (token: string) =>
            client.query<{ answer: string }>(`select answer from "${own}".suspend_job(null, $1, $2::uuid, 'sleep', 'nap', null, null, 3600000)`, [
              last[0]!.id,
              token,
            ]);
          expect((await suspend(last[0]!.token)).rows[0]!.answer).toBe('sleeping');
          const spent = (await fetched()) - before;
          // Its own row (then its update, by primary key): a few. Through jobs_lease_expiry_idx,
          // every running job before it: 1,000.
          expect(spent).toBeLessThan(20);
          // Still fenced: asleep now, the same lease is lost; and so is a lease it never had.
          expect((await suspend(last[0]!.token)).rows[0]!.answer).toBe('lost');
          await client.query('rollback');
          expect((await suspend('00000000-0000-4000-8000-000000000000')).rows[0]!.answer).toBe('lost');
        } finally {
          client.release();
        }
      } finally {
        await store.close();
        await dropSchema(pool, own);
      }
    });


    it('prunes a batch through jobs_finished_idx, never scanning the table, whether it finds jobs or none', async () => {
      const store = postgresStore({ pool, schema });
      const created = await store.enqueueJobs({ jobs: Array.from({ length: 5_000 }, (_, i) => ({ ...job, queue: `prune${i % 5}` })) });
      const ids = created.map((r) => r.job.id);
      // Most of the table finished a day ago, as on a store that prunes rarely.
      await pool.query(
        `update "${schema}".jobs set state = case when id % 3 = 0 then 'dead' else 'completed' end,
           finished_at = now() - interval '1 day' where id = any($1::bigint[]) and id % 5 <> 0`,
        [ids],
      );
      await pool.query(`analyze "${schema}".jobs`);
      const batch = buildStatement(PRUNE_JOBS_BATCH, sqlSchema(schema));
      const ago = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString();
      for (const [completedBefore, deadBefore] of [
        [ago(48), ago(48)], // finds none
        [ago(1), null],
        [null, ago(1)],
        [ago(1), ago(1)],
      ]) {
        // Planned as the store runs it (indexScansOnly: sequential scans off, pg-driver.ts).
        const client = await pool.connect();
        let plan: string;
        try {
          await client.query('begin; set local enable_seqscan = off; set local jit = off');
          const { rows } = await client.query(`explain (format json) ${batch.text}`, [completedBefore, deadBefore, 1_000]);
          plan = JSON.stringify(rows[0]['QUERY PLAN']);
        } finally {
          await client.query('rollback');
          client.release();
        }
        expect(plan).toContain('jobs_finished_idx');
        expect(plan).not.toMatch(SCANS_JOBS);
        // The keep-check is a lookup per job, not a hash of every waiting job's edges.
        expect(plan).toContain('job_deps_dep_idx');
        expect(plan).not.toContain('hashed SubPlan');
      }
      const cutoff = ago(1);
      const [{ n }] = (await pool.query(`select count(*)::int as n from "${schema}".jobs where state = 'completed' and finished_at < $1`, [cutoff])).rows;
      expect(n).toBeGreaterThan(2_000);
      const progress: number[] = [];
      expect(await store.pruneJobs({ completedBefore: new Date(cutoff), batchSize: 1_000, onBatch: ({ total }) => progress.push(total) })).toBe(n);
      expect(progress).toEqual([1_000, 2_000, n]);
      await store.close();
    });

    it('claims without a scan of the table after a burst of enqueues on a connection that claimed while it was small', async () => {
      const single = testPool(url, { max: 1 });
      const burst = freshSchema('jv_burst');
      try {
        const store = postgresStore({ pool: single, schema: burst });
        await store.migrate();
        // More claims than the five custom plans after which the server may keep a generic one.
        for (let round = 0; round < 8; round++) {
          await store.enqueueJobs({ jobs: [job] });
          const claimed = await store.claimJobs({ workerId: 'w', leaseMs: 1_000, queues: [{ queue: 'q', limit: 1 }] });
          await store.setStatesIfRunning({ outcomes: claimed.map((c) => ({ ...c, state: 'completed' as const, result: null })) });
        }
        await store.enqueueJobs({ jobs: Array.from({ length: 20_000 }, () => job) });
        // No ANALYZE: autovacuum has not come by yet. The plan the connection keeps for its
        // next claim:
        const client = await single.connect();
        try {
          const claim = buildStatement(CLAIM_JOBS, sqlSchema(burst));
          const input = JSON.stringify([{ queue: 'q', lim: 50 }]);
          const prepared = await client.query('select name from pg_prepared_statements where name = $1', [claim.name]);
          expect(prepared.rows).toHaveLength(1);
          const { rows } = await client.query(`explain (format json) execute ${claim.name}(null, '${input}', 'w', 1000)`);
          expect(JSON.stringify(rows[0]['QUERY PLAN'])).not.toMatch(SCANS_JOBS);
        } finally {
          client.release();
        }
        await store.close();
      } finally {
        await single.end();
        await dropSchema(pool, burst);
      }
    });

    it('sends one NOTIFY per queue for a bulk enqueue', async () => {
      const store = postgresStore({ pool, schema, notifyDebounceMs: 0 });
      const woken: string[] = [];
      const unsubscribe = await store.subscribe((queue) => woken.push(queue ?? '(any queue)'));
      await store.enqueueJobs({
        jobs: Array.from({ length: 100 }, (_, i) => ({ ...job, queue: i % 2 ? 'bulk-a' : 'bulk-b' })),
      });
      await store.enqueueJobs({ jobs: [{ ...job, queue: 'bulk-end' }] });
      await vi.waitFor(() => expect(woken).toContain('bulk-end'), { timeout: 5_000, interval: 5 });
      expect(woken.sort()).toEqual(['bulk-a', 'bulk-b', 'bulk-end']);
      await unsubscribe();
      await store.close();
    });

    it('a job enqueued in a transaction exists, and wakes anyone, only once it commits', async () => {
      const store = postgresStore({ pool, schema, notifyDebounceMs: 0 });
      const woken: string[] = [];
      const unsubscribe = await store.subscribe((queue) => woken.push(queue ?? '(any queue)'));
      const client = await pool.connect();
      try {
        await client.query('begin');
        const [rolledBack] = await store.enqueueJobs({ jobs: [{ ...job, queue: 'tx-rollback' }], client });
        expect(await store.getJob({ id: rolledBack!.job.id })).toBeNull();
        await client.query('rollback');

        await client.query('begin');
        const [committed] = await store.enqueueJobs({ jobs: [{ ...job, queue: 'tx-commit' }], client });
        expect(await store.getJob({ id: committed!.job.id })).toBeNull();
        await client.query('commit');
        expect(await store.getJob({ id: committed!.job.id })).toMatchObject({ state: 'pending', queue: 'tx-commit' });
        await vi.waitFor(() => expect(woken).toEqual(['tx-commit']), { timeout: 5_000, interval: 5 });
        expect(await store.getJob({ id: rolledBack!.job.id })).toBeNull();
        expect(await store.getJobEvents({ id: rolledBack!.job.id })).toEqual([]);
      } finally {
        client.release();
        await unsubscribe();
        await store.close();
      }
    });

    it('turns a payload jsonb cannot hold into an InvalidPayloadError', async () => {
      const store = postgresStore({ pool, schema });
      await expect(store.enqueueJobs({ jobs: [{ ...job, payload: 'nul \u0000 byte' }] })).rejects.toMatchObject({
        code: 'invalid_payload',
      });
      await store.close();
    });

    it('answers "no such job" for ids that cannot be bigints, without failing the batch', async () => {
      const store = postgresStore({ pool, schema });
      const [created] = await store.enqueueJobs({ jobs: [{ ...job, queue: 'ids' }] });
      const [claimed] = await store.claimJobs({ workerId: 'w', leaseMs: 1_000, queues: [{ queue: 'ids', limit: 1 }] });
      expect(await store.getJob({ id: 'abc' })).toBeNull();
      expect(await store.getJob({ id: `00${created!.job.id}` })).toBeNull();
      expect(await store.getJob({ id: '99999999999999999999' })).toBeNull();
      expect(await store.getJobEvents({ id: '-1' })).toEqual([]);
      expect(await store.cancelJob({ id: '1.5' })).toBeNull();
      expect(await store.retryJob({ id: 'x' })).toBeNull();
      expect(await store.listJobs({ beforeId: 'nope' })).toEqual([]);
      expect(
        await store.renewLeases({ leases: [{ id: 'abc', leaseToken: 'not-a-uuid' }, claimed!], leaseMs: 1_000 }),
      ).toEqual(['lost', 'renewed']);
      expect(claimed!.id).toBe(created!.job.id);
      await store.close();
    });
  });
});
