import { describe, expect, it } from 'vitest';
import { memoryStore, type MemoryStore } from '../../src/adapters/memory/index.js';
import { defineQueue, PermanentJobError, SkipJobError, type Job } from '../../src/index.js';
import type { DeadJobAlert } from '../../src/supervisor/alerts.js';
import type { ClaimPlanner } from '../../src/supervisor/claim-planner.js';
import { createSupervisor } from '../../src/supervisor/supervisor.js';
import { advance, createTestClock, deferred, settle, until } from '../support/sim.js';
import { stopSupervisorsAfterEach } from './harness.js';

const track = stopSupervisorsAfterEach();

function setup(queueOptions: Parameters<typeof defineQueue>[1], supervisorOptions: Record<string, unknown> = {}) {
  const clock = createTestClock();
  const store = memoryStore({ clock });
  const queue = defineQueue('work', queueOptions);
  const alerts: DeadJobAlert[] = [];
  const supervisor = createSupervisor({
    store,
    queues: [queue],
    clock,
    workerId: 'w1',
    onDead: (alert) => {
      alerts.push(alert);
    },
    ...supervisorOptions,
  });
  track(supervisor, clock);
  return { clock, store, queue, supervisor, alerts };
}

async function states(store: MemoryStore, id: string) {
  return (await store.getJobEvents({ id })).map((e) => e.toState);
}

describe('supervisor: running jobs end to end', () => {
  it('completes a job and stores its result and history', async () => {
    const { store, queue, supervisor } = setup({
      handlers: { add: async ({ payload }: Job<{ a: number; b: number }>) => ({ sum: payload.a + payload.b }) },
    });
    const { job } = await queue.enqueue(store, 'add', { a: 2, b: 3 });
    expect(await supervisor.drain()).toBe(1);
    const row = await store.getJob({ id: job.id });
    expect(row).toMatchObject({ state: 'completed', attempt: 1, result: { sum: 5 }, error: null, leaseToken: null });
    expect(row?.finishedAt).toBeInstanceOf(Date);
    expect(await states(store, job.id)).toEqual(['pending', 'running', 'completed']);
    expect(supervisor.counters.getSnapshot().context.queues.work).toMatchObject({ completed: 1, running: 0, claimed: 1 });
  });

  it('retries a failing job with growing backoff, then goes dead after maxAttempts with one alert', async () => {
    const { clock, store, queue, supervisor, alerts } = setup({
      maxAttempts: 3,
      backoff: (attempt) => 1_000 * 10 ** (attempt - 1),
      handlers: { flaky: async () => { throw new Error('upstream 503'); } },
    });
    const { job } = await queue.enqueue(store, 'flaky', {});
    const t0 = clock.now();
    await supervisor.drain();
    let row = await store.getJob({ id: job.id });
    expect(row).toMatchObject({ state: 'retrying', attempt: 1, error: { code: 'handler_error', message: 'upstream 503' } });
    expect(row!.error!.stack).toContain('upstream 503');
    expect(row!.runAt.getTime() - t0).toBe(1_000);

    // Not due yet: drain runs nothing.
    expect(await supervisor.drain()).toBe(0);
    await advance(clock, 1_000);
    await supervisor.drain();
    row = await store.getJob({ id: job.id });
    expect(row).toMatchObject({ state: 'retrying', attempt: 2 });
    expect(row!.runAt.getTime() - clock.now()).toBe(10_000);

    await advance(clock, 10_000);
    await supervisor.drain();
    row = await store.getJob({ id: job.id });
    expect(row).toMatchObject({ state: 'dead', attempt: 3 });
    expect(await states(store, job.id)).toEqual([
      'pending', 'running', 'retrying', 'running', 'retrying', 'running', 'dead',
    ]);
    await until('the dead job alerted', () => alerts.length > 0);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ kind: 'job_dead', dedupeKey: 'job_dead:work:flaky:', job: { id: job.id } });
  });

  it('sends a PermanentJobError to dead on the first attempt', async () => {
    const { store, queue, supervisor, alerts } = setup({
      maxAttempts: 5,
      alertKey: (job) => (job.payload as { placeId: string }).placeId,
      handlers: { describe: async () => { throw new PermanentJobError('place is gone'); } },
    });
    const { job } = await queue.enqueue(store, 'describe', { placeId: 'p1' });
    await supervisor.drain();
    expect(await store.getJob({ id: job.id })).toMatchObject({
      state: 'dead', attempt: 1, error: { code: 'permanent_error', message: 'place is gone' },
    });
    await until('the dead job alerted', () => alerts.length > 0);
    expect(alerts.map((a) => a.dedupeKey)).toEqual(['job_dead:work:describe:p1']);
  });

  it('throttles alerts per dedupe key and counts what it held back', async () => {
    const { clock, store, queue, supervisor, alerts } = setup({
      maxAttempts: 1,
      alertKey: (job) => (job.payload as { placeId: string }).placeId,
      handlers: { x: async () => { throw new Error('boom'); } },
    }, { alertThrottleMs: 60_000 });
    await queue.enqueueMany(store, [
      { kind: 'x', payload: { placeId: 'p1' } },
      { kind: 'x', payload: { placeId: 'p1' } },
      { kind: 'x', payload: { placeId: 'p2' } },
    ]);
    await supervisor.drain();
    await until('two alerts', () => alerts.length >= 2);
    expect(alerts.map((a) => a.dedupeKey).sort()).toEqual(['job_dead:work:x:p1', 'job_dead:work:x:p2']);
    await advance(clock, 60_000, 60_000);
    await queue.enqueue(store, 'x', { placeId: 'p1' });
    await supervisor.drain();
    await until('a third alert', () => alerts.length >= 3);
    expect(alerts).toHaveLength(3);
    expect(alerts[2]).toMatchObject({ dedupeKey: 'job_dead:work:x:p1', suppressed: 1 });
  });

  it('skips a job whose kind has no handler with code unknown_kind', async () => {
    const { store, supervisor } = setup({ handlers: { known: async () => 1 } });
    const [result] = await store.enqueueJobs({ jobs: [{ queue: 'work', kind: 'mystery', payload: {}, maxAttempts: 3 }] });
    await supervisor.drain();
    expect(await store.getJob({ id: result!.job.id })).toMatchObject({ state: 'skipped', error: { code: 'unknown_kind' } });
    expect(await states(store, result!.job.id)).toEqual(['pending', 'running', 'skipped']);
  });

  it('skips a job whose handler throws SkipJobError', async () => {
    const { store, queue, supervisor } = setup({ handlers: { maybe: async () => { throw new SkipJobError('nothing to do'); } } });
    const { job } = await queue.enqueue(store, 'maybe', {});
    await supervisor.drain();
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'skipped', error: { code: 'skipped', message: 'nothing to do' } });
  });

  it('deduplicates by unique key while the job is live', async () => {
    const { store, queue, supervisor } = setup({ handlers: { collect: async () => 'ok' } });
    const first = await queue.enqueue(store, 'collect', { n: 1 }, { uniqueKey: 'collect:p1' });
    const second = await queue.enqueue(store, 'collect', { n: 2 }, { uniqueKey: 'collect:p1' });
    expect(second).toMatchObject({ created: false, job: { id: first.job.id, payload: { n: 1 } } });
    await supervisor.drain();
    const third = await queue.enqueue(store, 'collect', { n: 3 }, { uniqueKey: 'collect:p1' });
    expect(third.created).toBe(true);
  });

  it('runs delayed jobs when due and higher priority first', async () => {
    const order: string[] = [];
    const { clock, store, queue, supervisor } = setup({ handlers: { t: async ({ payload }: Job<string>) => { order.push(payload); } } });
    await queue.enqueue(store, 't', 'later', { runAt: new Date(clock.now() + 5_000) });
    await queue.enqueue(store, 't', 'low');
    await queue.enqueue(store, 't', 'high', { priority: 10 });
    await supervisor.drain();
    expect(order).toEqual(['high', 'low']);
    await advance(clock, 5_000);
    await supervisor.drain();
    expect(order).toEqual(['high', 'low', 'later']);
  });
});

describe('supervisor: drain', () => {
  it('runs what an attempt made due while a claim was on its way (the claim read the store before the write)', async () => {
    const clock = createTestClock();
    const inner = memoryStore({ clock });
    // The first claim sent after the handler ended reads the store before the attempt's
    // outcome is written (a retry due at once), and answers only after that write: the
    // order two connections can give on a real database.
    let handlerEnded = false;
    let raced = false;
    const raceRead = deferred<void>();
    const written = deferred<void>();
    const store = new Proxy(inner, {
      get(target, prop, receiver) {
        if (prop === 'claimJobs') {
          return async (params: Parameters<MemoryStore['claimJobs']>[0]) => {
            const racing = handlerEnded && !raced;
            if (racing) raced = true;
            const jobs = await target.claimJobs(params);
            if (racing) {
              raceRead.resolve();
              await written.promise;
            }
            return jobs;
          };
        }
        if (prop === 'setStatesIfRunning') {
          return async (params: Parameters<MemoryStore['setStatesIfRunning']>[0]) => {
            await raceRead.promise;
            const answer = await target.setStatesIfRunning(params);
            written.resolve();
            return answer;
          };
        }
        const value = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const attempts: number[] = [];
    const queue = defineQueue('work', {
      maxAttempts: 2,
      backoff: () => 0,
      handlers: {
        once: async (job: Job) => {
          attempts.push(job.attempt);
          handlerEnded = true;
          if (job.attempt === 1) throw new Error('once');
        },
      },
    });
    const supervisor = createSupervisor({ store, queues: [queue], clock, workerId: 'w1' });
    track(supervisor, clock);
    const { job } = await queue.enqueue(inner, 'once', {});
    expect(await supervisor.drain()).toBe(2);
    expect(attempts).toEqual([1, 2]);
    expect(await inner.getJob({ id: job.id })).toMatchObject({ state: 'completed', attempt: 2 });
  });
});

describe('supervisor: deadlines, leases and zombies', () => {
  it('aborts a hung handler at the deadline, frees the slot, and never writes its late result', async () => {
    const hang = deferred<string>();
    let started = false;
    let aborted: unknown;
    const { clock, store, queue, supervisor } = setup({
      deadlineMs: 5_000,
      maxAttempts: 2,
      backoff: () => 0,
      handlers: {
        hang: async ({ signal, attempt }: Job) => {
          if (attempt > 1) return 'second attempt';
          started = true;
          signal.addEventListener('abort', () => { aborted = signal.reason; });
          return hang.promise; // ignores its signal on purpose
        },
      },
    });
    const { job } = await queue.enqueue(store, 'hang', {});
    const drained = supervisor.drain();
    await until('the handler runs', () => started);
    expect((await store.getJob({ id: job.id }))?.state).toBe('running');
    await advance(clock, 5_000);
    expect(aborted).toMatchObject({ name: 'AbortError' });
    // The slot was freed: with backoff 0 the retry ran in the same drain and completed.
    expect(await drained).toBe(2);
    hang.resolve('late result');
    // Nothing to wait for: settle() gives the late result the turns it would take to do harm.
    await settle();
    const row = await store.getJob({ id: job.id });
    expect(row).toMatchObject({ state: 'completed', attempt: 2, result: 'second attempt' });
    const events = await store.getJobEvents({ id: job.id });
    expect(events[2]).toMatchObject({ toState: 'retrying', error: { code: 'deadline_exceeded' } });
    expect(events[2]!.error!.message).toContain('JobDeadlineExceeded');
  });

  it('goes dead when the deadline passes on the last attempt', async () => {
    const { clock, store, queue, supervisor, alerts } = setup({
      deadlineMs: 1_000,
      maxAttempts: 1,
      handlers: { hang: () => { started = true; return new Promise(() => {}); } },
    });
    let started = false;
    const { job } = await queue.enqueue(store, 'hang', {});
    const drained = supervisor.drain();
    await until('the handler runs', () => started);
    await advance(clock, 1_000);
    await drained;
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'dead', error: { code: 'deadline_exceeded' } });
    await until('the dead job alerted', () => alerts.length > 0);
    expect(alerts).toHaveLength(1);
  });

  it('keeps a long job alive past its lease with heartbeats', async () => {
    const done = deferred<string>();
    const { clock, store, queue, supervisor } = setup({
      leaseMs: 3_000,
      deadlineMs: 60_000,
      handlers: { long: () => { started = true; return done.promise; } },
    });
    let started = false;
    const { job } = await queue.enqueue(store, 'long', {});
    const drained = supervisor.drain();
    await until('the handler runs', () => started);
    const firstExpiry = (await store.getJob({ id: job.id }))!.leaseExpiresAt!.getTime();
    await advance(clock, 10_000, 500);
    const row = await store.getJob({ id: job.id });
    expect(row!.state).toBe('running');
    expect(row!.leaseExpiresAt!.getTime()).toBeGreaterThan(firstExpiry + 6_000);
    expect(row!.leaseExpiresAt!.getTime()).toBeGreaterThan(clock.now());
    // Another worker's reaper finds nothing to rescue.
    expect(await store.rescueExpiredJobs()).toEqual([]);
    done.resolve('finished');
    await drained;
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'completed', result: 'finished' });
  });

  it('rescues a job whose worker is gone, then runs it here', async () => {
    const { clock, store, queue, supervisor } = setup({ leaseMs: 3_000, handlers: { j: async () => 'rescued and done' } });
    const { job } = await queue.enqueue(store, 'j', {});
    // A worker that claimed the job and died.
    await store.claimJobs({ workerId: 'dead-worker', leaseMs: 3_000, queues: [{ queue: 'work', limit: 1 }] });
    expect(await supervisor.drain()).toBe(0);
    await advance(clock, 3_001, 3_001);
    expect(await supervisor.drain()).toBe(1);
    const row = await store.getJob({ id: job.id });
    expect(row).toMatchObject({ state: 'completed', attempt: 2, workerId: 'w1' });
    const events = await store.getJobEvents({ id: job.id });
    expect(events.map((e) => [e.toState, e.workerId])).toEqual([
      ['pending', null], ['running', 'dead-worker'], ['retrying', 'dead-worker'], ['running', 'w1'], ['completed', 'w1'],
    ]);
  });

  it('rejects a zombie: a paused worker whose lease was taken writes nothing, and ends lost', async () => {
    const release = deferred<string>();
    // The worker's own clock stands still (the process is paused, no timer of its fires),
    // while the store's time moves on past the lease.
    const workerClock = createTestClock();
    const storeClock = createTestClock();
    const store = memoryStore({ clock: storeClock });
    let started = false;
    const queue = defineQueue('work', { leaseMs: 3_000, deadlineMs: null, handlers: { j: () => { started = true; return release.promise; } } });
    const supervisor = createSupervisor({ store, queues: [queue], clock: workerClock, workerId: 'w1' });
    track(supervisor, workerClock);
    const { job } = await queue.enqueue(store, 'j', {});
    const drained = supervisor.drain();
    await until('the handler runs', () => started);
    storeClock.increment(3_001);
    expect(await store.rescueExpiredJobs()).toHaveLength(1);
    const [reclaimed] = await store.claimJobs({ workerId: 'w2', leaseMs: 3_000, queues: [{ queue: 'work', limit: 1 }] });
    expect(reclaimed?.id).toBe(job.id);
    release.resolve('zombie result');
    await drained;
    const row = await store.getJob({ id: job.id });
    expect(row).toMatchObject({ state: 'running', workerId: 'w2', leaseToken: reclaimed!.leaseToken, result: null });
    expect((await store.getJobEvents({ id: job.id })).map((e) => e.toState)).toEqual(['pending', 'running', 'retrying', 'running']);
    expect(supervisor.counters.getSnapshot().context.queues.work!.lost).toBe(1);
  });

  it('claims a job again while its own earlier attempt still waits for its write: that one counts as lost, the new one runs', async () => {
    // The worker's clock stands still while the store's moves past the lease (a paused process).
    const workerClock = createTestClock();
    const storeClock = createTestClock();
    const store = memoryStore({ clock: storeClock });
    const answers: Array<ReturnType<typeof deferred<string>>> = [];
    const queue = defineQueue('work', {
      concurrency: 1,
      leaseMs: 3_000,
      deadlineMs: null,
      handlers: { j: () => { answers.push(deferred<string>()); return answers.at(-1)!.promise; } },
    });
    const supervisor = createSupervisor({ store, queues: [queue], clock: workerClock, workerId: 'w1', pollIntervalMs: 100 });
    track(supervisor, workerClock);
    const { job } = await queue.enqueue(store, 'j', {});
    const write = deferred<void>();
    let writing = false;
    const setStates = store.setStatesIfRunning.bind(store);
    store.setStatesIfRunning = async (params) => {
      writing = true;
      await write.promise;
      return setStates(params);
    };
    await supervisor.start();
    await until('the handler runs', () => answers.length === 1);
    answers[0]!.resolve('first');
    await until('the outcome is being written', () => writing);
    // The first attempt's write is on its way when the reaper gives the job back.
    storeClock.increment(3_001);
    expect(await store.rescueExpiredJobs()).toHaveLength(1);
    await advance(workerClock, 100);
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'running', attempt: 2, workerId: 'w1' });
    write.resolve();
    answers[1]!.resolve('second');
    await advance(workerClock, 100);
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'completed', attempt: 2, result: 'second' });
    expect(supervisor.counters.getSnapshot().context.queues.work).toMatchObject({ claimed: 2, completed: 1, lost: 1, running: 0 });
    // Its slot is free again: the next job runs.
    const next = await queue.enqueue(store, 'j', {});
    await advance(workerClock, 100);
    answers[2]!.resolve('third');
    await advance(workerClock, 100);
    expect(await store.getJob({ id: next.job.id })).toMatchObject({ state: 'completed', result: 'third' });
  });

  it('claims a job again while its own earlier attempt still runs: the old one frees no slot of the new one', async () => {
    const workerClock = createTestClock();
    const storeClock = createTestClock();
    const store = memoryStore({ clock: storeClock });
    const answers: Array<ReturnType<typeof deferred<string>>> = [];
    const queue = defineQueue('work', {
      concurrency: 2,
      leaseMs: 3_000,
      heartbeatMs: 1_000,
      deadlineMs: null,
      handlers: { j: () => { answers.push(deferred<string>()); return answers.at(-1)!.promise; } },
    });
    const supervisor = createSupervisor({ store, queues: [queue], clock: workerClock, workerId: 'w1', pollIntervalMs: 100 });
    track(supervisor, workerClock);
    const { job } = await queue.enqueue(store, 'j', {});
    await supervisor.start();
    await until('the handler runs', () => answers.length === 1);
    storeClock.increment(3_001);
    expect(await store.rescueExpiredJobs()).toHaveLength(1);
    await advance(workerClock, 100);
    expect(answers).toHaveLength(2);
    // The first attempt's next heartbeat is refused: it ends lost and frees its own slot.
    await advance(workerClock, 1_000, 100);
    await queue.enqueueMany(store, [{ kind: 'j', payload: {} }, { kind: 'j', payload: {} }]);
    await advance(workerClock, 200, 100);
    // The second attempt still holds its slot: one more job runs beside it, not two.
    expect(answers).toHaveLength(3);
    for (const answer of answers) answer.resolve('done');
    await advance(workerClock, 500, 100);
    answers.at(-1)!.resolve('done');
    await advance(workerClock, 500, 100);
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'completed', attempt: 2 });
    expect(supervisor.counters.getSnapshot().context.queues.work).toMatchObject({ claimed: 4, completed: 3, lost: 1, running: 0 });
  });

  it('aborts its own handler when the lease lapsed without a renewal (lost)', async () => {
    let signal: AbortSignal | undefined;
    const { clock, store, queue, supervisor } = setup({
      leaseMs: 3_000,
      heartbeatMs: 1_000,
      deadlineMs: null,
      handlers: { j: (job: Job) => { signal = job.signal; return new Promise(() => {}); } },
    });
    await queue.enqueue(store, 'j', {});
    store.renewLeases = () => Promise.reject(new Error('connection reset'));
    const drained = supervisor.drain();
    await until('the handler runs', () => signal !== undefined);
    await advance(clock, 3_000, 1_000);
    await drained;
    expect(signal?.aborted).toBe(true);
    expect(supervisor.counters.getSnapshot().context.queues.work!.lost).toBe(1);
  });
});

describe('supervisor: limits', () => {
  function tracker() {
    let now = 0;
    let peak = 0;
    return {
      enter() { now += 1; peak = Math.max(peak, now); },
      exit() { now -= 1; },
      get peak() { return peak; },
    };
  }

  it('never exceeds per-queue, global and gate limits (measured)', async () => {
    const clock = createTestClock();
    const store = memoryStore({ clock });
    const perQueue = { a: tracker(), b: tracker(), c: tracker() };
    const gate = tracker();
    const all = tracker();
    const gates = new Set(['a', 'b']);
    const handlerFor = (name: 'a' | 'b' | 'c') => async () => {
      perQueue[name].enter(); all.enter();
      if (gates.has(name)) gate.enter();
      await settle(1);
      perQueue[name].exit(); all.exit();
      if (gates.has(name)) gate.exit();
    };
    const a = defineQueue('a', { concurrency: 3, gate: 'gpu', handlers: { j: handlerFor('a') } });
    const b = defineQueue('b', { concurrency: 3, gate: 'gpu', handlers: { j: handlerFor('b') } });
    const c = defineQueue('c', { concurrency: 4, handlers: { j: handlerFor('c') } });
    const supervisor = createSupervisor({ store, clock, queues: [a, b, c], gates: { gpu: 2 }, concurrency: 5 });
    track(supervisor, clock);
    for (const q of [a, b, c]) await q.enqueueMany(store, Array.from({ length: 30 }, () => ({ kind: 'j' as const, payload: {} })));
    expect(await supervisor.drain()).toBe(90);
    expect(gate.peak).toBe(2);
    expect(all.peak).toBe(5);
    expect(perQueue.c.peak).toBeLessThanOrEqual(4);
    expect(perQueue.a.peak).toBeLessThanOrEqual(2);
    expect(perQueue.b.peak).toBeLessThanOrEqual(2);
    expect((await store.countJobs()).every((c) => c.state === 'completed')).toBe(true);
  });

  it('gives a gate slot back when a job the planner started ends before the gate admits it', async () => {
    const clock = createTestClock();
    const store = memoryStore({ clock });
    const ran: string[] = [];
    const queue = defineQueue('g', { concurrency: 1, gate: 'gpu', handlers: { j: async ({ payload }: Job<{ n: string }>) => void ran.push(payload.n) } });
    const supervisor = createSupervisor({ store, clock, queues: [queue], gates: { gpu: 1 }, workerId: 'w1' });
    track(supervisor, clock);
    // The gate's limiter admits a job a few microtasks after the planner starts it (once the
    // job before has left it). Held busy here by a task the planner does not count, it admits
    // only when the test says: by then the job it was to admit has been cancelled.
    const gate = (supervisor as unknown as { planner: ClaimPlanner }).planner.gates.get('gpu')!.limit;
    const busy = deferred<void>();
    void gate(() => busy.promise);
    const { job: b } = await queue.enqueue(store, 'j', { n: 'b' });
    await supervisor.start();
    await until('b waits in the gate', () => gate.pendingCount === 1);
    expect(await supervisor.cancel(b.id)).toBe(true);
    await until('b cancelled', async () => (await store.getJob({ id: b.id }))?.state === 'cancelled');
    busy.resolve();
    const { job: c } = await queue.enqueue(store, 'j', { n: 'c' });
    await until('c completed', async () => {
      await advance(clock, 100);
      return (await store.getJob({ id: c.id }))?.state === 'completed';
    }, 200);
    expect(ran).toEqual(['c']);
    expect(gate.activeCount).toBe(0);
  });

  it('claims only as many jobs as it has free slots', async () => {
    const { store, queue, supervisor } = setup({ concurrency: 4, handlers: { j: async () => null } });
    const sizes: number[] = [];
    const claim = store.claimJobs.bind(store);
    store.claimJobs = async (params) => {
      const jobs = await claim(params);
      sizes.push(params.queues.reduce((n, q) => n + q.limit, 0));
      return jobs;
    };
    await queue.enqueueMany(store, Array.from({ length: 10 }, () => ({ kind: 'j' as const, payload: {} })));
    await supervisor.drain();
    expect(Math.max(...sizes)).toBe(4);
  });
});

describe('supervisor: lifecycle', () => {
  it('keeps running while the store throws, and resumes when it answers again', async () => {
    const { clock, store, queue, supervisor } = setup({ handlers: { j: async () => 'ok' } }, { pollIntervalMs: 500, errorBackoffMs: 1_000 });
    const claim = store.claimJobs.bind(store);
    let failing = true;
    let calls = 0;
    store.claimJobs = async (params) => {
      calls += 1;
      if (failing) throw new Error('ECONNREFUSED');
      return claim(params);
    };
    await supervisor.start();
    await until('the first claim', () => calls > 0);
    await advance(clock, 20_000, 250);
    expect(calls).toBeGreaterThan(2);
    // Backoff doubles: far fewer calls than one per poll.
    expect(calls).toBeLessThan(10);
    expect(supervisor.counters.getSnapshot().context.lastError?.message).toBe('ECONNREFUSED');
    const { job } = await queue.enqueue(store, 'j', {});
    failing = false;
    await advance(clock, 20_000, 250);
    expect((await store.getJob({ id: job.id }))?.state).toBe('completed');
  });

  it('wakes on the store notification without waiting for the poll', async () => {
    const { store, queue, supervisor } = setup({ handlers: { j: async () => 'ok' } }, { pollIntervalMs: 3_600_000 });
    const claim = store.claimJobs.bind(store);
    let answered = 0;
    store.claimJobs = async (params) => {
      const jobs = await claim(params);
      answered += 1;
      return jobs;
    };
    await supervisor.start();
    await until('the first claim came back', () => answered > 0);
    const { job } = await queue.enqueue(store, 'j', {});
    // The clock stands still: only the notification can bring the job in.
    await until('the job completed', async () => (await store.getJob({ id: job.id }))?.state === 'completed');
  });

  it('stop() lets running jobs finish within the grace period', async () => {
    const finish = deferred<string>();
    let started = false;
    const { clock, store, queue, supervisor } = setup({ handlers: { j: () => { started = true; return finish.promise; } } });
    const { job } = await queue.enqueue(store, 'j', {});
    await supervisor.start();
    await until('the handler runs', () => started);
    const stopped = supervisor.stop({ graceMs: 10_000 });
    expect(supervisor.stop()).toBe(stopped);
    await advance(clock, 2_000);
    finish.resolve('done in time');
    await stopped;
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'completed', result: 'done in time' });
  });

  it('stop() aborts what runs past the grace period and releases it for retry: nothing lost', async () => {
    let aborted = 0;
    let started = 0;
    const { clock, store, queue, supervisor } = setup({
      concurrency: 3,
      maxAttempts: 1,
      handlers: {
        j: ({ signal }: Job) => {
          started += 1;
          return new Promise((_, reject) => signal.addEventListener('abort', () => { aborted += 1; reject(new Error('aborted')); }));
        },
      },
    });
    await queue.enqueueMany(store, Array.from({ length: 5 }, () => ({ kind: 'j' as const, payload: {} })));
    await supervisor.start();
    await until('three handlers run', () => started === 3);
    const stopped = supervisor.stop({ graceMs: 5_000 });
    await advance(clock, 5_000);
    await stopped;
    expect(aborted).toBe(3);
    const counts = Object.fromEntries((await store.countJobs()).map((c) => [c.state, c.count]));
    expect(counts).toEqual({ retrying: 3, pending: 2 });
    const released = (await store.listJobs({ state: 'retrying' }))[0]!;
    expect(released.error).toMatchObject({ code: 'worker_shutdown' });
    // Released rows are due now and run again on the next supervisor, even with maxAttempts 1.
    const next = createSupervisor({ store, queues: [defineQueue('work', { concurrency: 5, maxAttempts: 1, handlers: { j: async () => 'ok' } })], clock });
    expect(await next.drain()).toBe(5);
  });

  it('stop() gives back, never starting them, the jobs of a claim that was still in flight', async () => {
    let started = 0;
    const { clock, store, queue, supervisor } = setup({
      handlers: { j: () => { started += 1; return new Promise(() => {}); } },
    });
    const { job } = await queue.enqueue(store, 'j', {});
    const slowStore = deferred<void>();
    let claiming = false;
    const claim = store.claimJobs.bind(store);
    store.claimJobs = async (params) => {
      claiming = true;
      await slowStore.promise;
      return claim(params);
    };
    await supervisor.start();
    await until('a claim is in flight', () => claiming);
    let stopped = false;
    void supervisor.stop({ graceMs: 1_000 }).then(() => { stopped = true; });
    await advance(clock, 2_000);
    slowStore.resolve();
    await advance(clock, 1_000);
    expect(started).toBe(0);
    expect(stopped).toBe(true);
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'retrying', error: { code: 'worker_shutdown' } });
  });

  it('stop() before start resolves at once, and start() after stop does nothing', async () => {
    const { store, queue, supervisor } = setup({ handlers: { j: async () => 'ok' } });
    await supervisor.stop();
    await queue.enqueue(store, 'j', {});
    await supervisor.start();
    // Nothing to wait for: settle() gives a wrongly started supervisor the turns to claim.
    await settle();
    expect((await store.countJobs())).toEqual([{ queue: 'work', state: 'pending', count: 1 }]);
  });

  it('stop() while start() waits for its subscription: the start goes no further, and the subscription is ended', async () => {
    const { store, queue, supervisor } = setup({ handlers: { j: async () => 'ok' } });
    const subscribed = deferred<void>();
    let unsubscribed = 0;
    const subscribe = store.subscribe.bind(store);
    store.subscribe = async (...args: Parameters<typeof store.subscribe>) => {
      const unsubscribe = await subscribe(...args);
      await subscribed.promise;
      return async () => {
        unsubscribed += 1;
        await unsubscribe();
      };
    };
    await queue.enqueue(store, 'j', {});
    const starting = supervisor.start();
    await settle();
    await supervisor.stop();
    subscribed.resolve();
    await starting;
    await settle();
    expect(unsubscribed).toBe(1);
    expect(await store.listWorkers()).toEqual([]);
    expect(supervisor.actor.getSnapshot().value).toBe('stopped');
    expect(await store.countJobs()).toEqual([{ queue: 'work', state: 'pending', count: 1 }]);
  });

  it('cancel() aborts a running job held here; it ends cancelled', async () => {
    let signal: AbortSignal | undefined;
    const { store, queue, supervisor } = setup({ handlers: { j: (job: Job) => { signal = job.signal; return new Promise(() => {}); } } });
    const { job } = await queue.enqueue(store, 'j', {});
    const drained = supervisor.drain();
    await until('the handler runs', () => signal !== undefined);
    expect(await supervisor.cancel(job.id)).toBe(true);
    await drained;
    expect(signal?.aborted).toBe(true);
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'cancelled', error: { code: 'cancelled' } });
  });

  it('cancel() of a pending job cancels it in the store', async () => {
    const { store, queue, supervisor } = setup({ handlers: { j: async () => 'ok' } });
    const { job } = await queue.enqueue(store, 'j', {}, { runAt: new Date(Date.UTC(2030, 0, 1)) });
    expect(await supervisor.cancel(job.id)).toBe(true);
    expect((await store.getJob({ id: job.id }))?.state).toBe('cancelled');
  });
});

describe('supervisor: its inspect option', () => {
  it('hears every job actor from its start to its final state, each actor its own', async () => {
    const events: Array<{ type: string; actorRef: unknown; snapshot?: { status: string; value: unknown; machine?: { id: string } } }> = [];
    const { store, queue, supervisor } = setup(
      { handlers: { ok: async () => 'ok', boom: async () => { throw new PermanentJobError('no'); } } },
      { inspect: (event: (typeof events)[number]) => events.push(event) },
    );
    await queue.enqueueMany(store, [{ kind: 'ok', payload: {} }, { kind: 'ok', payload: {} }, { kind: 'boom', payload: {} }]);
    expect(await supervisor.drain()).toBe(3);
    const jobSnapshots = events.filter((e) => e.type === '@xstate.snapshot' && e.snapshot?.machine?.id === 'job');
    const actors = new Set(jobSnapshots.map((e) => e.actorRef));
    expect(actors.size).toBe(3);
    const finals = [...actors].map((actor) => jobSnapshots.filter((e) => e.actorRef === actor).at(-1)!.snapshot);
    expect(finals.map((s) => [s!.status, s!.value]).sort()).toEqual([['done', 'completed'], ['done', 'completed'], ['done', 'dead']]);
    // Each was announced as it was made.
    expect(events.filter((e) => e.type === '@xstate.actor' && actors.has(e.actorRef))).toHaveLength(3);
  });
});

describe('supervisor: an attempt of its own whose job it claims again', () => {
  it('is aborted with lease_lost at once (the store gave the row back first), not left running beside the next attempt', async () => {
    const clock = createTestClock();
    // The store's clock steps past the lease (a database host's clock stepping forward):
    // it judges the lease expired before the supervisor's next renewal.
    let storeAhead = 0;
    const store = memoryStore({ clock: { now: () => clock.now() + storeAhead } });
    const started: number[] = [];
    const aborted: string[] = [];
    const queue = defineQueue('work', {
      concurrency: 2, leaseMs: 3_000, deadlineMs: 60_000, maxAttempts: 3, backoff: () => 0,
      handlers: {
        slow: (job: Job) => new Promise((_, reject) => {
          started.push(job.attempt);
          job.signal.addEventListener('abort', () => {
            aborted.push(`attempt ${job.attempt}: ${(job.signal.reason as { code: string }).code}`);
            reject(job.signal.reason);
          });
        }),
      },
    });
    // Polling often: the rescued job is claimed again long before attempt 1's next renewal.
    const supervisor = createSupervisor({ store, queues: [queue], clock, workerId: 'w1', pollIntervalMs: 50 });
    track(supervisor, clock);
    await supervisor.start();
    const { job } = await queue.enqueue(store, 'slow', {});
    await until('attempt 1 runs', () => started.length === 1);
    storeAhead = 10_000;
    expect(await supervisor.reap()).toBe(1);
    const reapedAt = clock.now();
    await until('attempt 2 runs', async () => {
      if (started.length < 2) await advance(clock, 10);
      return started.length === 2;
    }, 50);
    await settle();
    expect(clock.now() - reapedAt).toBeLessThan(500);
    expect(aborted).toEqual(['attempt 1: lease_lost']);
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'running', attempt: 2 });
  });
});
