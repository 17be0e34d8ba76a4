/**
 * jobvisor's metrics on the application's own prom-client registry (`jobvisor/prometheus`):
 * collectors read on each scrape, so the app's `/metrics` endpoint, default labels and
 * content type (Prometheus or OpenMetrics) are the ones it already has. prom-client is an
 * optional peer dependency: only this subpath imports it.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, register, type OpenMetricsContentType, type PrometheusContentType, type Registry } from 'prom-client';
import { BACKLOG_STATES, type JobStore, type QueueDepth } from '../adapters/store.js';
import type { QueueCounters } from '../supervisor/counters.js';
import type { Supervisor } from '../supervisor/supervisor.js';
import { DURATION_BUCKETS, type QueueMetrics } from './metrics.js';

export interface RegisterMetricsOptions {
  /** Where the collectors go, in either content type. Default: prom-client's global `register`. */
  registry?: AnyRegistry;
  /** Jobs per queue and state and the oldest due job's age, read from the store on each
   *  scrape: one statement over indexes of unfinished jobs. Default: not read. */
  store?: JobStore;
  /** This process's supervisors: attempts by outcome, claims, running jobs, attempt durations
   *  and queue lag, summed per queue. The histograms count from this call on, so register
   *  before `start()`. Default none. */
  supervisors?: readonly Supervisor[];
  /** Also prom-client's process and Node.js metrics (`collectDefaultMetrics`) on the same
   *  registry. Default false: an app with a registry usually collects them already. */
  processMetrics?: boolean;
}

type AnyRegistry = Registry<PrometheusContentType> | Registry<OpenMetricsContentType>;

export interface RegisteredMetrics {
  /** Removes jobvisor's collectors from the registry (not the process metrics) and stops
   *  feeding its histograms. */
  unregister(): void;
}

/** The attempt outcomes counted per queue, as the supervisor's counters name them. */
const OUTCOMES = ['completed', 'retrying', 'snoozed', 'dead', 'skipped', 'cancelled', 'lost'] as const;

/** Registers jobvisor's collectors on `registry`; they read the store and supervisors on scrape. */
export function registerMetrics(options: RegisterMetricsOptions = {}): RegisteredMetrics {
  const registry: AnyRegistry = options.registry ?? register;
  const registers = [registry];
  const before = new Set(registry.getMetricsAsArray().map((m) => m.name));
  if (options.store) storeMetrics(options.store, registers);
  const supervisors = options.supervisors ?? [];
  const stopListening = supervisors.length > 0 ? supervisorMetrics(supervisors, registers) : () => {};
  const ours = registry.getMetricsAsArray().map((m) => m.name).filter((name) => !before.has(name));
  if (options.processMetrics) collectDefaultMetrics({ register: registry });
  return {
    unregister: () => {
      stopListening();
      for (const name of ours) registry.removeSingleMetric(name);
    },
  };
}

function storeMetrics(store: JobStore, registers: AnyRegistry[]): void {
  // Every gauge of one scrape shares one read: the registry collects its metrics at once. A
  // failed read (the database is down) fails no scrape, which would hide the app's other
  // metrics too: the counts go missing and jobvisor_store_up says 0.
  let reading: Promise<QueueDepth[] | null> | undefined;
  const read = () =>
    (reading ??= store.getQueueDepths().then(
      (depths) => depths,
      () => null,
    ).finally(() => (reading = undefined)));
  new Gauge({
    name: 'jobvisor_store_up',
    help: 'Whether this scrape read the store: 1, or 0 when the read failed and the store\'s counts are missing.',
    registers,
    async collect() {
      this.set((await read()) ? 1 : 0);
    },
  });
  new Gauge({
    name: 'jobvisor_jobs',
    help: 'Jobs in the store per queue and state, exact; completed jobs are not counted.',
    labelNames: ['queue', 'state'] as const,
    registers,
    async collect() {
      const depths = await read();
      this.reset();
      for (const d of depths ?? []) for (const state of BACKLOG_STATES) this.set({ queue: d.queue, state }, d.counts[state]);
    },
  });
  new Gauge({
    name: 'jobvisor_queue_oldest_job_age_seconds',
    help: 'Seconds since the runAt of the queue\'s oldest due pending or retrying job, by the store\'s clock; 0 when none is due.',
    labelNames: ['queue'] as const,
    registers,
    async collect() {
      const depths = await read();
      this.reset();
      for (const d of depths ?? []) this.set({ queue: d.queue }, d.oldestDueAgeSeconds);
    },
  });
}

/** Registers the supervisors' metrics; returns what stops feeding the histograms. */
function supervisorMetrics(supervisors: readonly Supervisor[], registers: AnyRegistry[]): () => void {
  /** Per queue, summed over the supervisors. */
  const perQueue = (value: (q: QueueCounters) => number): Map<string, number> => {
    const sums = new Map<string, number>();
    for (const s of supervisors) {
      for (const [queue, q] of Object.entries(s.counters.getSnapshot().context.queues)) sums.set(queue, (sums.get(queue) ?? 0) + value(q));
    }
    return sums;
  };
  new Counter({
    name: 'jobvisor_attempts_total',
    help: 'Attempts this process ran to an end, per queue and outcome.',
    labelNames: ['queue', 'outcome'] as const,
    registers,
    collect() {
      this.reset();
      for (const outcome of OUTCOMES) for (const [queue, n] of perQueue((q) => q[outcome])) this.inc({ queue, outcome }, n);
    },
  });
  const counter = (name: string, help: string, value: (q: QueueCounters) => number) =>
    new Counter({
      name,
      help,
      labelNames: ['queue'] as const,
      registers,
      collect() {
        this.reset();
        for (const [queue, n] of perQueue(value)) this.inc({ queue }, n);
      },
    });
  new Gauge({
    name: 'jobvisor_running_jobs',
    help: 'Jobs this process holds now, running or claimed ahead.',
    labelNames: ['queue'] as const,
    registers,
    collect() {
      this.reset();
      for (const [queue, n] of perQueue((q) => q.running)) this.set({ queue }, n);
    },
  });
  counter('jobvisor_claims_total', 'Jobs this process claimed.', (q) => q.claimed);
  counter('jobvisor_reaped_total', 'Jobs this process\'s reaper rescued from a lapsed lease or ended past their expiresAt.', (q) => q.rescued);
  // prom-client cannot set a histogram's buckets from the supervisor's own (metrics.ts), so its
  // histograms take each observation as the supervisor makes it: from registration on.
  const histogram = (name: string, help: string) =>
    new Histogram({ name, help, labelNames: ['queue'] as const, buckets: [...DURATION_BUCKETS], registers });
  const histograms: Record<keyof QueueMetrics, Histogram<'queue'>> = {
    attemptSeconds: histogram('jobvisor_attempt_duration_seconds', 'Time from a handler\'s start to its end.'),
    lagSeconds: histogram('jobvisor_queue_lag_seconds', 'Time from a job\'s runAt to its claim, by the store\'s clock.'),
  };
  const stops: Array<() => void> = [];
  for (const supervisor of supervisors) {
    for (const [queue, metrics] of supervisor.metrics.queues()) {
      for (const key of ['attemptSeconds', 'lagSeconds'] as const) {
        histograms[key].zero({ queue });
        stops.push(metrics[key].listen((seconds) => histograms[key].observe({ queue }, seconds)));
      }
    }
  }
  return () => {
    for (const stop of stops) stop();
  };
}
