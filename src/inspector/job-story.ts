/**
 * A job's story in the states a user names, read from its history: the numbered steps it took
 * between them (each edge said in words, each step tagged with its attempt) and a timeline of
 * its attempts. The job machine's write states (completing, failing …) fold into the edge they
 * serve; a lease the reaper took back shows as `lost`, then where the rescue put the row.
 */
import type { JobErrorInfo, JobEvent } from '../types.js';

export const STORY_STATES = ['waiting', 'running', 'retrying', 'snoozed', 'sleeping', 'lost', 'completed', 'dead', 'skipped', 'cancelled'] as const;
export type StoryState = (typeof STORY_STATES)[number];

export interface StoryStep {
  /** 1, 2 … in the order taken. */
  n: number;
  from: StoryState | null;
  to: StoryState;
  /** The edge in words: "claimed", "handler threw", "lease lost" … */
  label: string;
  /** The attempt the step belongs to; 0 before the first claim. */
  attempt: number;
  at: Date;
}

export interface StoryAttempt {
  attempt: number;
  startedAt: Date;
  /** null while it runs. */
  endedAt: Date | null;
  durationMs: number | null;
  /** What it ended in (a story state), or null while it runs. */
  outcome: StoryState | null;
  /** Why, in words ("handler threw"); null while it runs. */
  how: string | null;
  workerId: string | null;
  error: JobErrorInfo | null;
}

export interface JobStory {
  steps: StoryStep[];
  attempts: StoryAttempt[];
  current: StoryState | null;
}

/** The row's state as a user names it; `pending` after a snooze is `snoozed`. */
function storyState(state: JobEvent['toState'], code: string | undefined): StoryState {
  if (state === 'pending') return code === 'snoozed' ? 'snoozed' : 'waiting';
  return state;
}

/** Why an attempt ended as it did, from the state written and the error code. */
function outcomeLabel(to: JobEvent['toState'], code: string | undefined): string {
  if (code === 'cancelled') return 'cancel requested';
  if (code === 'deadline_exceeded' || code === 'expired') return 'deadline passed';
  if (code === 'worker_shutdown') return 'worker stopped';
  if (code === 'snoozed') return 'handler snoozed';
  if (code === 'sleep') return 'handler sleeps';
  if (code === 'signal_wait') return 'waits for a signal';
  if (code === 'signal') return 'signal arrived';
  if (code === 'unknown_kind') return 'no handler for its kind';
  if (code === 'invalid_row') return 'row not runnable';
  if (code === 'lease_lost' || code === 'write_refused') return 'lease lost';
  switch (to) {
    case 'completed':
      return 'handler returned';
    case 'dead':
      return code === 'permanent_error' ? 'handler threw, for good' : 'handler threw, no attempt left';
    case 'skipped':
      return 'handler skipped it';
    default:
      return 'handler threw';
  }
}

export function jobStory(events: readonly JobEvent[]): JobStory {
  const steps: StoryStep[] = [];
  const attempts: StoryAttempt[] = [];
  let current: StoryState | null = null;
  const step = (from: StoryState | null, to: StoryState, label: string, attempt: number, at: Date) => {
    steps.push({ n: steps.length + 1, from, to, label, attempt, at });
    current = to;
  };
  for (const event of events) {
    const code = event.error?.code;
    const to = storyState(event.toState, code);
    if (event.fromState === null) {
      step(null, to, 'enqueued', 0, event.at);
      continue;
    }
    if (event.toState === 'running') {
      const label = current === 'retrying' ? 'retry due' : current === 'snoozed' ? 'snooze over' : current === 'sleeping' ? 'woke' : 'claimed';
      step(current, 'running', label, event.attempt, event.at);
      attempts.push({ attempt: event.attempt, startedAt: event.at, endedAt: null, durationMs: null, outcome: null, how: null, workerId: event.workerId, error: null });
      continue;
    }
    if (event.fromState === 'running') {
      const open = attempts.at(-1);
      // The reaper took the lease back: the worker was lost, then the row went on.
      const rescued = code === 'lease_expired';
      const how = rescued ? 'lease lost' : outcomeLabel(event.toState, code);
      if (rescued) {
        step('running', 'lost', 'lease lost', event.attempt, event.at);
        step('lost', to, to === 'dead' ? 'rescued, no attempt left' : 'rescued', event.attempt, event.at);
      } else {
        step('running', to, how, event.attempt, event.at);
      }
      if (open && open.endedAt === null) {
        Object.assign(open, {
          endedAt: event.at,
          durationMs: event.at.getTime() - open.startedAt.getTime(),
          outcome: rescued ? 'lost' : to,
          how,
          error: event.error,
        });
      }
      continue;
    }
    // Outside an attempt: cancelled or expired while waiting, or retried by hand.
    const label = to === 'waiting' ? 'retried by hand' : outcomeLabel(event.toState, code);
    step(current, to, label, event.attempt, event.at);
  }
  return { steps, attempts, current };
}
