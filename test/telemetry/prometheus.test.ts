import { openMetricsContentType, Registry, register, type OpenMetricsContentType } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { createSupervisor, defineQueue, type Job } from '../../src/index.js';
import { registerMetrics } from '../../src/telemetry/prometheus.js';
import { drain } from '../../src/testing/drain.js';
import { Histogram } from '../../src/telemetry/metrics.js';
import { advance, createTestClock, deferred, settle } from '../support/sim.js';

async function scrape(registry: Registry): Promise<string[]> {
  return (await registry.metrics()).split('\n');
}

describe('registerMetrics', () => {
  afterEach(() => register.clear());

  it('joins the given registry: the store\'s exact depths and oldest due job\'s age, the supervisors\' counters and histograms per queue, no worker label', async () => {
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
    const supervisor = createSupervisor({ store, queues: [queue], clock });
    const registry = new Registry();
    registerMetrics({ registry, store, supervisors: [supervisor] });
    await queue.enqueue(store, 'ok', {});
    await queue.enqueue(store, 'bad', {});
    await queue.enqueue(store, 'ok', {}, { runAt: new Date(clock.now() + 3_600_000) });
    await advance(clock, 30_000);
    const drained = supervisor.drain();
    await settle();
    release.resolve();
    await drained;
    await settle();
    // Due 45 s ago and not claimed: the age the gauge reports.
    await queue.enqueue(store, 'ok', {});
    await advance(clock, 45_000);

    const lines = await scrape(registry);
    expect(lines).toEqual(
      expect.arrayContaining([
        'jobvisor_store_up 1',
        '# TYPE jobvisor_jobs gauge',
        'jobvisor_jobs{queue="places",state="pending"} 2',
        'jobvisor_jobs{queue="places",state="dead"} 1',
        'jobvisor_jobs{queue="places",state="running"} 0',
        '# TYPE jobvisor_queue_oldest_job_age_seconds gauge',
        'jobvisor_queue_oldest_job_age_seconds{queue="places"} 45',
        '# TYPE jobvisor_attempts_total counter',
        'jobvisor_attempts_total{queue="places",outcome="completed"} 1',
        'jobvisor_attempts_total{queue="places",outcome="dead"} 1',
        'jobvisor_attempts_total{queue="places",outcome="snoozed"} 0',
        'jobvisor_claims_total{queue="places"} 2',
        'jobvisor_running_jobs{queue="places"} 0',
        '# TYPE jobvisor_attempt_duration_seconds histogram',
        'jobvisor_attempt_duration_seconds_bucket{le="0.001",queue="places"} 1',
        'jobvisor_attempt_duration_seconds_bucket{le="2.5",queue="places"} 2',
        'jobvisor_attempt_duration_seconds_bucket{le="+Inf",queue="places"} 2',
        'jobvisor_attempt_duration_seconds_sum{queue="places"} 2',
        'jobvisor_attempt_duration_seconds_count{queue="places"} 2',
        'jobvisor_queue_lag_seconds_bucket{le="10",queue="places"} 0',
        'jobvisor_queue_lag_seconds_bucket{le="30",queue="places"} 2',
        'jobvisor_queue_lag_seconds_sum{queue="places"} 60',
      ]),
    );
    expect(lines.join('\n')).not.toContain('worker=');
    // Collected on scrape: the next one sees the claim and the attempt since.
    await supervisor.drain();
    expect(await scrape(registry)).toEqual(
      expect.arrayContaining(['jobvisor_claims_total{queue="places"} 3', 'jobvisor_jobs{queue="places",state="pending"} 1']),
    );
    await supervisor.stop({ graceMs: 0 });
  });

  it('counts every job, past the 10,000 the inspector stops at', async () => {
    const store = memoryStore();
    const queue = defineQueue('bulk', { handlers: { step: async () => ({}) } });
    await queue.enqueueMany(store, Array.from({ length: 15_000 }, () => ({ kind: 'step' as const, payload: {} })));
    const registry = new Registry();
    registerMetrics({ registry, store });
    expect(await scrape(registry)).toContain('jobvisor_jobs{queue="bulk",state="pending"} 15000');
  });

  it('sums the supervisors of one process per queue: a series per queue, not per supervisor', async () => {
    const store = memoryStore();
    const queue = defineQueue('mail', { handlers: { send: async () => ({}) } });
    const supervisors = [createSupervisor({ store, queues: [queue] }), createSupervisor({ store, queues: [queue] })];
    const registry = new Registry();
    registerMetrics({ registry, supervisors });
    await queue.enqueue(store, 'send', {});
    await supervisors[0]!.drain();
    await queue.enqueue(store, 'send', {});
    await supervisors[1]!.drain();
    const lines = await scrape(registry);
    expect(lines.filter((line) => line.startsWith('jobvisor_claims_total{'))).toEqual(['jobvisor_claims_total{queue="mail"} 2']);
    expect(lines).toContain('jobvisor_attempt_duration_seconds_count{queue="mail"} 2');
    for (const s of supervisors) await s.stop({ graceMs: 0 });
  });

  it('counts the jobs of flows that wait for others, and jobs that sleep as sleeping, none as due', async () => {
    const clock = createTestClock();
    const store = memoryStore({ clock });
    const reports = defineQueue('reports', { handlers: { step: async () => ({}) } });
    const orders = defineQueue('orders', {
      handlers: {
        nap: async (job: Job) => job.sleep('nap', 60_000),
        approve: async (job: Job) => job.waitForSignal('approved'),
      },
    });
    const { job: first } = await reports.enqueue(store, 'step', {}, { runAt: new Date(clock.now() + 60_000) });
    await reports.enqueue(store, 'step', {}, { dependsOn: [first.id] });
    await reports.enqueue(store, 'step', {}, { dependsOn: [first.id] });
    await orders.enqueue(store, 'nap', {});
    await orders.enqueue(store, 'approve', {});
    await drain(store, [orders], { clock });
    const registry = new Registry();
    registerMetrics({ registry, store });
    expect(await scrape(registry)).toEqual(
      expect.arrayContaining([
        'jobvisor_jobs{queue="reports",state="pending"} 1',
        'jobvisor_jobs{queue="reports",state="waiting"} 2',
        // Not yet due: no age.
        'jobvisor_queue_oldest_job_age_seconds{queue="reports"} 0',
        'jobvisor_jobs{queue="orders",state="sleeping"} 2',
        'jobvisor_jobs{queue="orders",state="pending"} 0',
        'jobvisor_jobs{queue="orders",state="running"} 0',
        'jobvisor_queue_oldest_job_age_seconds{queue="orders"} 0',
      ]),
    );
  });

  it('defaults to prom-client\'s global register, takes its default labels, and unregisters', async () => {
    const store = memoryStore();
    await defineQueue('a', { handlers: { x: async () => ({}) } }).enqueue(store, 'x', {});
    register.setDefaultLabels({ worker: 'web-1' });
    const metrics = registerMetrics({ store });
    expect((await register.metrics()).split('\n')).toContain('jobvisor_jobs{queue="a",state="pending",worker="web-1"} 1');
    metrics.unregister();
    expect(await register.metrics()).not.toContain('jobvisor_');
  });

  it('joins an OpenMetrics registry as well', async () => {
    const store = memoryStore();
    const queue = defineQueue('a', { handlers: { x: async () => ({}) } });
    const supervisor = createSupervisor({ store, queues: [queue] });
    const registry = new Registry<OpenMetricsContentType>();
    registry.setContentType(openMetricsContentType);
    registerMetrics({ registry, store, supervisors: [supervisor] });
    await queue.enqueue(store, 'x', {});
    await supervisor.drain();
    const text = await registry.metrics();
    expect(text.split('\n')).toEqual(expect.arrayContaining(['# TYPE jobvisor_claims counter', 'jobvisor_claims_total{queue="a"} 1']));
    expect(text.endsWith('# EOF\n')).toBe(true);
    await supervisor.stop({ graceMs: 0 });
  });

  it('adds prom-client\'s process metrics only when asked', async () => {
    const without = new Registry();
    registerMetrics({ registry: without, store: memoryStore() });
    expect(await without.metrics()).not.toContain('process_cpu_seconds_total');
    const withThem = new Registry();
    registerMetrics({ registry: withThem, store: memoryStore(), processMetrics: true });
    expect(await withThem.metrics()).toContain('process_cpu_seconds_total');
  });

  it('a failed store read fails no scrape: the counts go missing and jobvisor_store_up says 0', async () => {
    const store = memoryStore();
    await defineQueue('a', { handlers: { x: async () => ({}) } }).enqueue(store, 'x', {});
    const registry = new Registry();
    registerMetrics({ registry, store });
    expect(await scrape(registry)).toContain('jobvisor_jobs{queue="a",state="pending"} 1');
    let reads = 0;
    store.getQueueDepths = () => {
      reads += 1;
      return Promise.reject(new Error('connection refused'));
    };
    const lines = await scrape(registry);
    expect(lines).toContain('jobvisor_store_up 0');
    expect(lines.some((line) => line.startsWith('jobvisor_jobs{'))).toBe(false);
    // One read per scrape, shared by the gauges.
    expect(reads).toBe(1);
  });
});

describe('Histogram', () => {
  it('counts cumulatively per bound, with sum and count; values past the last bound only in count', () => {
    const h = new Histogram([1, 10]);
    for (const v of [0.5, 1, 5, 50]) h.observe(v);
    expect(h.snapshot()).toEqual({ buckets: [1, 10], counts: [2, 3], sum: 56.5, count: 4 });
  });
});
