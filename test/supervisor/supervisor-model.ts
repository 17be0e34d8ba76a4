/**
 * The supervisor machine as a model for path enumeration: the machine plus a model of the
 * supervisor around it and the store (jobs waiting, jobs held, a claim or reaper pass in
 * flight, whether the queue may have work, the machine's timers), so that `xstate/graph`
 * offers only what a replay on a real supervisor can produce:
 *
 * - `supervisor.start`, `drain` and `stop` as the API sends them;
 * - a job enqueued, and `supervisor.wake` if the supervisor listens to the store (from
 *   start until stopped);
 * - the store going down or coming back;
 * - the answer to a claim or a drain's reaper pass in flight, as the store is now (the
 *   periodic reaper pass of a started supervisor is answered as it starts: it runs beside the
 *   claimer, and letting it answer at any time would multiply the paths without taking a
 *   transition more);
 * - a held job finishing: its row completed, or released once stop aborted it;
 * - the next timer due.
 *
 * The world is stated from what the supervisor promises, for one queue: a claim asks for the
 * free slots while the queue may have work, and a claim that brings back fewer than it asked
 * for says the queue has none, unless a wake-up came while it was on its way; a wake-up (an enqueue heard, the store answering again after
 * it failed) says it may; a claim with nothing to ask answers at once without the store. A
 * claim is in flight (busy) until the store answers, even if the machine stopped waiting for
 * it, and its jobs are held then; after every claim and every finished job comes
 * `supervisor.slotsFreed`. The machine's guards ask this model; its actions are recorded,
 * never run.
 */
import { type ActorLogic, type ActorScope, type AnyEventObject, type SnapshotFrom } from 'xstate';
import type { StatePath } from 'xstate/graph';
import { type ClaimRound, supervisorMachine, type SupervisorMachineInput, type SupervisorRuntime } from '../../src/supervisor/supervisor-machine.js';
import { coveringPaths } from '../support/covering-paths.js';
import { edgeCoveringPaths } from '../support/edge-paths.js';
import { type ModelTimer, recordTimerAction } from '../support/model-timers.js';

export type SupervisorSnapshot = SnapshotFrom<typeof supervisorMachine>;

/** Small multiples of 100 ms: few distinct distances between timers, so few model states. The
 *  backoff does not double (max = first): how long it waits is not a transition. */
export const TIMING = { pollIntervalMs: 200, reaperIntervalMs: 300, errorBackoffMs: 100, maxErrorBackoffMs: 100, graceMs: 500, storeWaitMs: 300 };
export const CONCURRENCY = 2;

/** Jobs waiting in the store, at most: enough for a claim that fills some slots, not all. */
const MAX_PENDING = 1;

type Timer = ModelTimer;

export interface SupervisorWorld {
  now: number;
  timers: Timer[];
  storeUp: boolean;
  /** Due jobs in the store: enqueued, or released by a stop. */
  pending: number;
  /** Jobs claimed by this supervisor and not finished. */
  held: number;
  /** The queue may have due jobs: until a claim of it came back short, and again after a
   *  wake-up or a poll. */
  mayHaveWork: boolean;
  /** A wake-up or poll was noted since the claim in flight was planned: that claim may have
   *  read the store before the work it announces, so its short answer does not clear it. */
  notedSincePlan: boolean;
  /** A store call failed since the last that went through: the next success wakes. */
  storeFailed: boolean;
  /** Of them, those told to abort (abortAll). */
  releasing: number;
  /** The releases written together: the jobs one abort told to stop share one batched write,
   *  which the store answers at once for all of them. */
  releaseBatches: number[];
  /** The store claim in flight: how many it asked for. The machine waits for its answer while
   *  it is in a claiming state (it leaves one only by the answer, or by a stop). */
  claim: { limit: number } | null;
  reapInFlight: boolean;
  /** stop() was called: the real one sends its event once. */
  stopCalled: boolean;
  /** The machine began to stop (releaseHeld): jobs a claim brings from now on are given back
   *  at once, never started (the replay lets those writes through). */
  closing: boolean;
  /** Jobs claimed while stopping whose give-back write waits behind a release batch still
   *  unanswered (the writer sends one batch at a time): they end with that batch. */
  behind: number;
  /** A job finished (its actor done) since the last claim was made. */
  endedSinceClaim: boolean;
  drained: number;
  stopped: boolean;
}

export type ModelSnapshot = {
  status: SupervisorSnapshot['status'];
  output: undefined;
  error: undefined;
  machine: SupervisorSnapshot;
  world: SupervisorWorld;
};

export type FinishEvent = { type: 'job.finished'; outcome: 'completed' | 'released' };

export const STORE_DOWN = new Error('ECONNREFUSED');
const SLOTS_FREED = { type: 'supervisor.slotsFreed' } as const;
const WAKE = { type: 'supervisor.wake' } as const;

/** The world the machine's guards see during a transition. */
let current: SupervisorWorld;

const never = () => Promise.reject(new Error('the model records store calls; it never makes them'));
/** What a claim started now asks for: the free slots, if the queue may have work. */
function claimLimit(world: SupervisorWorld): number {
  return world.mayHaveWork ? CONCURRENCY - world.held : 0;
}

const modelRuntime: SupervisorRuntime = {
  hasFreeSlots: () => current.held < CONCURRENCY,
  wantsClaim: () => claimLimit(current) > 0,
  noteWork: () => {
    current.mayHaveWork = true;
    current.notedSincePlan = true;
  },
  busy: () => current.held > 0 || current.claim !== null,
  endedSinceClaim: () => current.endedSinceClaim,
  claim: never,
  reap: never,
  msUntilClaim: (pollIntervalMs) => pollIntervalMs,
  abortAll: () => {},
  giveUp: () => {},
  releaseHeld: () => {},
  claimFailed: () => {},
  reapFailed: () => {},
  drained: () => {},
  stopped: () => {},
};

export const MACHINE_INPUT: Omit<SupervisorMachineInput, 'runtime'> = {
  pollIntervalMs: TIMING.pollIntervalMs,
  reaperIntervalMs: TIMING.reaperIntervalMs,
  errorBackoffMs: TIMING.errorBackoffMs,
  maxErrorBackoffMs: TIMING.maxErrorBackoffMs,
};

/** `onClaim`: the machine started a claim (startClaim). */
function recorder(world: SupervisorWorld, scope: ActorScope<any, any>, onClaim: () => void = () => {}): ActorScope<any, any> {
  return {
    ...scope,
    actionExecutor: (action) => {
      if (recordTimerAction(world, action)) return;
      switch (action.type) {
        case 'startClaim':
          onClaim();
          break;
        case 'noteWake':
        case 'noteAllWork':
          world.mayHaveWork = true;
          world.notedSincePlan = true;
          break;
        case 'abortAll': {
          // Jobs given back behind a release batch are not told again: they are writing.
          const told = world.held - world.behind;
          if (told > world.releasing) world.releaseBatches = [...world.releaseBatches, told - world.releasing];
          world.releasing = told;
          break;
        }
        case 'releaseHeld':
          world.closing = true;
          break;
        case 'drained':
          world.drained += 1;
          break;
        case 'stopped':
          world.stopped = true;
          break;
      }
    },
  };
}

/** Runs the machine on one event: the world sees what it started (startClaim is a claim made
 *  now, for what the planner asks now; with nothing to ask it answers at once, without the
 *  store) and whether a reaper pass waits. */
function step(snapshot: SupervisorSnapshot, event: AnyEventObject, world: SupervisorWorld, scope: ActorScope<any, any>): SupervisorSnapshot {
  current = world;
  let claimed = false;
  const next = supervisorMachine.transition(snapshot, event as never, recorder(world, scope, () => (claimed = true)) as never);
  world.reapInFlight = next.matches({ running: { reaper: 'reaping' } }) || next.matches({ draining: 'reaping' });
  if (claimed) {
    // The claim plans now: what was noted so far is in what it asks.
    world.notedSincePlan = false;
    world.endedSinceClaim = false;
    const limit = claimLimit(world);
    if (limit === 0) return step(next, { type: 'claim.done', output: { claimed: 0 } satisfies ClaimRound }, world, scope);
    world.claim = { limit };
  }
  return next;
}

/** The machine waits for the claim in flight: it is in the state that started it. */
function awaitsClaim(machine: SupervisorSnapshot): boolean {
  return machine.matches({ running: { claimer: 'claiming' } }) || machine.matches({ draining: 'claiming' });
}

/** A store call went through: after a failure, the supervisor hears the store is back. */
function storeAnswered(machine: SupervisorSnapshot, world: SupervisorWorld, scope: ActorScope<any, any>): SupervisorSnapshot {
  if (!world.storeFailed) return machine;
  world.storeFailed = false;
  return step(machine, WAKE, world, scope);
}

function snapshotOf(machine: SupervisorSnapshot, world: SupervisorWorld): ModelSnapshot {
  return { status: machine.status, output: undefined, error: undefined, machine, world };
}

function reapAnswer(world: SupervisorWorld): AnyEventObject {
  return world.storeUp ? { type: 'reap.done', output: 0 } : { type: 'reap.error', error: STORE_DOWN };
}

/** A reaper pass's answer: the store's news first, then the pass's own. */
function answerReap(machine: SupervisorSnapshot, world: SupervisorWorld, scope: ActorScope<any, any>): SupervisorSnapshot {
  if (world.storeUp) machine = storeAnswered(machine, world, scope);
  else world.storeFailed = true;
  return step(machine, reapAnswer(world), world, scope);
}

/** The periodic reaper pass that just started is answered at once. */
function answerPeriodicReap(machine: SupervisorSnapshot, world: SupervisorWorld, scope: ActorScope<any, any>) {
  if (!world.reapInFlight || !machine.matches({ running: { reaper: 'reaping' } })) return machine;
  return answerReap(machine, world, scope);
}

const supervisorModel: ActorLogic<ModelSnapshot, AnyEventObject, undefined> = {
  getInitialSnapshot: (scope) => {
    const world: SupervisorWorld = {
      now: 0, timers: [], storeUp: true, pending: 0, held: 0, mayHaveWork: true, notedSincePlan: false, storeFailed: false, releasing: 0, releaseBatches: [], claim: null, reapInFlight: false, closing: false, behind: 0,
      stopCalled: false, endedSinceClaim: false, drained: 0, stopped: false,
    };
    current = world;
    return snapshotOf(supervisorMachine.getInitialSnapshot(recorder(world, scope) as never, { ...MACHINE_INPUT, runtime: modelRuntime }), world);
  },
  transition: (snapshot, event, scope) => {
    const world: SupervisorWorld = { ...snapshot.world, timers: [...snapshot.world.timers] };
    let machine = snapshot.machine;
    if (event.type.startsWith('xstate.after.')) {
      const timer = world.timers.find((t) => t.event.type === event.type)!;
      world.now = timer.dueAt;
      world.timers = world.timers.filter((t) => t !== timer);
    } else if (event.type === 'store.down' || event.type === 'store.up') {
      world.storeUp = event.type === 'store.up';
      return snapshotOf(machine, world);
    } else if (event.type === 'supervisor.stop') {
      world.stopCalled = true;
    } else if (event.type === 'job.enqueued') {
      world.pending += 1;
      if (!machine.matches('running') && !machine.matches('stopping')) return snapshotOf(machine, world);
      return snapshotOf(step(machine, WAKE, world, scope), world);
    } else if (event.type === 'job.finished') {
      // Its slot is free once the handler is over (slotsFreed: a claim may start); then its
      // write goes through (the store's news, heard while that claim is on its way), then the
      // actor is done (slotsFreed again). A release batch finishes all its jobs together.
      let done = 1;
      if ((event as FinishEvent).outcome === 'released') {
        [done = 1, ...world.releaseBatches] = world.releaseBatches;
        world.releasing -= done;
        // A released job is due again at once: the next claim may take it.
        world.pending += done;
        // The give-backs that waited behind the batch go through with it.
        if (world.releasing === 0) {
          world.held -= world.behind;
          world.behind = 0;
        }
      }
      world.held -= done;
      machine = step(machine, SLOTS_FREED, world, scope);
      machine = storeAnswered(machine, world, scope);
      world.endedSinceClaim = true;
      return snapshotOf(answerPeriodicReap(step(machine, SLOTS_FREED, world, scope), world, scope), world);
    } else if (event.type === 'reap.done' || event.type === 'reap.error') {
      return snapshotOf(answerPeriodicReap(answerReap(machine, world, scope), world, scope), world);
    } else if (event.type === 'claim.done' || event.type === 'claim.error') {
      // The claim settles: the store's news, its jobs held, the queue's work as it answered,
      // slotsFreed, then the answer, which the machine takes if it still waits for it (a
      // stopping one has no transition for it). The claim is in flight (busy) until its jobs
      // are held.
      const { limit } = world.claim!;
      if (event.type === 'claim.done') {
        machine = storeAnswered(machine, world, scope);
        const { claimed } = event.output as ClaimRound;
        world.pending -= claimed;
        world.held += claimed;
        world.mayHaveWork = claimed >= limit || world.notedSincePlan;
        if (world.closing) {
          // Given back at once, unless a release batch is still waiting for its answer.
          world.pending += claimed;
          if (world.releasing > 0) world.behind += claimed;
          else world.held -= claimed;
        }
      } else {
        world.storeFailed = true;
      }
      world.claim = null;
      machine = step(machine, SLOTS_FREED, world, scope);
      if (!awaitsClaim(machine)) return snapshotOf(answerPeriodicReap(machine, world, scope), world);
    }
    return snapshotOf(answerPeriodicReap(step(machine, event, world, scope), world, scope), world);
  },
  getPersistedSnapshot: (snapshot) => snapshot,
};

/** Every event the world can produce now. */
function eventsFor(snapshot: ModelSnapshot): AnyEventObject[] {
  const { machine, world } = snapshot;
  if (machine.status !== 'active') return [];
  current = world;
  const events: AnyEventObject[] = [];
  if (machine.matches('idle')) events.push({ type: 'supervisor.start' }, { type: 'supervisor.drain' });
  if (!world.stopCalled) events.push({ type: 'supervisor.stop', graceMs: TIMING.graceMs, storeWaitMs: TIMING.storeWaitMs });
  // Enqueueing and finishing a job write to the store: not while it is down.
  if (world.storeUp && world.pending < MAX_PENDING) events.push({ type: 'job.enqueued' });
  events.push({ type: world.storeUp ? 'store.down' : 'store.up' });
  if (world.claim) {
    const output: ClaimRound = { claimed: Math.min(world.pending, world.claim.limit) };
    events.push(world.storeUp ? { type: 'claim.done', output } : { type: 'claim.error', error: STORE_DOWN });
  }
  // Only a drain's pass waits here: a started supervisor's is answered as it starts.
  if (world.reapInFlight) events.push(reapAnswer(world));
  // A job given back behind a release batch never ran: it ends with that batch.
  if (world.storeUp && world.held - world.behind > world.releasing) events.push({ type: 'job.finished', outcome: 'completed' } satisfies FinishEvent);
  if (world.storeUp && world.releasing > 0) events.push({ type: 'job.finished', outcome: 'released' } satisfies FinishEvent);
  // Time moves only to the next timer due, and never onto two at once: which would fire
  // first is the clock's business, not the model's.
  const [next, after] = [...world.timers].sort((a, b) => a.dueAt - b.dueAt);
  if (next && (!after || after.dueAt > next.dueAt)) events.push(next.event);
  return events;
}

/** What the machine's guards can tell apart (and whether an answer reaches the machine). */
function situationKey(snapshot: ModelSnapshot): string {
  const { machine, world } = snapshot;
  return JSON.stringify({
    value: machine.value,
    mayHaveWork: world.mayHaveWork,
    storeFailed: world.storeFailed,
    freeSlots: world.held < CONCURRENCY,
    busy: world.held > 0 || world.claim !== null,
    endedSinceClaim: machine.matches('draining') && world.endedSinceClaim,
    allReleasing: world.releasing === world.held,
    claimAwaited: world.claim !== null && awaitsClaim(machine),
  });
}

/** Everything but time: finite. */
function stateKey(snapshot: ModelSnapshot): string {
  const { machine, world } = snapshot;
  const c = machine.context;
  // Failures beyond this many all wait maxErrorBackoffMs.
  const backoffSteps = Math.ceil(Math.log2(c.maxErrorBackoffMs / c.errorBackoffMs)) + 1;
  return JSON.stringify({
    value: machine.value,
    status: machine.status,
    storeUp: world.storeUp,
    mayHaveWork: world.mayHaveWork,
    notedSincePlan: world.notedSincePlan,
    storeFailed: world.storeFailed,
    failures: Math.min(c.failures, backoffSteps),
    pending: world.pending,
    held: world.held,
    // Read only by a drain's guard (a drain claims before it first reads it).
    endedSinceClaim: machine.matches('draining') && world.endedSinceClaim,
    releasing: world.releaseBatches,
    claim: world.claim && [world.claim.limit, awaitsClaim(machine)],
    reap: world.reapInFlight,
    stopCalled: world.stopCalled,
    drained: world.drained > 0,
    stopped: world.stopped,
  });
}

/** Finite: time relative to now. */
function serializeModel(snapshot: ModelSnapshot): string {
  const { world } = snapshot;
  return `${stateKey(snapshot)} ${JSON.stringify(world.timers.map((t) => [t.event.type, t.dueAt - world.now]).sort())}`;
}

function serializeEvent(event: AnyEventObject): string {
  switch (event.type) {
    case 'claim.done': {
      return `claim(${(event.output as ClaimRound).claimed})`;
    }
    case 'reap.done':
      return 'reap';
    case 'claim.error':
      return 'claim(store down)';
    case 'reap.error':
      return 'reap(store down)';
    case 'job.finished':
      return `job ${(event as FinishEvent).outcome}`;
    case 'job.enqueued':
      return 'enqueue';
    default:
      return event.type.replace(/^xstate\.after\.(\w+)\..*$/, 'after $1').replace(/^supervisor\./, '');
  }
}

export type SupervisorPath = StatePath<ModelSnapshot, AnyEventObject>;

/**
 * Paths from a fresh supervisor to `stopped`. Two parallel regions with their own timers make
 * too many simple paths; instead, every event from every situation (`situationKey`: what the
 * guards can tell apart) gets a path, the shortest way there and on to the end, and of those
 * the fewest are kept that still take every such edge.
 */
export function supervisorPaths(): SupervisorPath[] {
  // The store going down or up needs taking once, not in every situation.
  const edgeKey = (state: ModelSnapshot, event: AnyEventObject) =>
    event.type.startsWith('store.') ? event.type : `${situationKey(state)} ${serializeEvent(event)}`;
  const all = edgeCoveringPaths(supervisorModel, {
    events: eventsFor,
    serializeState: serializeModel,
    serializeEvent: serializeEvent as never,
    isEnd: (state) => state.status === 'done',
    edgeKey,
    limit: 50_000,
  });
  return coveringPaths(all, edgeKey);
}

/** A path in words, for test names and failure messages. */
export function describePath(path: SupervisorPath): string {
  return path.steps.slice(1).map((s) => serializeEvent(s.event)).join(' → ');
}
