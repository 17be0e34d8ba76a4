/**
 * Metrics in Prometheus' text exposition format (version 0.0.4), for a `/metrics` endpoint:
 * the store's backlog (shared by every worker) and each supervisor's own counters and
 * histograms (this process only; Prometheus sums them across processes).
 */
import type { BacklogState, JobStore } from '../adapters/store.js';
import type { QueueCounters } from '../supervisor/counters.js';
import type { Supervisor } from '../supervisor/supervisor.js';
import type { HistogramSnapshot } from './metrics.js';

export interface PrometheusMetricsOptions {
  /** Jobs per queue and state, read from the store: one bounded query. Default: not read. */
  store?: JobStore;
  /** This process's supervisors: attempts by outcome, claims, running jobs, attempt durations
   *  and queue lag. Default none. */
  supervisors?: readonly Supervisor[];
  /** Each backlog count stops at this many (a count equal to it means at least). Default 10,000. */
  maxCount?: number;
}

/** The attempt outcomes counted per queue, as the supervisor's counters name them. */
const OUTCOMES = ['completed', 'retrying', 'snoozed', 'dead', 'skipped', 'cancelled', 'lost'] as const;
/** Every state a job is counted in; `waiting`: jobs of flows waiting for others (workflows.md). */
const BACKLOG_STATES: readonly BacklogState[] = ['pending', 'retrying', 'running', 'dead', 'skipped', 'cancelled', 'waiting', 'sleeping'];

export async function prometheusMetrics(options: PrometheusMetricsOptions): Promise<string> {
  const out = new Exposition();
  if (options.store) {
    const backlogs = await options.store.getQueueBacklogs({ maxCount: options.maxCount ?? 10_000 });
    out.family('jobvisor_jobs', 'gauge', 'Jobs in the store per queue and state, each count capped at maxCount; completed jobs are not counted.');
    for (const b of backlogs) for (const state of BACKLOG_STATES) out.sample('jobvisor_jobs', { queue: b.queue, state }, b.counts[state]);
    out.family('jobvisor_queue_oldest_run_at_seconds', 'gauge', 'Unix time of the earliest runAt among the queue\'s pending and retrying jobs.');
    for (const b of backlogs) {
      if (b.oldestRunAt) out.sample('jobvisor_queue_oldest_run_at_seconds', { queue: b.queue }, b.oldestRunAt.getTime() / 1000);
    }
  }
  const supervisors = options.supervisors ?? [];
  if (supervisors.length === 0) return out.text();
  const each = supervisors.map((s) => ({ worker: s.workerId, counters: s.counters.getSnapshot().context.queues, metrics: s.metrics.snapshot() }));
  const perQueue = (name: string, help: string, type: string, value: (q: QueueCounters) => number) => {
    out.family(name, type, help);
    for (const { worker, counters } of each) {
      for (const [queue, q] of Object.entries(counters)) out.sample(name, { worker, queue }, value(q));
    }
  };
  out.family('jobvisor_attempts_total', 'counter', 'Attempts this process ran to an end, per queue and outcome.');
  for (const { worker, counters } of each) {
    for (const [queue, q] of Object.entries(counters)) {
      for (const outcome of OUTCOMES) out.sample('jobvisor_attempts_total', { worker, queue, outcome }, q[outcome]);
    }
  }
  perQueue('jobvisor_claims_total', 'Jobs this process claimed.', 'counter', (q) => q.claimed);
  perQueue('jobvisor_reaped_total', 'Jobs this process\'s reaper rescued from a lapsed lease or ended past their expiresAt.', 'counter', (q) => q.rescued);
  perQueue('jobvisor_running_jobs', 'Jobs this process holds now, running or claimed ahead.', 'gauge', (q) => q.running);
  const histograms = [
    ['jobvisor_attempt_duration_seconds', 'Time from a handler\'s start to its end.', 'attemptSeconds'],
    ['jobvisor_queue_lag_seconds', 'Time from a job\'s runAt to its claim, by the store\'s clock.', 'lagSeconds'],
  ] as const;
  for (const [name, help, key] of histograms) {
    out.family(name, 'histogram', help);
    for (const { worker, metrics } of each) for (const m of metrics) out.histogram(name, { worker, queue: m.queue }, m[key]);
  }
  return out.text();
}

class Exposition {
  readonly #lines: string[] = [];

  family(name: string, type: string, help: string): void {
    this.#lines.push(`# HELP ${name} ${help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${name} ${type}`);
  }

  sample(name: string, labels: Record<string, string>, value: number): void {
    this.#lines.push(`${name}{${labelText(labels)}} ${formatValue(value)}`);
  }

  histogram(name: string, labels: Record<string, string>, h: HistogramSnapshot): void {
    h.buckets.forEach((bound, i) => this.sample(`${name}_bucket`, { ...labels, le: formatValue(bound) }, h.counts[i]!));
    this.sample(`${name}_bucket`, { ...labels, le: '+Inf' }, h.count);
    this.sample(`${name}_sum`, labels, h.sum);
    this.sample(`${name}_count`, labels, h.count);
  }

  text(): string {
    return this.#lines.length === 0 ? '' : `${this.#lines.join('\n')}\n`;
  }
}

function labelText(labels: Record<string, string>): string {
  return Object.entries(labels)
    .map(([key, value]) => `${key}="${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`)
    .join(',');
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}
