import { describe, expect, it } from 'vitest';
import { jobMachinePath } from '../../src/inspector/job-path.js';
import { layoutMachine } from '../../src/inspector/machine-svg.js';
import { jobMachine } from '../../src/machines/job-machine.js';
import type { JobEvent, JobState } from '../../src/types.js';

const graph = layoutMachine(jobMachine).graph;

/** A history from `[from, to, attempt, errorCode?]` rows. */
function history(...rows: Array<[JobState | null, JobState, number, string?]>): JobEvent[] {
  return rows.map(([fromState, toState, attempt, code]) => ({
    jobId: '1',
    fromState,
    toState,
    attempt,
    workerId: attempt > 0 ? 'w1' : null,
    at: new Date(0),
    error: code ? { code, message: code } : null,
  }));
}

describe('jobMachinePath', () => {
  it('has no path before the first claim', () => {
    expect(jobMachinePath(graph, history([null, 'pending', 0]))).toEqual({ states: [], edges: [], current: null });
  });

  it('is in running while the attempt runs', () => {
    const path = jobMachinePath(graph, history([null, 'pending', 0], ['pending', 'running', 1]));
    expect(path).toEqual({ states: ['claimed', 'running'], edges: ['claimed->running'], current: 'running' });
  });

  it.each([
    ['completed', undefined, ['claimed', 'running', 'completing', 'completed']],
    ['retrying', 'handler_error', ['claimed', 'running', 'failing', 'retrying']],
    ['retrying', 'deadline_exceeded', ['claimed', 'running', 'failing', 'retrying']],
    ['retrying', 'worker_shutdown', ['claimed', 'releasing', 'retrying']],
    ['dead', 'permanent_error', ['claimed', 'running', 'dying', 'dead']],
    ['skipped', 'unknown_kind', ['claimed', 'skipping', 'skipped']],
    ['skipped', 'skipped', ['claimed', 'running', 'skipping', 'skipped']],
    ['cancelled', 'cancelled', ['claimed', 'running', 'cancelling', 'cancelled']],
    // Snoozed: the row is pending again, the machine ended in `snoozed` (not `claimed`).
    ['pending', 'snoozed', ['claimed', 'running', 'snoozing', 'snoozed']],
    // Rescued by the reaper: the worker was last seen running; the machine wrote nothing.
    ['dead', 'lease_expired', ['claimed', 'running']],
    // Ended by the claim for a time no job can have in its row: no actor ran.
    ['dead', 'invalid_row', ['claimed']],
  ] as const)('an attempt that ended %s (%s) went through %j', (toState, code, states) => {
    const path = jobMachinePath(graph, history([null, 'pending', 0], ['pending', 'running', 1], ['running', toState, 1, code]));
    expect(path.states).toEqual(states);
    expect(path.edges).toEqual(states.slice(1).map((state, i) => `${states[i]}->${state}`));
    expect(path.current).toBe(states.at(-1));
  });

  it('joins the attempts of a job that failed, was retried by hand and completed', () => {
    const path = jobMachinePath(
      graph,
      history(
        [null, 'pending', 0],
        ['pending', 'running', 1],
        ['running', 'retrying', 1, 'handler_error'],
        ['retrying', 'running', 2],
        ['running', 'dead', 2, 'handler_error'],
        ['dead', 'pending', 2],
        ['pending', 'running', 3],
        ['running', 'completed', 3],
      ),
    );
    expect(new Set(path.states)).toEqual(
      new Set(['claimed', 'running', 'failing', 'retrying', 'dying', 'dead', 'completing', 'completed']),
    );
    expect(path.current).toBe('completed');
  });

  it('draws only edges the machine has', () => {
    const edges = new Set(graph.edges.map((e) => `${e.source}->${e.target}`));
    for (const [toState, code] of [['completed'], ['retrying', 'worker_shutdown'], ['dead'], ['skipped', 'unknown_kind'], ['cancelled'], ['pending', 'snoozed']] as const) {
      const path = jobMachinePath(graph, history(['pending', 'running', 1], ['running', toState, 1, code]));
      for (const edge of path.edges) expect(edges).toContain(edge);
    }
  });
});
