/**
 * Durable jobs (docs/durable-jobs.md) tried from outside, as a user would run them: worker
 * processes (test/fixtures/worker-process.ts, its `durable` handler) on one database, killed
 * with SIGKILL, frozen with SIGSTOP past their lease, racing to wake one job. Each step's side
 * effect is a line the step appends to a file, so the test counts how often each ran; the
 * rows, the history and what each handler reported say the rest. Real time is unavoidable
 * across processes: every wait polls for a condition with a deadline, none sleeps blindly.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { postgresStore } from '../../../src/adapters/postgres/index.js';
import type { SqlJobStore } from '../../../src/adapters/sql/sql-store.js';
import { sendSignal } from '../../../src/index.js';
import type { DurableCall, DurableEffect, WorkerConfig } from '../../fixtures/worker-process.js';
import { describePostgres, dropSchema, freshSchema, testPool } from '../../support/postgres.js';
import { executionsOf, overlapping, until, WorkerProcess } from '../../support/worker-processes.js';

const QUEUE = 'durable';
/** Short, so a killed or frozen worker's job is rescued within a second or two. */
const LEASE_MS = 1_500;
const WAIT_MS = 20_000;

/** charge, then ship: two steps, the first one's side effect the one that must not repeat. */
const TWO_STEPS: DurableCall[] = [{ step: 'charge' }, { step: 'ship' }];

describePostgres('durable jobs on worker processes', (url) => {
  let pool: pg.Pool;
  let run: { schema: string; store: SqlJobStore; workers: WorkerProcess[]; dir: string } | undefined;

  beforeAll(() => {
    pool = testPool(url);
  });

  afterAll(async () => {
    await pool.end();
  });

  afterEach(async () => {
    if (!run) return;
    // A failed test may leave workers running (or frozen): none may outlive it.
    for (const w of run.workers) {
      w.signal('SIGKILL');
      w.signal('SIGCONT');
    }
    await Promise.all(run.workers.map((w) => w.exited));
    await run.store.close();
    await dropSchema(pool, run.schema);
    await rm(run.dir, { recursive: true, force: true });
    run = undefined;
  });

  async function setUp(prefix: string) {
    const schema = freshSchema(prefix);
    const store = postgresStore({ pool, schema });
    const dir = await mkdtemp(join(tmpdir(), 'jobvisor-durable-'));
    const effectsFile = join(dir, 'effects.jsonl');
    await writeFile(effectsFile, '');
    const workers: WorkerProcess[] = [];
    run = { schema, store, workers, dir };
    await store.migrate();

    const startWorker = (config: Partial<WorkerConfig> & Pick<WorkerConfig, 'workerId'>) => {
      const worker = new WorkerProcess({
        url,
        schema,
        queue: QUEUE,
        concurrency: 20,
        leaseMs: LEASE_MS,
        pollIntervalMs: 50,
        reaperIntervalMs: 100,
        handler: 'work',
        workMs: 0,
        effectsFile,
        ...config,
      });
      workers.push(worker);
      return worker;
    };
    const ready = (...ws: WorkerProcess[]) => until(() => ws.forEach((w) => w.assertReady()), ws, WAIT_MS);
    const enqueue = async (calls: DurableCall[], count = 1) =>
      (await store.enqueueJobs({ jobs: Array.from({ length: count }, () => ({ queue: QUEUE, kind: 'durable', payload: { calls }, maxAttempts: 3 })) })).map(
        (r) => r.job.id,
      );
    /** Every step's side effect so far, as `job step worker#attempt`. */
    const effects = async (): Promise<string[]> =>
      (await readFile(effectsFile, 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as DurableEffect)
        .map((e) => `${e.job} ${e.step} ${e.worker}#${e.attempt}`);
    const stateOf = async (id: string) => (await store.getJob({ id }))!.state;
    const storedSteps = async (id: string) =>
      (await store.getJob({ id }))!.steps.map((s) => (s.kind === 'step' ? [s.name, s.result] : [s.name, s.kind]));
    const path = async (id: string) =>
      (await store.getJobEvents({ id })).map((e) => [e.fromState, e.toState, e.attempt, e.workerId, e.error?.code ?? null]);
    const lineOf = (w: WorkerProcess, event: string, step?: string) =>
      w.lines.find((line) => line.event === event && (step === undefined || ('step' in line && line.step === step)));
    return { schema, store, dir, startWorker, ready, enqueue, effects, stateOf, storedSteps, path, lineOf };
  }

  const stored = (job: string, step: string, worker: string, attempt: number) => [step, { job, step, worker, attempt }];

  it('a worker killed between a step\'s side effect and its checkpoint: the step runs again on the next attempt (at least once)', async () => {
    const { startWorker, ready, enqueue, effects, stateOf, storedSteps, path, lineOf } = await setUp('jv_dur_kill_before');
    const victim = startWorker({ workerId: 'victim', holdAt: { step: 'charge', when: 'effect' } });
    await ready(victim);
    const [id] = await enqueue(TWO_STEPS);
    await until(() => expect(lineOf(victim, 'held', 'charge')).toBeDefined(), [victim], WAIT_MS);
    // Held inside the step: its side effect done, its result not stored.
    expect(await storedSteps(id!)).toEqual([]);
    victim.signal('SIGKILL');
    expect(await victim.exited).toEqual({ code: null, signal: 'SIGKILL' });

    const survivor = startWorker({ workerId: 'survivor' });
    await until(async () => expect(await stateOf(id!)).toBe('completed'), [survivor], LEASE_MS + WAIT_MS);

    expect(await effects()).toEqual([`${id} charge victim#1`, `${id} charge survivor#2`, `${id} ship survivor#2`]);
    expect(await storedSteps(id!)).toEqual([stored(id!, 'charge', 'survivor', 2), stored(id!, 'ship', 'survivor', 2)]);
    expect(await path(id!)).toEqual([
      [null, 'pending', 0, null, null],
      ['pending', 'running', 1, 'victim', null],
      ['running', 'retrying', 1, 'victim', 'lease_expired'],
      ['retrying', 'running', 2, 'survivor', null],
      ['running', 'completed', 2, 'survivor', null],
    ]);
  }, 60_000);

  it('a worker killed after a step\'s checkpoint: the step does not run again, its stored result is returned', async () => {
    const { store, startWorker, ready, enqueue, effects, stateOf, storedSteps, lineOf } = await setUp('jv_dur_kill_after');
    const victim = startWorker({ workerId: 'victim', holdAt: { step: 'charge', when: 'checkpointed' } });
    await ready(victim);
    const [id] = await enqueue(TWO_STEPS);
    await until(() => expect(lineOf(victim, 'held', 'charge')).toBeDefined(), [victim], WAIT_MS);
    expect(await storedSteps(id!)).toEqual([stored(id!, 'charge', 'victim', 1)]);
    victim.signal('SIGKILL');
    await victim.exited;

    const survivor = startWorker({ workerId: 'survivor' });
    await until(async () => expect(await stateOf(id!)).toBe('completed'), [survivor], LEASE_MS + WAIT_MS);

    expect(await effects()).toEqual([`${id} charge victim#1`, `${id} ship survivor#2`]);
    expect(await storedSteps(id!)).toEqual([stored(id!, 'charge', 'victim', 1), stored(id!, 'ship', 'survivor', 2)]);
    // The survivor's handler was given the victim's stored charge, not a charge of its own.
    expect((await store.getJob({ id: id! }))!.result).toEqual({
      worker: 'survivor',
      steps: { charge: { job: id, step: 'charge', worker: 'victim', attempt: 1 }, ship: { job: id, step: 'ship', worker: 'survivor', attempt: 2 } },
      signals: {},
    });
  }, 60_000);

  it('a zombie (frozen past its lease inside a step) cannot checkpoint: the steps stored are the next attempt\'s', async () => {
    const { dir, startWorker, ready, enqueue, effects, stateOf, storedSteps, path, lineOf } = await setUp('jv_dur_zombie');
    const zombieGate = join(dir, 'zombie-gate');
    const rescuerGate = join(dir, 'rescuer-gate');
    const zombie = startWorker({ workerId: 'zombie', holdAt: { step: 'charge', when: 'effect' }, gateFile: zombieGate });
    await ready(zombie);
    const [id] = await enqueue(TWO_STEPS);
    await until(() => expect(lineOf(zombie, 'held', 'charge')).toBeDefined(), [zombie], WAIT_MS);
    zombie.signal('SIGSTOP');
    // The zombie's fn is free to go on the moment it is woken.
    await writeFile(zombieGate, '');

    // The rescuer takes the job once the zombie's lease lapses, stores its own charge, and
    // holds the job (running, under its own lease) inside the next step.
    const rescuer = startWorker({ workerId: 'rescuer', holdAt: { step: 'ship', when: 'effect' }, gateFile: rescuerGate });
    await until(() => expect(lineOf(rescuer, 'held', 'ship')).toBeDefined(), [rescuer], LEASE_MS + WAIT_MS);
    expect(await storedSteps(id!)).toEqual([stored(id!, 'charge', 'rescuer', 2)]);

    // Woken while the rescuer holds the job: its charge's checkpoint is refused.
    zombie.signal('SIGCONT');
    await until(() => expect(lineOf(zombie, 'step-error', 'charge')).toMatchObject({ code: 'lease_lost' }), [zombie, rescuer], WAIT_MS);
    expect(await storedSteps(id!)).toEqual([stored(id!, 'charge', 'rescuer', 2)]);
    expect(await stateOf(id!)).toBe('running');

    await writeFile(rescuerGate, '');
    await until(async () => expect(await stateOf(id!)).toBe('completed'), [zombie, rescuer], WAIT_MS);
    expect(await storedSteps(id!)).toEqual([stored(id!, 'charge', 'rescuer', 2), stored(id!, 'ship', 'rescuer', 2)]);
    expect(await effects()).toEqual([`${id} charge zombie#1`, `${id} charge rescuer#2`, `${id} ship rescuer#2`]);
    expect(await path(id!)).toEqual([
      [null, 'pending', 0, null, null],
      ['pending', 'running', 1, 'zombie', null],
      ['running', 'retrying', 1, 'zombie', 'lease_expired'],
      ['retrying', 'running', 2, 'rescuer', null],
      ['running', 'completed', 2, 'rescuer', null],
    ]);
  }, 60_000);

  it('a zombie woken after its job ran elsewhere runs no further step: its lease is over by its own clock', async () => {
    const { dir, startWorker, ready, enqueue, effects, stateOf, storedSteps, lineOf } = await setUp('jv_dur_zombie_next');
    const zombieGate = join(dir, 'zombie-gate');
    const zombie = startWorker({ workerId: 'zombie', holdAt: { step: 'charge', when: 'checkpointed' }, gateFile: zombieGate });
    await ready(zombie);
    const [id] = await enqueue(TWO_STEPS);
    await until(() => expect(lineOf(zombie, 'held', 'charge')).toBeDefined(), [zombie], WAIT_MS);
    zombie.signal('SIGSTOP');
    await writeFile(zombieGate, '');

    const rescuer = startWorker({ workerId: 'rescuer' });
    await until(async () => expect(await stateOf(id!)).toBe('completed'), [rescuer], LEASE_MS + WAIT_MS);
    // Woken, its handler goes on to the next step, which must not run its fn: the lease it
    // held lapsed long ago by the zombie's own monotonic clock, whether or not its timers
    // have told the handler yet.
    zombie.signal('SIGCONT');
    await until(() => expect(lineOf(zombie, 'step-error', 'ship')).toMatchObject({ code: 'lease_lost' }), [zombie, rescuer], WAIT_MS);
    expect(await effects()).toEqual([`${id} charge zombie#1`, `${id} ship rescuer#2`]);
    expect(await storedSteps(id!)).toEqual([stored(id!, 'charge', 'zombie', 1), stored(id!, 'ship', 'rescuer', 2)]);
  }, 60_000);

  it('two workers racing to wake jobs (sleeps that come due, signals sent at once): each runs once per wake, never twice at once', async () => {
    const SLEEPERS = 10;
    const WAITERS = 10;
    const { store, startWorker, ready, enqueue, effects, path } = await setUp('jv_dur_race');
    const two = [startWorker({ workerId: 'w1' }), startWorker({ workerId: 'w2' })];
    await ready(...two);
    const sleepers = await enqueue([{ step: 'before' }, { sleep: 'nap', ms: 500 }, { step: 'after' }], SLEEPERS);
    const waiters = await enqueue([{ step: 'before' }, { wait: 'go' }, { step: 'after' }], WAITERS);
    const all = [...sleepers, ...waiters];
    const states = async () => Promise.all(all.map(async (id) => (await store.getJob({ id }))!.state));
    // Every waiter waits before the signals go (a signal to a running one would be queued).
    await until(async () => expect(new Set((await Promise.all(waiters.map(async (id) => (await store.getJob({ id }))!.state))))).toEqual(new Set(['sleeping'])), two, WAIT_MS);
    // Both workers listen; every signal wakes its job in one burst.
    expect(await Promise.all(waiters.map((id) => sendSignal(store, id, 'go', { id })))).toEqual(waiters.map(() => ({ delivered: 'woke', state: 'pending' })));
    await until(async () => expect(new Set(await states())).toEqual(new Set(['completed'])), two, WAIT_MS);

    // Runs: two per job (before the sleep or wait, and after it), attempts 1 and 2, none
    // overlapping another run of its job.
    const executions = executionsOf(two);
    expect(executions.filter((e) => e.end === undefined)).toEqual([]);
    expect(overlapping(executions, two)).toEqual([]);
    for (const id of all) expect(executions.filter((e) => e.job === id).map((e) => e.attempt).sort()).toEqual([1, 2]);
    // Side effects: each step once.
    const done = (await effects()).map((line) => line.replace(/ w[12]#/, ' #'));
    expect(done.sort()).toEqual(all.flatMap((id) => [`${id} before #1`, `${id} after #2`]).sort());
    for (const id of sleepers) {
      expect((await path(id)).map(([from, to, attempt, , code]) => [from, to, attempt, code])).toEqual([
        [null, 'pending', 0, null],
        ['pending', 'running', 1, null],
        ['running', 'sleeping', 1, 'sleep'],
        ['sleeping', 'running', 2, null],
        ['running', 'completed', 2, null],
      ]);
    }
    for (const id of waiters) {
      expect((await path(id)).map(([from, to, attempt, , code]) => [from, to, attempt, code])).toEqual([
        [null, 'pending', 0, null],
        ['pending', 'running', 1, null],
        ['running', 'sleeping', 1, 'signal_wait'],
        ['sleeping', 'pending', 1, 'signal'],
        ['pending', 'running', 2, null],
        ['running', 'completed', 2, null],
      ]);
      expect((await store.getJob({ id }))!.result).toMatchObject({ signals: { go: { received: true, payload: { id } } } });
    }
  }, 60_000);
});
