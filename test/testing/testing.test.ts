import { describe, expect, it } from 'vitest';
import { defineQueue, type Job, PermanentJobError, SkipJobError } from '../../src/index.js';
import {
  advance,
  assertEnqueued,
  assertJobState,
  assertManyEnqueued,
  assertNotEnqueued,
  createTestClock,
  drain,
  memoryStore,
  runJob,
  settle,
  TEST_EPOCH,
} from '../../src/testing/index.js';

function flaky(failures: number) {
  let calls = 0;
  return defineQueue('places', {
    maxAttempts: 3,
    backoff: (attempt) => attempt * 60_000,
    handlers: {
      collect: async ({ payload, attempt }: Job<{ placeId: string }>) => {
        calls += 1;
        if (calls <= failures) throw new Error(`upstream 503 (${payload.placeId}, attempt ${attempt})`);
        return { photos: 20 };
      },
    },
  });
}

describe('runJob', () => {
  it('runs a job through its handler and returns where it ended and how', async () => {
    const run = await runJob(flaky(0), 'collect', { placeId: 'p1' });
    expect(run.state).toBe('completed');
    expect(run.result).toEqual({ photos: 20 });
    expect(run.path).toEqual(['pending', 'running', 'completed']);
    expect(run.history.map((e) => e.attempt)).toEqual([0, 1, 1]);
    expect(run.job).toMatchObject({ queue: 'places', kind: 'collect', payload: { placeId: 'p1' }, attempt: 1 });
  });

  it('runs every attempt, moving the clock past each backoff', async () => {
    const clock = createTestClock();
    const run = await runJob(flaky(2), 'collect', { placeId: 'p1' }, { clock });
    expect(run.path).toEqual(['pending', 'running', 'retrying', 'running', 'retrying', 'running', 'completed']);
    expect(clock.now() - TEST_EPOCH).toBe(60_000 + 120_000);
  });

  it('ends dead when the attempts are spent, or at once on a PermanentJobError; skipped on a SkipJobError', async () => {
    const spent = await runJob(flaky(3), 'collect', { placeId: 'p1' });
    expect(spent).toMatchObject({ state: 'dead', error: { code: 'handler_error', message: 'upstream 503 (p1, attempt 3)' } });
    expect(spent.job.attempt).toBe(3);

    const outcomes = defineQueue('outcomes', {
      handlers: {
        gone: async () => {
          throw new PermanentJobError('place is gone');
        },
        nothing: async () => {
          throw new SkipJobError('nothing to do');
        },
      },
    });
    expect(await runJob(outcomes, 'gone', {})).toMatchObject({ state: 'dead', path: ['pending', 'running', 'dead'] });
    expect(await runJob(outcomes, 'nothing', {})).toMatchObject({ state: 'skipped', error: { code: 'skipped' } });
  });

  it('lets the test move the clock while a handler hangs past its deadline', async () => {
    const clock = createTestClock();
    const queue = defineQueue('slow', { maxAttempts: 1, deadlineMs: 5_000, handlers: { hang: () => new Promise(() => {}) } });
    const running = runJob(queue, 'hang', {}, { clock });
    await settle(); // the attempt starts
    await advance(clock, 5_000);
    expect(await running).toMatchObject({ state: 'dead', error: { code: 'deadline_exceeded' } });
  });

  it('enqueues with the options given, and waits for a later runAt', async () => {
    const clock = createTestClock();
    const runAt = new Date(TEST_EPOCH + 3_600_000);
    const run = await runJob(flaky(0), 'collect', { placeId: 'p1' }, { clock, enqueue: { runAt, priority: 5 } });
    expect(run.job).toMatchObject({ state: 'completed', priority: 5 });
    expect(clock.now()).toBe(runAt.getTime());
  });

  it('checks the payload against the handler (at compile time)', () => {
    const wrongPayload = () =>
      // @ts-expect-error placeId is a string
      runJob(flaky(0), 'collect', { placeId: 1 });
    expect(wrongPayload).toBeTypeOf('function');
  });
});

describe('drain', () => {
  it('runs the due jobs, and with a clock also what becomes due later', async () => {
    const clock = createTestClock();
    const store = memoryStore({ clock });
    const queue = flaky(1);
    await queue.enqueue(store, 'collect', { placeId: 'p1' });
    await queue.enqueue(store, 'collect', { placeId: 'p2' }, { runAt: new Date(TEST_EPOCH + 1_000) });
    expect(await drain(store, [queue], { clock })).toBe(1);
    expect(await drain(store, [queue], { clock, advance: true })).toBe(2);
    expect((await store.countJobs()).map((c) => [c.state, c.count])).toEqual([['completed', 2]]);
  });

  it('with a clock, runs a durable sleep to its end, and leaves a wait for a signal with no timeout asleep', async () => {
    const clock = createTestClock();
    const store = memoryStore({ clock });
    const queue = defineQueue('naps', {
      handlers: {
        nap: async (job: Job) => { await job.sleep('nap', 86_400_000); return 'rested'; },
        wait: async (job: Job) => (await job.waitForSignal('go')).received,
      },
    });
    const { job: nap } = await queue.enqueue(store, 'nap', {});
    const { job: wait } = await queue.enqueue(store, 'wait', {});
    expect(await drain(store, [queue], { clock, advance: true })).toBe(3);
    expect(await store.getJob({ id: nap.id })).toMatchObject({ state: 'completed', result: 'rested' });
    expect(await store.getJob({ id: wait.id })).toMatchObject({ state: 'sleeping', waitingForSignal: 'go' });
    expect(clock.now()).toBe(TEST_EPOCH + 86_400_000);
  });

  it('gives up with a reason when moving its clock changes nothing', async () => {
    const clock = createTestClock();
    const store = memoryStore({ clock: createTestClock() }); // reads another clock
    const queue = flaky(0);
    await queue.enqueue(store, 'collect', { placeId: 'p1' }, { runAt: new Date(TEST_EPOCH + 1_000) });
    await expect(drain(store, [queue], { clock, advance: true, maxRounds: 3 })).rejects.toThrow(/does the store read this clock\?/);
  });
});

describe('assertions', () => {
  it('assertEnqueued finds a job by queue, kind and payload, or says what the queue holds', async () => {
    const store = memoryStore();
    const queue = flaky(0);
    await queue.enqueue(store, 'collect', { placeId: 'p1' });
    await queue.enqueue(store, 'collect', { placeId: 'p2' });
    expect(await assertEnqueued(store, queue, 'collect', { placeId: 'p2' })).toMatchObject({ payload: { placeId: 'p2' } });
    expect(await assertEnqueued(store, 'places', 'collect')).toMatchObject({ payload: { placeId: 'p2' } });
    await expect(assertEnqueued(store, queue, 'collect', { placeId: 'p3' })).rejects.toThrow(
      'no job of kind "collect" in queue "places" was enqueued with payload {"placeId":"p3"}; ' +
        'the queue holds 2 jobs of that kind, newest first: #2 {"placeId":"p2"} (pending), #1 {"placeId":"p1"} (pending)',
    );
    await expect(assertEnqueued(store, 'other', 'collect')).rejects.toThrow('the queue holds no job of that kind');
  });

  it('assertEnqueued matches on options too: priority, runAt, unique key', async () => {
    const store = memoryStore({ clock: createTestClock() });
    const queue = flaky(0);
    const runAt = new Date(TEST_EPOCH + 60_000);
    await queue.enqueue(store, 'collect', { placeId: 'p1' }, { priority: 5, runAt, uniqueKey: 'collect:p1' });
    expect(await assertEnqueued(store, queue, 'collect', undefined, { priority: 5, runAt: new Date(runAt), uniqueKey: 'collect:p1' })).toMatchObject({
      payload: { placeId: 'p1' },
    });
    await expect(assertEnqueued(store, queue, 'collect', { placeId: 'p1' }, { priority: 0 })).rejects.toThrow(
      'no job of kind "collect" in queue "places" was enqueued with payload {"placeId":"p1"}, priority 0; ' +
        'the queue holds 1 job of that kind, newest first: #1 {"placeId":"p1"} (pending)',
    );
    await expect(assertEnqueued(store, queue, 'collect', undefined, { runAt: new Date(TEST_EPOCH) })).rejects.toThrow(
      `with runAt ${new Date(TEST_EPOCH).toISOString()}`,
    );
  });

  it('assertNotEnqueued passes when nothing matches, and lists what does', async () => {
    const store = memoryStore();
    const queue = flaky(0);
    await assertNotEnqueued(store, queue);
    await queue.enqueue(store, 'collect', { placeId: 'p1' }, { uniqueKey: 'collect:p1' });
    await assertNotEnqueued(store, queue, 'collect', { placeId: 'p2' });
    await assertNotEnqueued(store, queue, 'collect', undefined, { uniqueKey: 'collect:p2' });
    await assertNotEnqueued(store, 'other');
    await expect(assertNotEnqueued(store, queue)).rejects.toThrow(
      'expected no job of any kind in queue "places", found 1 job, newest first: #1 {"placeId":"p1"} (pending)',
    );
    await expect(assertNotEnqueued(store, queue, 'collect', { placeId: 'p1' })).rejects.toThrow(
      'expected no job of kind "collect" in queue "places" with payload {"placeId":"p1"}, found 1 job',
    );
  });

  it('assertManyEnqueued checks every job of the queue, in order, and says where it differs', async () => {
    const store = memoryStore({ clock: createTestClock() });
    const queue = flaky(0);
    await queue.enqueue(store, 'collect', { placeId: 'p1' });
    await queue.enqueue(store, 'collect', { placeId: 'p2' }, { priority: 3 });
    const jobs = await assertManyEnqueued(store, queue, [
      { kind: 'collect', payload: { placeId: 'p1' } },
      { kind: 'collect', priority: 3 },
    ]);
    expect(jobs.map((job) => job.payload)).toEqual([{ placeId: 'p1' }, { placeId: 'p2' }]);
    await expect(assertManyEnqueued(store, queue, [{ kind: 'collect' }])).rejects.toThrow(
      'queue "places" holds 2 jobs, expected 1; at position 2 (oldest first) expected no more jobs, but job #2 is of kind "collect"',
    );
    await expect(
      assertManyEnqueued(store, queue, [{ kind: 'collect', payload: { placeId: 'p2' } }, { kind: 'collect' }]),
    ).rejects.toThrow('at position 1 (oldest first) expected a job of kind "collect" with payload {"placeId":"p2"}, but job #1 is of kind "collect" with payload {"placeId":"p1"}, priority 0');
    await expect(assertManyEnqueued(store, queue, [{ kind: 'collect' }, { kind: 'collect' }, { kind: 'collect' }])).rejects.toThrow(
      'at position 3 (oldest first) expected a job of kind "collect", but there is no such job',
    );
  });

  it('assertJobState checks the state, and says where the job is and how it got there', async () => {
    const run = await runJob(flaky(3), 'collect', { placeId: 'p1' }, { enqueue: { maxAttempts: 1 } });
    expect(await assertJobState(run.store, run.job, 'dead')).toMatchObject({ id: run.job.id });
    await expect(assertJobState(run.store, run.job.id, 'completed')).rejects.toThrow(
      `job ${run.job.id} (queue "places", kind "collect") is dead, expected completed; ` +
        'error handler_error: upstream 503 (p1, attempt 1); path: pending → running → dead',
    );
    await expect(assertJobState(run.store, '999', 'completed')).rejects.toThrow('no job with id 999');
  });
});

describe('clock', () => {
  it('starts at a fixed time and moves in settled steps', async () => {
    const clock = createTestClock();
    expect(clock.now()).toBe(TEST_EPOCH);
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(clock.now() - TEST_EPOCH), 1_500);
    await advance(clock, 3_000);
    expect(fired).toEqual([2_000]);
    await settle();
    expect(createTestClock(new Date(0)).now()).toBe(0);
  });
});

describe('no jitter in the testing helpers', () => {
  it('two runs of a retried job retry at the same times, the default backoff drawn at its middle', async () => {
    const run = async () => {
      let calls = 0;
      const flaky = defineQueue('flaky', {
        maxAttempts: 3,
        handlers: {
          fetch: async (_job: Job<null>) => {
            if (++calls < 3) throw new Error('flaky');
            return calls;
          },
        },
      });
      return runJob(flaky, 'fetch', null);
    };
    const [first, second] = [await run(), await run()];
    expect(first.state).toBe('completed');
    const times = (r: typeof first) => r.history.map((e) => [e.fromState, e.toState, e.workerId, e.at.getTime()]);
    expect(times(second)).toEqual(times(first));
    // exponentialBackoff(): 1 s then 2 s, half of each drawn at random: 0.75 s and 1.5 s at 0.5.
    const retried = first.history.filter((e) => e.toState === 'running').map((e) => e.at.getTime() - TEST_EPOCH);
    expect(retried.slice(1).map((t, i) => t - retried[i]!)).toEqual([750, 1_500]);
  });
});

describe('drain with schedules', () => {
  it('registers a schedule, then enqueues and runs the tick that fell since, once', async () => {
    const { defineSchedule } = await import('../../src/index.js');
    const ran: string[] = [];
    const reports = defineQueue('reports', { handlers: { render: async (_job: Job<null>) => void ran.push('render') } });
    const schedule = defineSchedule({ name: 'digest', cron: '*/5 * * * *', queue: reports, kind: 'render', payload: null });
    const clock = createTestClock();
    const store = memoryStore({ clock });
    expect(await drain(store, [reports], { clock, schedules: [schedule] })).toBe(0);
    clock.set(TEST_EPOCH + 5 * 60_000);
    expect(await drain(store, [reports], { clock, schedules: [schedule] })).toBe(1);
    expect(await drain(store, [reports], { clock, schedules: [schedule] })).toBe(0);
    expect(ran).toEqual(['render']);
    const [job] = await store.listJobs({ queue: 'reports' });
    expect(job).toMatchObject({ state: 'completed', runAt: new Date(TEST_EPOCH + 5 * 60_000) });
  });
});
