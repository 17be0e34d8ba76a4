/**
 * The job page's list of a durable job's stored entries (src/inspector/durable-steps.ts):
 * what a replay gets back (`stored`), what is still waited for, what a later entry superseded.
 */
import { describe, expect, it } from 'vitest';
import { durableSteps } from '../../src/inspector/durable-steps.js';
import type { JobStep } from '../../src/types.js';

const at = new Date('2030-01-01T00:00:00Z');
const until = new Date('2030-01-08T00:00:00Z');

describe('durableSteps', () => {
  it('a step is stored with its result; a signal wait still on is not; a later entry supersedes an earlier one', () => {
    const steps: JobStep[] = [
      { kind: 'step', name: 'charge', at, result: { chargeId: 'ch_1' } },
      { kind: 'signal', name: 'shipped', at, signal: 'shipped', status: 'waiting', until },
      { kind: 'signal', name: 'shipped', at, signal: 'shipped', status: 'received', until: null, payload: { carrier: 'dhl' } },
      { kind: 'signal', name: 'shipped#2', at, signal: 'shipped', status: 'timedOut', until },
      { kind: 'sleep', name: 'cool-off', at, until },
    ];
    expect(durableSteps({ state: 'sleeping', steps })).toEqual([
      { name: 'charge', kind: 'step', at, status: 'stored', stored: true, value: { chargeId: 'ch_1' } },
      { name: 'shipped', kind: 'signal', at, status: 'superseded', stored: false, until, signal: 'shipped' },
      { name: 'shipped', kind: 'signal', at, status: 'received', stored: true, until: null, signal: 'shipped', value: { carrier: 'dhl' } },
      { name: 'shipped#2', kind: 'signal', at, status: 'timedOut', stored: true, until, signal: 'shipped' },
      { name: 'cool-off', kind: 'sleep', at, status: 'sleeping', stored: false, until },
    ]);
  });

  it('a sleep the job no longer sleeps on is over; a wait the job sleeps on is waiting', () => {
    const sleep: JobStep = { kind: 'sleep', name: 'nap', at, until };
    const wait: JobStep = { kind: 'signal', name: 'approved', at, signal: 'approved', status: 'waiting', until: null };
    expect(durableSteps({ state: 'running', steps: [sleep] })).toMatchObject([{ status: 'slept', stored: true }]);
    expect(durableSteps({ state: 'sleeping', steps: [sleep, wait] })).toMatchObject([
      { status: 'slept', stored: true },
      { status: 'waiting', stored: false },
    ]);
    expect(durableSteps({ state: 'pending', steps: [] })).toEqual([]);
  });
});
