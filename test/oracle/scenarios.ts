/**
 * Scenarios for the reference model: a table of named cases, one per promise of the README
 * it checks, and a fast-check generator of any mix of handler actions and options on the
 * model's time grid (whole seconds; `expiresAt` half-way between two).
 */
import fc from 'fast-check';
import type { DurableOp, HandlerAction, JobOptions, SignalSend } from './job-fate.js';

export interface Scenario {
  options: JobOptions;
  script: HandlerAction[];
  /** The handler's durable calls, run before its script's action (docs/durable-jobs.md). */
  program?: DurableOp[];
  /** Signals sent from outside. */
  signals?: SignalSend[];
}

const ok: HandlerAction = { do: 'resolve', value: 42 };
const options = (o: Partial<JobOptions> = {}): JobOptions => ({ maxAttempts: 3, deadlineMs: 2_000, expiresAtMs: null, ...o });

export const NAMED: ReadonlyArray<Scenario & { name: string }> = [
  { name: 'a value returned: completed with it, first attempt', options: options(), script: [ok] },
  { name: 'thrown twice then returns: completed on attempt 3 after the backoffs', options: options(), script: [{ do: 'throw' }, { do: 'throw' }, ok] },
  { name: 'thrown on every attempt: dead on the last, handler_error', options: options(), script: [{ do: 'throw' }, { do: 'throw' }, { do: 'throw' }] },
  { name: 'one attempt allowed: a throw is dead at once', options: options({ maxAttempts: 1 }), script: [{ do: 'throw' }] },
  { name: 'PermanentJobError with attempts left: dead at once, no retry', options: options(), script: [{ do: 'permanent' }] },
  { name: 'PermanentJobError after a retry: dead on attempt 2', options: options(), script: [{ do: 'throw' }, { do: 'permanent' }] },
  { name: 'SkipJobError: skipped', options: options(), script: [{ do: 'skip' }] },
  { name: 'snoozed: pending again after its delay, no attempt spent', options: options({ maxAttempts: 1 }), script: [{ do: 'snooze', ms: 2_000 }, ok] },
  { name: 'snoozed twice then thrown until dead: one more attempt per snooze', options: options({ maxAttempts: 1 }), script: [{ do: 'snooze', ms: 1_000 }, { do: 'snooze', ms: 1_000 }, { do: 'throw' }] },
  { name: 'hangs past its deadline: deadline_exceeded, retried', options: options(), script: [{ do: 'hang' }, ok] },
  { name: 'hangs on the last attempt: dead, deadline_exceeded', options: options({ maxAttempts: 1 }), script: [{ do: 'hang' }] },
  { name: 'cancelled while it runs: cancelled', options: options(), script: [{ do: 'cancel' }] },
  { name: 'worker stops while it runs: released, no attempt spent, taken by the next worker', options: options({ maxAttempts: 1 }), script: [{ do: 'shutdown' }, ok] },
  { name: 'expiresAt comes while it hangs: dead, expired, attempts left', options: options({ deadlineMs: 5_000, expiresAtMs: 2_500 }), script: [{ do: 'hang' }] },
  { name: 'expiresAt comes while it waits to retry: dead, expired', options: options({ expiresAtMs: 500 }), script: [{ do: 'throw' }] },
  { name: 'expiresAt comes while snoozed: dead, expired', options: options({ expiresAtMs: 1_500 }), script: [{ do: 'snooze', ms: 2_000 }] },
  { name: 'a retry due before expiresAt runs', options: options({ expiresAtMs: 1_500 }), script: [{ do: 'throw' }, ok] },
  { name: 'its worker crashes: the lease lapses, another worker rescues it and runs it again', options: options(), script: [{ do: 'crash' }, ok] },
  { name: 'its worker crashes on the last attempt: dead, lease_expired', options: options({ maxAttempts: 1 }), script: [{ do: 'crash' }] },
  { name: 'two workers crash in turn: two attempts spent, the third completes', options: options(), script: [{ do: 'crash' }, { do: 'crash' }, ok] },
  { name: 'its worker crashes and expiresAt passes before the rescue: dead, lease_expired, attempts left', options: options({ expiresAtMs: 2_500 }), script: [{ do: 'crash' }] },
  { name: 'its worker crashes and expiresAt comes with the rescue: dead, lease_expired', options: options({ expiresAtMs: 3_500 }), script: [{ do: 'crash' }] },
  { name: 'a zombie: its worker freezes as the handler returns, the job runs again elsewhere, the late result is refused', options: options(), script: [{ do: 'freeze', value: 7 }, ok] },
  { name: 'a zombie on the last attempt: dead, lease_expired, its late result refused', options: options({ maxAttempts: 1 }), script: [{ do: 'freeze', value: 7 }] },
  { name: 'a zombie, then the next attempt throws: retried, the late result refused', options: options(), script: [{ do: 'freeze', value: 7 }, { do: 'throw' }, ok] },
  { name: 'its worker crashes, rescued before expiresAt: runs again', options: options({ expiresAtMs: 4_500 }), script: [{ do: 'crash' }, ok] },
  // Durable jobs: steps, sleeps and signals.
  { name: 'a step stored by a failed attempt is not run again on the retry', options: options(), program: [step('a')], script: [{ do: 'throw' }, ok] },
  { name: 'its worker crashes inside a step, after its side effect: the step runs again on the next attempt', options: options(), program: [step('a', 'crash'), step('b')], script: [ok] },
  { name: 'a zombie frozen inside a step: its checkpoint refused, the step stored by the next attempt', options: options(), program: [step('a', 'freeze')], script: [ok] },
  { name: 'its worker crashes after the step\'s checkpoint: the step not run again', options: options(), program: [step('a')], script: [{ do: 'crash' }, ok] },
  { name: 'a sleep gives the lease back, spends no attempt, and is claimed when due; the step after it runs once', options: options({ maxAttempts: 1 }), program: [step('a'), { op: 'sleep', name: 's', ms: 2_000 }, step('b')], script: [ok] },
  { name: 'slept on the last attempt, then thrown: one more attempt for the sleep, then dead', options: options({ maxAttempts: 1 }), program: [{ op: 'sleep', name: 's', ms: 1_000 }], script: [{ do: 'throw' }] },
  { name: 'a signal sent during the wait wakes it at once; the wait receives its payload', options: options(), program: [step('a'), { op: 'wait', name: 'go', timeoutMs: null }, step('b')], script: [ok], signals: [{ atMs: 3_000, name: 'go', payload: 7 }] },
  { name: 'a signal sent before the wait (while it sleeps) is kept: the wait answers without sleeping', options: options(), program: [{ op: 'sleep', name: 's', ms: 2_000 }, { op: 'wait', name: 'go', timeoutMs: 5_000 }], script: [ok], signals: [{ atMs: 1_000, name: 'go', payload: 3 }] },
  { name: 'a signal of another name is kept; the wait times out and the job goes on', options: options(), program: [{ op: 'wait', name: 'go', timeoutMs: 3_000 }], script: [ok], signals: [{ atMs: 1_000, name: 'other', payload: 1 }] },
  { name: 'a signal after the job ended is refused', options: options(), program: [{ op: 'wait', name: 'go', timeoutMs: 2_000 }], script: [ok], signals: [{ atMs: 5_000, name: 'go', payload: 1 }] },
  { name: 'two signals at one moment: the first wakes the job, which takes it and ends; the second is refused', options: options(), program: [{ op: 'wait', name: 'go', timeoutMs: null }], script: [ok], signals: [{ atMs: 2_000, name: 'go', payload: 1 }, { atMs: 2_000, name: 'go', payload: 2 }] },
  { name: 'expiresAt comes while it sleeps: dead, expired, the step after the sleep never run', options: options({ expiresAtMs: 2_500 }), program: [{ op: 'sleep', name: 's', ms: 5_000 }, step('b')], script: [ok] },
  { name: 'expiresAt comes while it waits for a signal: dead, expired; a later signal refused', options: options({ expiresAtMs: 3_500 }), program: [{ op: 'wait', name: 'go', timeoutMs: null }], script: [ok], signals: [{ atMs: 5_000, name: 'go', payload: 1 }] },
  { name: 'a wait with no timeout and no signal sleeps on', options: options(), program: [step('a'), { op: 'wait', name: 'go', timeoutMs: null }], script: [ok] },
  { name: 'a signal while the job runs (hanging to its deadline) is kept for the wait of the retry', options: options({ deadlineMs: 3_000 }), program: [{ op: 'wait', name: 'go', timeoutMs: 0 }], script: [{ do: 'hang' }, ok], signals: [{ atMs: 1_000, name: 'go', payload: 5 }] },
];

function step(name: string, fault?: 'crash' | 'freeze'): DurableOp {
  return fault ? { op: 'step', name, fault } : { op: 'step', name };
}

const action: fc.Arbitrary<HandlerAction> = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 9 }).map((value): HandlerAction => ({ do: 'resolve', value })) },
  { weight: 4, arbitrary: fc.constant<HandlerAction>({ do: 'throw' }) },
  { weight: 1, arbitrary: fc.constant<HandlerAction>({ do: 'permanent' }) },
  { weight: 1, arbitrary: fc.constant<HandlerAction>({ do: 'skip' }) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 3 }).map((s): HandlerAction => ({ do: 'snooze', ms: 1_000 * s })) },
  { weight: 2, arbitrary: fc.constant<HandlerAction>({ do: 'hang' }) },
  { weight: 1, arbitrary: fc.constant<HandlerAction>({ do: 'cancel' }) },
  { weight: 1, arbitrary: fc.constant<HandlerAction>({ do: 'shutdown' }) },
  { weight: 1, arbitrary: fc.constant<HandlerAction>({ do: 'crash' }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 9 }).map((value): HandlerAction => ({ do: 'freeze', value })) },
);

const NAMES = ['a', 'b', 'c'] as const;

/** A durable call, named by its place in the program (names are unique per run). */
const durableOp: fc.Arbitrary<(name: string) => DurableOp> = fc.oneof(
  { weight: 4, arbitrary: fc.constant((name: string) => step(name)) },
  { weight: 1, arbitrary: fc.constantFrom<'crash' | 'freeze'>('crash', 'freeze').map((fault) => (name: string) => step(name, fault)) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 3 }).map((s) => (name: string): DurableOp => ({ op: 'sleep', name, ms: 1_000 * s })) },
  {
    weight: 3,
    arbitrary: fc.option(fc.integer({ min: 0, max: 4 }), { freq: 3 }).map((s) => (name: string): DurableOp => ({ op: 'wait', name, timeoutMs: s === null ? null : 1_000 * s })),
  },
);

/** Signals to the program's waits (and to a name none waits for), at whole seconds. */
const signal: fc.Arbitrary<SignalSend> = fc.record({
  atMs: fc.integer({ min: 1, max: 15 }).map((s) => 1_000 * s),
  name: fc.constantFrom(...NAMES, 'x'),
  payload: fc.integer({ min: 0, max: 9 }),
});

/** Few attempts, so that scripts run out of attempts as often as they succeed. */
export const scenarios: fc.Arbitrary<Scenario> = fc.record({
  options: fc.record({
    maxAttempts: fc.integer({ min: 1, max: 4 }),
    deadlineMs: fc.integer({ min: 1, max: 3 }).map((s) => 1_000 * s),
    expiresAtMs: fc.option(fc.integer({ min: 0, max: 12 }).map((s) => 1_000 * s + 500), { freq: 2 }),
  }),
  script: fc.array(action, { minLength: 1, maxLength: 6 }),
  program: fc.array(durableOp, { maxLength: NAMES.length }).map((ops) => ops.map((op, i) => op(NAMES[i]!))),
  signals: fc.array(signal, { maxLength: 3 }),
});
