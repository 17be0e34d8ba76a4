import { describe, expect, it } from 'vitest';
import { InvalidOptionError, JobAbortedError, JobEndedError, JobNotFoundError, sendSignal, type Job } from '../../src/index.js';
import { advance, deferred, settle, until } from '../support/sim.js';
import { pathOf, supervisorHarness } from './harness.js';

const { setup } = supervisorHarness();

describe('supervisor: durable steps', () => {
  it('a step stored by a failed attempt is not run again on the retry; the code between steps is', async () => {
    const calls = { charge: 0, email: 0, body: 0 };
    const { clock, store, queue, supervisor } = setup({
      maxAttempts: 2,
      backoff: () => 1_000,
      handlers: {
        order: async (job: Job) => {
          calls.body += 1;
          const charge = await job.step('charge', () => ({ chargeId: `ch_${++calls.charge}` }));
          if (job.attempt === 1) throw new Error('mail server down');
          await job.step('email', () => void (calls.email += 1));
          return charge;
        },
      },
    });
    const { job } = await queue.enqueue(store, 'order', {});
    await supervisor.drain();
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'retrying', steps: [{ kind: 'step', name: 'charge', result: { chargeId: 'ch_1' } }] });
    await advance(clock, 1_000, 1_000);
    await supervisor.drain();
    expect(calls).toEqual({ charge: 1, email: 1, body: 2 });
    const done = await store.getJob({ id: job.id });
    expect(done).toMatchObject({ state: 'completed', attempt: 2, result: { chargeId: 'ch_1' } });
    // A step that returned nothing is stored as null: replayed, it returns null.
    expect(done!.steps.map((s) => [s.kind, s.name])).toEqual([['step', 'charge'], ['step', 'email']]);
  });

  it('names repeat as name, name#2, …; a name stored as another kind is refused, naming its key', async () => {
    let run = 0;
    const { store, queue, supervisor } = setup({
      maxAttempts: 2,
      backoff: () => 0,
      handlers: {
        loop: async (job: Job) => {
          run += 1;
          // The handler changed between runs: its first "page" is now a sleep.
          if (run === 2) await job.sleep('page', 1_000);
          for (const n of [1, 2, 3]) await job.step('page', () => n * 10);
          if (run === 1) throw new Error('again');
        },
      },
    });
    const { job } = await queue.enqueue(store, 'loop', {});
    await supervisor.drain();
    const row = await store.getJob({ id: job.id });
    expect(row!.steps.map((s) => s.name)).toEqual(['page', 'page#2', 'page#3']);
    expect(row).toMatchObject({ state: 'dead', error: { code: 'invalid_option' } });
    expect(row!.error!.message).toMatch(/durable call "page": was stored as a step by an earlier run and is now called as a sleep/);
  });

  it('a step called once the attempt is over (past its deadline, its signal ignored) does not run its fn', async () => {
    const go = deferred();
    const seen: unknown[] = [];
    let ran = 0;
    let started = false;
    const { clock, store, queue, supervisor } = setup({
      maxAttempts: 1,
      deadlineMs: 1_000,
      handlers: {
        late: async (job: Job) => {
          started = true;
          await go.promise;
          await job.step('charge', () => (ran += 1)).catch((error: unknown) => seen.push(error));
        },
      },
    });
    const { job } = await queue.enqueue(store, 'late', {});
    const drained = supervisor.drain();
    await until('the handler started', () => started);
    await advance(clock, 1_000, 500);
    // The deadline has passed: the attempt is over, and the handler goes on as if it were not.
    go.resolve(undefined);
    await drained;
    await until('the step answered', () => seen.length > 0);
    expect(ran).toBe(0);
    expect(seen[0]).toBeInstanceOf(JobAbortedError);
    expect(seen[0]).toMatchObject({ code: 'deadline_exceeded' });
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'dead', error: { code: 'deadline_exceeded' }, steps: [] });
  });

  it('a step whose result is not JSON fails the attempt and stores nothing', async () => {
    const { store, queue, supervisor } = setup({
      maxAttempts: 1,
      handlers: { bad: async (job: Job) => job.step('when', () => ({ at: () => 1 }) as never) },
    });
    const { job } = await queue.enqueue(store, 'bad', {});
    await supervisor.drain();
    const row = await store.getJob({ id: job.id });
    expect(row).toMatchObject({ state: 'dead', steps: [] });
    expect(row!.error!.message).toMatch(/step "when"/);
  });
});

describe('supervisor: durable sleep', () => {
  it('gives back its slot at once, spends no attempt, and replays to just after the sleep when due', async () => {
    const log: string[] = [];
    const { clock, store, queue, supervisor } = setup({
      concurrency: 1,
      maxAttempts: 1,
      handlers: {
        trial: async (job: Job) => {
          log.push(`start ${job.attempt}`);
          await job.step('welcome', () => void log.push('welcome'));
          await job.sleep('trial', 30 * 24 * 3_600_000);
          await job.step('convert', () => void log.push('convert'));
          return 'done';
        },
        other: async () => void log.push('other'),
      },
    });
    const { job } = await queue.enqueue(store, 'trial', {});
    await queue.enqueue(store, 'other', {});
    const t0 = clock.now();
    await supervisor.drain();
    // The one slot ran the other job while the trial slept.
    expect(log).toEqual(['start 1', 'welcome', 'other']);
    expect(await store.getJob({ id: job.id })).toMatchObject({
      state: 'sleeping',
      attempt: 1,
      maxAttempts: 2,
      leaseToken: null,
      runAt: new Date(t0 + 30 * 24 * 3_600_000),
    });
    await settle();
    expect(supervisor.counters.getSnapshot().context.queues.work).toMatchObject({ sleeping: 1, running: 0 });
    await advance(clock, 30 * 24 * 3_600_000 - 1, 3_600_000);
    await supervisor.drain();
    expect(log).toHaveLength(3);
    await advance(clock, 1, 1);
    await supervisor.drain();
    expect(log).toEqual(['start 1', 'welcome', 'other', 'start 2', 'convert']);
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'completed', attempt: 2, result: 'done' });
    expect(await pathOf(store, job.id)).toEqual(['pending', 'running', 'sleeping', 'running', 'completed']);
  });

  it('sleepUntil a time already past goes on without sleeping, and a bad duration is refused by name', async () => {
    const errors: unknown[] = [];
    const { clock, store, queue, supervisor } = setup({
      maxAttempts: 1,
      handlers: {
        at: async (job: Job) => {
          await job.sleepUntil('past', new Date(clock.now() - 1_000));
          await job.sleep('bad', -1).catch((error: unknown) => errors.push(error));
          return 'on';
        },
      },
    });
    const { job } = await queue.enqueue(store, 'at', {});
    await supervisor.drain();
    expect(errors[0]).toBeInstanceOf(InvalidOptionError);
    expect(String(errors[0])).toMatch(/sleep/);
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'completed', attempt: 1, result: 'on' });
  });

  it('a job cancelled while it sleeps ends cancelled and never runs again', async () => {
    let runs = 0;
    const { clock, store, queue, supervisor } = setup({
      handlers: { nap: async (job: Job) => { runs += 1; await job.sleep('nap', 60_000); } },
    });
    const { job } = await queue.enqueue(store, 'nap', {});
    await supervisor.drain();
    expect(await store.cancelJob({ id: job.id })).toMatchObject({ cancelled: true });
    await advance(clock, 60_000, 10_000);
    await supervisor.drain();
    expect(runs).toBe(1);
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'cancelled' });
  });

  it('a job whose expiresAt comes while it sleeps ends dead, expired, unrun', async () => {
    let runs = 0;
    const { clock, store, queue, supervisor } = setup({
      handlers: { nap: async (job: Job) => { runs += 1; await job.sleep('nap', 60_000); } },
    });
    const { job } = await queue.enqueue(store, 'nap', {}, { expiresIn: 30_000 });
    await supervisor.drain();
    await advance(clock, 60_000, 10_000);
    await supervisor.drain();
    expect(runs).toBe(1);
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'dead', error: { code: 'expired' } });
  });
});

describe('supervisor: signals', () => {
  function approvals(timeoutMs?: number) {
    const seen: unknown[] = [];
    const h = setup({
      maxAttempts: 1,
      handlers: {
        approve: async (job: Job) => {
          const answer = await job.waitForSignal<{ by: string }>('approval', timeoutMs === undefined ? {} : { timeoutMs });
          seen.push(answer);
          return answer.received ? answer.payload.by : 'timed out';
        },
      },
    });
    return { ...h, seen };
  }

  it('a job waits without a slot until its signal comes, then goes on with the payload', async () => {
    const { store, queue, supervisor, seen } = approvals();
    const { job } = await queue.enqueue(store, 'approve', {});
    await supervisor.drain();
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'sleeping', waitingForSignal: 'approval', leaseToken: null });
    expect(await sendSignal(store, job.id, 'approval', { by: 'ana' })).toEqual({ delivered: 'woke', state: 'pending' });
    await supervisor.drain();
    expect(seen).toEqual([{ received: true, payload: { by: 'ana' } }]);
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'completed', result: 'ana', attempt: 2 });
  });

  it('a signal sent before the job waits is kept for it: the wait returns it without sleeping', async () => {
    const { store, queue, supervisor, seen } = approvals();
    const { job } = await queue.enqueue(store, 'approve', {});
    expect(await sendSignal(store, job.id, 'approval', { by: 'early' })).toEqual({ delivered: 'queued', state: 'pending' });
    await supervisor.drain();
    expect(seen).toEqual([{ received: true, payload: { by: 'early' } }]);
    expect(await pathOf(store, job.id)).toEqual(['pending', 'running', 'completed']);
  });

  it('a wait that times out answers received: false; a signal after the job ended is a JobEndedError', async () => {
    const { clock, store, queue, supervisor, seen } = approvals(5_000);
    const { job } = await queue.enqueue(store, 'approve', {});
    await supervisor.drain();
    await advance(clock, 5_000, 1_000);
    await supervisor.drain();
    expect(seen).toEqual([{ received: false }]);
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'completed', result: 'timed out' });
    await expect(sendSignal(store, job.id, 'approval', { by: 'late' })).rejects.toBeInstanceOf(JobEndedError);
  });

  it('a signal to no such job is a JobNotFoundError, and a bad name is refused, writing nothing', async () => {
    const { store, queue } = approvals();
    const { job } = await queue.enqueue(store, 'approve', {});
    await expect(sendSignal(store, '999999', 'approval')).rejects.toBeInstanceOf(JobNotFoundError);
    await expect(sendSignal(store, job.id, '')).rejects.toBeInstanceOf(InvalidOptionError);
    // Nothing was kept: a wait still sleeps.
    expect(await sendSignal(store, job.id, 'other')).toMatchObject({ delivered: 'queued' });
  });
});

describe('supervisor: signals around the wait (sent before it, during it, after its timeout)', () => {
  it('a signal sent while the job runs, before it waits, is kept: the wait answers at once without sleeping', async () => {
    const started = deferred();
    const go = deferred();
    const seen: unknown[] = [];
    const { store, queue, supervisor } = setup({
      maxAttempts: 1,
      handlers: {
        approve: async (job: Job) => {
          started.resolve(undefined);
          await go.promise;
          seen.push(await job.waitForSignal('approval', { timeoutMs: 5_000 }));
        },
      },
    });
    const { job } = await queue.enqueue(store, 'approve', {});
    const drained = supervisor.drain();
    await started.promise;
    expect(await sendSignal(store, job.id, 'approval', { by: 'ana' })).toEqual({ delivered: 'queued', state: 'running' });
    go.resolve(undefined);
    await drained;
    expect(seen).toEqual([{ received: true, payload: { by: 'ana' } }]);
    expect(await pathOf(store, job.id)).toEqual(['pending', 'running', 'completed']);
  });

  it('a signal sent after the timeout, before the job runs again, is received by that wait', async () => {
    const seen: unknown[] = [];
    const { clock, store, queue, supervisor } = setup({
      maxAttempts: 1,
      handlers: { approve: async (job: Job) => void seen.push(await job.waitForSignal('approval', { timeoutMs: 5_000 })) },
    });
    const { job } = await queue.enqueue(store, 'approve', {});
    await supervisor.drain();
    // Nothing claims between drains: the wait's time has passed, the job not run again.
    await advance(clock, 6_000, 1_000);
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'sleeping', waitingForSignal: 'approval' });
    expect(await sendSignal(store, job.id, 'approval', 'late')).toEqual({ delivered: 'woke', state: 'pending' });
    await supervisor.drain();
    expect(seen).toEqual([{ received: true, payload: 'late' }]);
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'completed', attempt: 2 });
  });

  it('a signal sent once the timed-out wait is stored is kept for the next wait of that name', async () => {
    /** What the waits answered in the latest run (each run replays the earlier ones). */
    let seen: unknown[] = [];
    const { clock, store, queue, supervisor } = setup({
      maxAttempts: 1,
      handlers: {
        approve: async (job: Job) => {
          seen = [];
          seen.push(await job.waitForSignal('approval', { timeoutMs: 5_000 }));
          await job.sleep('grace', 10_000);
          seen.push(await job.waitForSignal('approval', { timeoutMs: 5_000 }));
        },
      },
    });
    const { job } = await queue.enqueue(store, 'approve', {});
    await supervisor.drain();
    await advance(clock, 5_000, 1_000);
    await supervisor.drain();
    expect(seen).toEqual([{ received: false }]);
    // Sleeping, but not for this signal: kept in the mailbox.
    expect(await sendSignal(store, job.id, 'approval', 'after')).toEqual({ delivered: 'queued', state: 'sleeping' });
    await advance(clock, 10_000, 1_000);
    await supervisor.drain();
    expect(seen).toEqual([{ received: false }, { received: true, payload: 'after' }]);
    const done = await store.getJob({ id: job.id });
    expect(done).toMatchObject({ state: 'completed', attempt: 3 });
    expect(done!.steps.map((s) => [s.name, s.kind === 'signal' ? s.status : s.kind])).toEqual([
      ['approval', 'waiting'],
      ['approval', 'timedOut'],
      ['grace', 'sleep'],
      ['approval#2', 'received'],
    ]);
  });

  it('several signals of one name: each wait takes the oldest; the one left over is refused once the job ends', async () => {
    const seen: unknown[] = [];
    const { store, queue, supervisor } = setup({
      maxAttempts: 1,
      handlers: {
        approve: async (job: Job) => {
          seen.push(await job.waitForSignal('approval'));
          seen.push(await job.waitForSignal('approval'));
        },
      },
    });
    const { job } = await queue.enqueue(store, 'approve', {});
    await supervisor.drain();
    expect(await sendSignal(store, job.id, 'approval', 1)).toEqual({ delivered: 'woke', state: 'pending' });
    expect(await sendSignal(store, job.id, 'approval', 2)).toEqual({ delivered: 'queued', state: 'pending' });
    expect(await sendSignal(store, job.id, 'approval', 3)).toEqual({ delivered: 'queued', state: 'pending' });
    await supervisor.drain();
    expect(seen).toEqual([{ received: true, payload: 1 }, { received: true, payload: 2 }]);
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'completed', attempt: 2 });
    await expect(sendSignal(store, job.id, 'approval', 4)).rejects.toBeInstanceOf(JobEndedError);
  });
});

describe('supervisor: cancel and expiresAt while waiting for a signal', () => {
  function waiter() {
    let runs = 0;
    const h = setup({
      handlers: {
        approve: async (job: Job) => {
          runs += 1;
          await job.waitForSignal('approval', { timeoutMs: 60_000 });
          return 'went on';
        },
      },
    });
    return { ...h, runs: () => runs };
  }

  it('cancelled while it waits: cancelled at once, never run again, a signal to it refused', async () => {
    const { clock, store, queue, supervisor, runs } = waiter();
    const { job } = await queue.enqueue(store, 'approve', {});
    await supervisor.drain();
    expect(await store.cancelJob({ id: job.id })).toMatchObject({ cancelled: true, job: { state: 'cancelled' } });
    await expect(sendSignal(store, job.id, 'approval')).rejects.toBeInstanceOf(JobEndedError);
    await advance(clock, 60_000, 10_000);
    await supervisor.drain();
    expect(runs()).toBe(1);
    expect(await pathOf(store, job.id)).toEqual(['pending', 'running', 'sleeping', 'cancelled']);
  });

  it('its expiresAt passes while it waits: dead (expired) at the reaper\'s next pass, unrun, a signal to it refused', async () => {
    const { clock, store, queue, supervisor, runs } = waiter();
    const { job } = await queue.enqueue(store, 'approve', {}, { expiresIn: 30_000 });
    await supervisor.drain();
    await advance(clock, 60_000, 10_000);
    await supervisor.drain();
    expect(runs()).toBe(1);
    expect(await store.getJob({ id: job.id })).toMatchObject({ state: 'dead', error: { code: 'expired' }, waitingForSignal: null });
    expect(await pathOf(store, job.id)).toEqual(['pending', 'running', 'sleeping', 'dead']);
    await expect(sendSignal(store, job.id, 'approval')).rejects.toBeInstanceOf(JobEndedError);
  });
});
