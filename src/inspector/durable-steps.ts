/**
 * A durable job's stored steps, sleeps and signal waits as the job page lists them
 * (docs/durable-jobs.md): in the order they were stored, each saying whether a replay of the
 * handler gets it back without running or waiting again (`stored`), or not: a wait still on,
 * or an entry a later one of its name superseded (a wait that ended).
 */
import type { JobRecord, JobStep } from '../types.js';

export type DurableStatus = 'stored' | 'sleeping' | 'slept' | 'waiting' | 'received' | 'timedOut' | 'superseded';

export interface DurableStepView {
  name: string;
  kind: JobStep['kind'];
  at: Date;
  status: DurableStatus;
  /** A replay returns this entry without running the step or waiting again. */
  stored: boolean;
  /** A step's result or a received signal's payload. */
  value?: unknown;
  /** A sleep's end, or a wait's timeout (null: none). */
  until?: Date | null;
  /** The signal a wait is for. */
  signal?: string;
}

export function durableSteps(job: Pick<JobRecord, 'state' | 'steps'>): DurableStepView[] {
  const latest = new Map<string, number>();
  job.steps.forEach((step, i) => latest.set(step.name, i));
  return job.steps.map((step, i) => {
    const view = viewOf(step, job.state === 'sleeping' && i === job.steps.length - 1);
    return latest.get(step.name) === i ? view : { ...view, status: 'superseded', stored: false };
  });
}

function viewOf(step: JobStep, sleepingOnIt: boolean): DurableStepView {
  const { name, kind, at } = step;
  switch (step.kind) {
    case 'step':
      return { name, kind, at, status: 'stored', stored: true, value: step.result };
    case 'sleep':
      return { name, kind, at, status: sleepingOnIt ? 'sleeping' : 'slept', stored: !sleepingOnIt, until: step.until };
    case 'signal': {
      const view: DurableStepView = { name, kind, at, status: step.status, stored: step.status !== 'waiting', until: step.until, signal: step.signal };
      if (step.status === 'received') view.value = step.payload;
      return view;
    }
  }
}
