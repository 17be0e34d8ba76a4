/**
 * A handler that keeps the event loop busy (CPU work before its first await, or no await at
 * all): Node cannot interrupt it, and the deadline and lease timers fire only after it yields.
 * Its answer is judged when it comes, by the supervisor's clock. The busy work is simulated:
 * the handler moves the clock the supervisor and the store read, without firing a timer, as
 * real CPU time would.
 */
import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { defineQueue, type Handler } from '../../src/index.js';
import { createSupervisor } from '../../src/supervisor/supervisor.js';
import { createTestClock } from '../support/sim.js';
import { pathOf, stopSupervisorsAfterEach } from './harness.js';

const track = stopSupervisorsAfterEach();

async function runOne(handler: (spin: (ms: number) => void) => ReturnType<Handler>, queueOptions: { deadlineMs?: number | null; leaseMs?: number; maxAttempts?: number }) {
  const sim = createTestClock();
  let spun = 0;
  const clock = { now: () => sim.now() + spun, setTimeout: sim.setTimeout.bind(sim), clearTimeout: sim.clearTimeout.bind(sim) };
  const store = memoryStore({ clock });
  const queue = defineQueue('busy', { handlers: { work: () => handler((ms) => void (spun += ms)) }, maxAttempts: 1, ...queueOptions });
  const supervisor = createSupervisor({ store, queues: [queue], clock, workerId: 'w1' });
  track(supervisor, sim);
  const { job } = await queue.enqueue(store, 'work', {});
  await supervisor.drain();
  return { row: (await store.getJob({ id: job.id }))!, path: await pathOf(store, job.id), counters: supervisor.counters.getSnapshot().context };
}

describe('a handler that keeps the event loop busy', () => {
  it('800 ms of CPU before its first await, deadlineMs 300: the deadline\'s outcome, not its late result', async () => {
    const { row, path } = await runOne(async (spin) => {
      spin(800);
      await Promise.resolve();
      return { late: true };
    }, { deadlineMs: 300 });
    expect(row).toMatchObject({ state: 'dead', result: null, error: { code: 'deadline_exceeded' } });
    expect(path).toEqual(['pending', 'running', 'dead']);
  });

  it('a fully synchronous handler, attempts left: retrying with deadline_exceeded', async () => {
    const { row } = await runOne((spin) => {
      spin(800);
      return { late: true };
    }, { deadlineMs: 300, maxAttempts: 2 });
    expect(row).toMatchObject({ state: 'retrying', result: null, error: { code: 'deadline_exceeded' } });
  });

  it('1,600 ms with leaseMs 1,000: nothing is written after its lease lapsed (the row waits for the reaper)', async () => {
    const { row, path } = await runOne((spin) => {
      spin(1_600);
      return { late: true };
    }, { leaseMs: 1_000, deadlineMs: null });
    expect(row).toMatchObject({ state: 'running', result: null, workerId: 'w1' });
    expect(path).toEqual(['pending', 'running']);
  });

  it('within its deadline and lease, the same handler completes', async () => {
    const { row } = await runOne((spin) => {
      spin(200);
      return { ok: true };
    }, { leaseMs: 1_000, deadlineMs: 300 });
    expect(row).toMatchObject({ state: 'completed', result: { ok: true } });
  });
});
