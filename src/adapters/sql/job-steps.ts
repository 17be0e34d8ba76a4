/**
 * A job's stored steps as `JobStep`s: its rows of job_steps (migration 0027), which the select
 * list (job-row.ts) reads as one compact jsonb object per entry, as 0017 stored them in the
 * job's row, with times in epoch ms: {n: name, k: kind, a: at, v: value, u: until, s: signal,
 * r: a wait's status}. Total: an entry no version of the library wrote is left out, never
 * thrown on (a read must answer whatever a row holds).
 */
import type { JobStep } from '../../types.js';
import { LATEST_DATE } from '../../validation.js';

interface StoredStep {
  n?: unknown;
  k?: unknown;
  a?: unknown;
  v?: unknown;
  u?: unknown;
  s?: unknown;
  r?: unknown;
}

export function parseSteps(raw: unknown): JobStep[] {
  if (!Array.isArray(raw)) return [];
  const steps: JobStep[] = [];
  for (const entry of raw as StoredStep[]) {
    const step = entry !== null && typeof entry === 'object' ? parseStep(entry) : null;
    if (step) steps.push(step);
  }
  return steps;
}

function parseStep(entry: StoredStep): JobStep | null {
  if (typeof entry.n !== 'string' || typeof entry.a !== 'number') return null;
  const name = entry.n;
  const at = new Date(entry.a);
  const until = typeof entry.u === 'number' ? new Date(entry.u) : null;
  switch (entry.k) {
    case 'step':
      return { kind: 'step', name, at, result: entry.v ?? null };
    case 'sleep':
      return until ? { kind: 'sleep', name, at, until } : null;
    case 'signal': {
      if (typeof entry.s !== 'string') return null;
      const status = entry.r === 'received' || entry.r === 'timedOut' ? entry.r : 'waiting';
      // A wait with no timeout waits until the latest time a job can have.
      const timeout = until !== null && until.getTime() < LATEST_DATE ? until : null;
      const step: JobStep = { kind: 'signal', name, at, signal: entry.s, status, until: timeout };
      if (status === 'received') step.payload = entry.v ?? null;
      return step;
    }
    default:
      return null;
  }
}
