/**
 * A handler whose attempt is taken from it learns why from its signal: `signal.reason` is a
 * JobAbortedError whose code is the one the row records, for each of the five causes.
 */
import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { JobAbortedError, type Job } from '../../src/index.js';
import { advance, createTestClock, until } from '../support/sim.js';
import { supervisorHarness } from './harness.js';

const { setup } = supervisorHarness();

/** A handler that waits for its signal and keeps the reason it was given. */
function waitsForAbort() {
  const reasons: unknown[] = [];
  const handler = ({ signal }: Job) =>
    new Promise((_, reject) =>
      signal.addEventListener('abort', () => {
        reasons.push(signal.reason);
        reject(signal.reason);
      }),
    );
  return { reasons, handler };
}

async function expectReason(reasons: unknown[], code: string): Promise<void> {
  await until(`the handler is aborted (${code})`, () => reasons.length > 0);
  expect(reasons).toHaveLength(1);
  expect(reasons[0]).toBeInstanceOf(JobAbortedError);
  expect(reasons[0]).toMatchObject({ name: 'AbortError', code });
}

describe("a handler's signal says why the attempt was taken", () => {
  it('deadline_exceeded, with the message the row records', async () => {
    const { reasons, handler } = waitsForAbort();
    const { clock, store, queue, supervisor } = setup({ deadlineMs: 5_000, maxAttempts: 1, handlers: { j: handler } });
    const { job } = await queue.enqueue(store, 'j', {});
    await supervisor.start();
    await advance(clock, 6_000);
    await expectReason(reasons, 'deadline_exceeded');
    const row = await store.getJob({ id: job.id });
    expect(row?.error).toMatchObject({ code: 'deadline_exceeded' });
    expect((reasons[0] as Error).message).toBe(row!.error!.message);
  });

  it('expired: the deadline across all attempts passed', async () => {
    const { reasons, handler } = waitsForAbort();
    const { clock, store, queue, supervisor } = setup({ deadlineMs: null, handlers: { j: handler } });
    await queue.enqueue(store, 'j', {}, { expiresAt: new Date(clock.now() + 2_000) });
    await supervisor.start();
    await advance(clock, 3_000);
    await expectReason(reasons, 'expired');
  });

  it('cancelled: a cancel reached the holder', async () => {
    const { reasons, handler } = waitsForAbort();
    const { store, queue, supervisor } = setup({ deadlineMs: null, handlers: { j: handler } });
    const { job } = await queue.enqueue(store, 'j', {});
    await supervisor.start();
    await until('the job runs', async () => (await store.getJob({ id: job.id }))?.state === 'running');
    await supervisor.cancel(job.id);
    await expectReason(reasons, 'cancelled');
  });

  it('worker_shutdown: stop() ran out of its grace period', async () => {
    const { reasons, handler } = waitsForAbort();
    const { clock, store, queue, supervisor } = setup({ deadlineMs: null, handlers: { j: handler } });
    const { job } = await queue.enqueue(store, 'j', {});
    await supervisor.start();
    await until('the job runs', async () => (await store.getJob({ id: job.id }))?.state === 'running');
    const stopped = supervisor.stop({ graceMs: 1_000 });
    await advance(clock, 1_500);
    await stopped;
    await expectReason(reasons, 'worker_shutdown');
  });

  it('lease_lost: a renewal found another holder', async () => {
    const { reasons, handler } = waitsForAbort();
    const clock = createTestClock();
    const store = memoryStore({ clock });
    store.renewLeases = async ({ leases }) => leases.map(() => 'lost' as const);
    const { queue, supervisor } = setup({ leaseMs: 30_000, heartbeatMs: 10_000, deadlineMs: null, handlers: { j: handler } }, { clock, store });
    await queue.enqueue(store, 'j', {});
    await supervisor.start();
    // Past the first heartbeat (10 s after the job started), well within the 30 s lease.
    await advance(clock, 20_000);
    await expectReason(reasons, 'lease_lost');
  });
});
