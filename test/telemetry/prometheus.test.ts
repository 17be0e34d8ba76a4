import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { createSupervisor, defineQueue, prometheusMetrics, type Job } from '../../src/index.js';
import { drain } from '../../src/testing/drain.js';
import { Histogram } from '../../src/telemetry/metrics.js';
import { advance, createTestClock, deferred, settle } from '../support/sim.js';

describe('prometheusMetrics', () => {
  it('renders the store backlog and each supervisor\'s counters and histograms', async () => {
    const clock = createTestClock();
    const store = memoryStore({ clock });
    const release = deferred<void>();
    const queue = defineQueue('places', {
      concurrency: 2,
      maxAttempts: 1,
      handlers: {
        ok: async () => {
          await release.promise;
          await advance(clock, 2_000);
        },
        bad: () => { throw new Error('boom'); },
      },
    });
    const supervisor = createSupervisor({ store, queues: [queue], clock, workerId: 'host "a"' });
    await queue.enqueue(store, 'ok', {});
    await queue.enqueue(store, 'bad', {});
    await queue.enqueue(store, 'ok', {}, { runAt: new Date(clock.now() + 3_600_000) });
    await advance(clock, 30_000);
    const drained = supervisor.drain();
    await settle();
    release.resolve();
    await drained;
    await settle();

    const text = await prometheusMetrics({ store, supervisors: [supervisor] });
    const lines = text.split('\n');
    const worker = 'worker="host \\"a\\""';
    expect(lines).toEqual(
      expect.arrayContaining([
        '# TYPE jobvisor_jobs gauge',
        'jobvisor_jobs{queue="places",state="pending"} 1',
        'jobvisor_jobs{queue="places",state="dead"} 1',
        `jobvisor_queue_oldest_run_at_seconds{queue="places"} ${(clock.now() - 32_000 + 3_600_000) / 1000}`,
        '# TYPE jobvisor_attempts_total counter',
        `jobvisor_attempts_total{${worker},queue="places",outcome="completed"} 1`,
        `jobvisor_attempts_total{${worker},queue="places",outcome="dead"} 1`,
        `jobvisor_attempts_total{${worker},queue="places",outcome="snoozed"} 0`,
        `jobvisor_claims_total{${worker},queue="places"} 2`,
        `jobvisor_running_jobs{${worker},queue="places"} 0`,
        '# TYPE jobvisor_attempt_duration_seconds histogram',
        `jobvisor_attempt_duration_seconds_bucket{${worker},queue="places",le="0.001"} 1`,
        `jobvisor_attempt_duration_seconds_bucket{${worker},queue="places",le="2.5"} 2`,
        `jobvisor_attempt_duration_seconds_bucket{${worker},queue="places",le="+Inf"} 2`,
        `jobvisor_attempt_duration_seconds_sum{${worker},queue="places"} 2`,
        `jobvisor_attempt_duration_seconds_count{${worker},queue="places"} 2`,
        `jobvisor_queue_lag_seconds_bucket{${worker},queue="places",le="10"} 0`,
        `jobvisor_queue_lag_seconds_bucket{${worker},queue="places",le="30"} 2`,
        `jobvisor_queue_lag_seconds_sum{${worker},queue="places"} 60`,
      ]),
    );
    expect(text.endsWith('\n')).toBe(true);
    for (const line of lines.filter((l) => l && !l.startsWith('#'))) expect(line).toMatch(/^[a-z_]+\{.*\} [0-9.e+-]+$|^[a-z_]+\{.*\} \+Inf$/);
    await supervisor.stop({ graceMs: 0 });
  });

  it('counts the jobs of flows that wait for others, per queue', async () => {
    const store = memoryStore();
    const queue = defineQueue('reports', { handlers: { step: async () => ({}) } });
    const { job: first } = await queue.enqueue(store, 'step', {});
    await queue.enqueue(store, 'step', {}, { dependsOn: [first.id] });
    await queue.enqueue(store, 'step', {}, { dependsOn: [first.id] });
    const lines = (await prometheusMetrics({ store })).split('\n');
    expect(lines).toEqual(
      expect.arrayContaining(['jobvisor_jobs{queue="reports",state="pending"} 1', 'jobvisor_jobs{queue="reports",state="waiting"} 2']),
    );
  });

  it('counts jobs that sleep or wait for a signal as sleeping, not as pending or running', async () => {
    const clock = createTestClock();
    const store = memoryStore({ clock });
    const queue = defineQueue('orders', {
      handlers: {
        nap: async (job: Job) => job.sleep('nap', 60_000),
        approve: async (job: Job) => job.waitForSignal('approved'),
      },
    });
    await queue.enqueue(store, 'nap', {});
    await queue.enqueue(store, 'approve', {});
    await drain(store, [queue], { clock });
    const lines = (await prometheusMetrics({ store })).split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        'jobvisor_jobs{queue="orders",state="sleeping"} 2',
        'jobvisor_jobs{queue="orders",state="pending"} 0',
        'jobvisor_jobs{queue="orders",state="running"} 0',
      ]),
    );
    // Not due: the oldest due job's time is for pending and retrying jobs only.
    expect(lines.some((line) => line.startsWith('jobvisor_queue_oldest_run_at_seconds{queue="orders"}'))).toBe(false);
  });

  it('renders nothing without a store or supervisors', async () => {
    expect(await prometheusMetrics({})).toBe('');
  });
});

describe('Histogram', () => {
  it('counts cumulatively per bound, with sum and count; values past the last bound only in count', () => {
    const h = new Histogram([1, 10]);
    for (const v of [0.5, 1, 5, 50]) h.observe(v);
    expect(h.snapshot()).toEqual({ buckets: [1, 10], counts: [2, 3], sum: 56.5, count: 4 });
  });
});
