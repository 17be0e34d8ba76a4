import { describe, expect, it } from 'vitest';
import { jobStory } from '../../src/inspector/job-story.js';
import { renderStorySvg } from '../../src/inspector/story-svg.js';
import type { JobErrorInfo, JobEvent, JobState } from '../../src/types.js';

const T = Date.parse('2026-12-01T10:00:00Z');
const BOOM: JobErrorInfo = { code: 'handler_error', message: 'boom', name: 'Error', stack: 'Error: boom\n    at h (h.ts:1:1)' };
const ev = (from: JobState | null, to: JobState, attempt: number, ms: number, error: JobErrorInfo | null = null): JobEvent => ({
  jobId: '1',
  fromState: from,
  toState: to,
  attempt,
  workerId: attempt > 0 ? `w${attempt}` : null,
  at: new Date(T + ms),
  error,
});

describe('jobStory', () => {
  it('tells a job that failed twice and completed as exactly that, in numbered steps', () => {
    const story = jobStory([
      ev(null, 'pending', 0, 0),
      ev('pending', 'running', 1, 100),
      ev('running', 'retrying', 1, 350, BOOM),
      ev('retrying', 'running', 2, 1_350),
      ev('running', 'retrying', 2, 1_400, { code: 'deadline_exceeded', message: 'over 50 ms' }),
      ev('retrying', 'running', 3, 3_400),
      ev('running', 'completed', 3, 3_500),
    ]);
    expect(story.steps.map((s) => [s.n, s.from, s.to, s.label, s.attempt])).toEqual([
      [1, null, 'waiting', 'enqueued', 0],
      [2, 'waiting', 'running', 'claimed', 1],
      [3, 'running', 'retrying', 'handler threw', 1],
      [4, 'retrying', 'running', 'retry due', 2],
      [5, 'running', 'retrying', 'deadline passed', 2],
      [6, 'retrying', 'running', 'retry due', 3],
      [7, 'running', 'completed', 'handler returned', 3],
    ]);
    expect(story.attempts.map((a) => [a.attempt, a.durationMs, a.outcome, a.how, a.workerId, a.error?.code ?? null])).toEqual([
      [1, 250, 'retrying', 'handler threw', 'w1', 'handler_error'],
      [2, 50, 'retrying', 'deadline passed', 'w2', 'deadline_exceeded'],
      [3, 100, 'completed', 'handler returned', 'w3', null],
    ]);
    expect(story.current).toBe('completed');
  });

  it('tells a job its claim ended for a time no job can have in its row (invalid_row)', () => {
    const story = jobStory([
      ev(null, 'pending', 0, 0),
      ev('pending', 'running', 1, 10),
      ev('running', 'dead', 1, 10, { code: 'invalid_row', message: 'the row cannot be run as a job: run_at is -infinity, not a time in the years 1 to 9999' }),
    ]);
    expect(story.steps.map((s) => `${s.from ?? ''}>${s.to}: ${s.label}`)).toEqual(['>waiting: enqueued', 'waiting>running: claimed', 'running>dead: row not runnable']);
  });

  it('shows a lease the reaper took back as lost, a snooze, a cancel while waiting and a retry by hand', () => {
    const story = jobStory([
      ev(null, 'pending', 0, 0),
      ev('pending', 'running', 1, 10),
      ev('running', 'pending', 1, 20, { code: 'snoozed', message: 'later' }),
      ev('pending', 'running', 1, 30),
      ev('running', 'retrying', 1, 40, { code: 'lease_expired', message: 'lease expired' }),
      ev('retrying', 'cancelled', 1, 50, { code: 'cancelled', message: 'cancelled' }),
      ev('cancelled', 'pending', 1, 60),
    ]);
    expect(story.steps.map((s) => `${s.from ?? ''}>${s.to}: ${s.label}`)).toEqual([
      '>waiting: enqueued',
      'waiting>running: claimed',
      'running>snoozed: handler snoozed',
      'snoozed>running: snooze over',
      'running>lost: lease lost',
      'lost>retrying: rescued',
      'retrying>cancelled: cancel requested',
      'cancelled>waiting: retried by hand',
    ]);
    expect(story.attempts.map((a) => a.outcome)).toEqual(['snoozed', 'lost']);
    expect(story.current).toBe('waiting');
  });

  it('draws each step numbered on its edge, in its attempt’s colour, the way back from retrying too', () => {
    const svg = renderStorySvg(
      jobStory([ev(null, 'pending', 0, 0), ev('pending', 'running', 1, 1), ev('running', 'retrying', 1, 2, BOOM), ev('retrying', 'running', 2, 3), ev('running', 'completed', 2, 4)]),
    );
    const steps = [...svg.matchAll(/<g class="step" data-step="(\d+)" data-attempt="(\d+)" data-edge="([^"]+)">/g)].map((m) => [m[1], m[2], m[3]]);
    expect(steps).toEqual([
      ['2', '1', 'waiting->running'],
      ['3', '1', 'running->retrying'],
      ['4', '2', 'retrying->running'],
      ['5', '2', 'running->completed'],
    ]);
    expect(svg).toContain('data-state="completed" class="state visited current"');
    expect(svg).toContain('width="1000"');
  });
});
