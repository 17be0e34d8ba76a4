/**
 * The supervisor machine as a model for path enumeration: the machine plus a model of its
 * runtime and the store (jobs waiting, jobs held, a claim or reaper pass in flight, the
 * machine's timers), so that `xstate/graph` offers only what a replay can produce:
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
 * The runtime behaves as the real one (supervisor.ts): a claim is in flight (busy) until the
 * store answers, even if the machine stopped waiting for it, and its jobs are held then; after
 * every claim and every finished job it sends `supervisor.slotsFreed`. The machine's guards
 * ask this model runtime; its actions are recorded, never run.
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
export const TIMING = { pollIntervalMs: 200, reaperIntervalMs: 300, errorBackoffMs: 100, maxErrorBackoffMs: 100, graceMs: 500 };
export const CONCURRENCY = 2;

/** Jobs waiting in the store, at most: enough for a claim that fills some slots, not all. */
const MAX_PENDING = 1;

type Timer = ModelTimer;

export interface SupervisorWorld {
  now: number;
  timers: Timer[];
  storeUp: boolean;
  /** Due jobs in the store. */
  pending: number;
  /** Jobs claimed by this supervisor and not finished. */
  held: number;
  /** Of them, those told to abort (abortAll). */
  releasing: number;
  /** The store claim in flight: how many it asked for, and the machine's invoke waiting for
   *  it (gone if the machine moved on). */
  claim: { limit: number; invoke: unknown } | null;
  reapInFlight: boolean;
  /** stop() was called: the real one sends its event once. */
  stopCalled: boolean;
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

const never = () => Promise.reject(new Error('the model records invokes; it never runs them'));
const modelRuntime: SupervisorRuntime = {
  hasFreeSlots: () => current.held < CONCURRENCY,
  busy: () => current.held > 0 || current.claim !== null,
  claim: never,
  reap: never,
  abortAll: () => {},
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

function recorder(world: SupervisorWorld, scope: ActorScope<any, any>): ActorScope<any, any> {
  return {
    ...scope,
    actionExecutor: (action) => {
      if (recordTimerAction(world, action)) return;
      switch (action.type) {
        case 'abortAll':
          world.releasing = world.held;
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

/** Runs the machine on one event: the world sees what it started (a new `claim` child is a
 *  claim the runtime makes now, for the slots free now) and whether a reaper pass waits. */
function step(snapshot: SupervisorSnapshot, event: AnyEventObject, world: SupervisorWorld, scope: ActorScope<any, any>) {
  current = world;
  const next = supervisorMachine.transition(snapshot, event as never, recorder(world, scope) as never);
  const invoke = next.children.claim;
  if (invoke && invoke !== snapshot.children.claim) world.claim = { limit: CONCURRENCY - world.held, invoke };
  world.reapInFlight = next.children.reap !== undefined;
  return next;
}

function snapshotOf(machine: SupervisorSnapshot, world: SupervisorWorld): ModelSnapshot {
  return { status: machine.status, output: undefined, error: undefined, machine, world };
}

function reapAnswer(world: SupervisorWorld): AnyEventObject {
  return world.storeUp ? { type: 'xstate.done.actor.reap', output: 0 } : { type: 'xstate.error.actor.reap', error: STORE_DOWN };
}

/** The periodic reaper pass that just started is answered at once. */
function answerPeriodicReap(machine: SupervisorSnapshot, world: SupervisorWorld, scope: ActorScope<any, any>) {
  if (!world.reapInFlight || !machine.matches({ running: { reaper: 'reaping' } })) return machine;
  return step(machine, reapAnswer(world), world, scope);
}

const supervisorModel: ActorLogic<ModelSnapshot, AnyEventObject, undefined> = {
  getInitialSnapshot: (scope) => {
    const world: SupervisorWorld = {
      now: 0, timers: [], storeUp: true, pending: 0, held: 0, releasing: 0, claim: null, reapInFlight: false,
      stopCalled: false, drained: 0, stopped: false,
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
      world.held -= 1;
      if ((event as FinishEvent).outcome === 'released') world.releasing -= 1;
      return snapshotOf(answerPeriodicReap(step(machine, SLOTS_FREED, world, scope), world, scope), world);
    } else if (event.type === 'xstate.done.actor.claim' || event.type === 'xstate.error.actor.claim') {
      // The claim settles: its jobs are held, slotsFreed goes out, then the answer reaches
      // the invoke if the machine still waits for it.
      const invoke = world.claim!.invoke;
      if (event.type === 'xstate.done.actor.claim') {
        const { claimed } = event.output as ClaimRound;
        world.pending -= claimed;
        world.held += claimed;
      }
      world.claim = null;
      machine = step(machine, SLOTS_FREED, world, scope);
      if (machine.children.claim !== invoke) return snapshotOf(machine, world);
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
  if (!world.stopCalled) events.push({ type: 'supervisor.stop', graceMs: TIMING.graceMs });
  // Enqueueing and finishing a job write to the store: not while it is down.
  if (world.storeUp && world.pending < MAX_PENDING) events.push({ type: 'job.enqueued' });
  events.push({ type: world.storeUp ? 'store.down' : 'store.up' });
  if (world.claim) {
    const claimed = Math.min(world.pending, world.claim.limit);
    const output: ClaimRound = { claimed, full: world.claim.limit > 0 && claimed >= world.claim.limit };
    events.push(world.storeUp ? { type: 'xstate.done.actor.claim', output } : { type: 'xstate.error.actor.claim', error: STORE_DOWN });
  }
  // Only a drain's pass waits here: a started supervisor's is answered as it starts.
  if (world.reapInFlight) events.push(reapAnswer(world));
  if (world.storeUp && world.held > world.releasing) events.push({ type: 'job.finished', outcome: 'completed' } satisfies FinishEvent);
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
    workLikely: machine.context.workLikely,
    freeSlots: world.held < CONCURRENCY,
    busy: world.held > 0 || world.claim !== null,
    allReleasing: world.releasing === world.held,
    claimAwaited: world.claim !== null && world.claim.invoke === machine.children.claim,
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
    workLikely: c.workLikely,
    failures: Math.min(c.failures, backoffSteps),
    pending: world.pending,
    held: world.held,
    releasing: world.releasing,
    claim: world.claim && [world.claim.limit, world.claim.invoke === machine.children.claim],
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
    case 'xstate.done.actor.claim': {
      const { claimed, full } = event.output as ClaimRound;
      return `claim(${claimed}${full ? ', full' : ''})`;
    }
    case 'xstate.done.actor.reap':
      return 'reap';
    case 'xstate.error.actor.claim':
      return 'claim(store down)';
    case 'xstate.error.actor.reap':
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
