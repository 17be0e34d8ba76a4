/**
 * The floor under jobvisor's CPU per job: what the job actors cost with no database, no
 * supervisor and no store, measured the same way as the drain (process.cpuUsage() over the
 * window, ÷ jobs). Two actors, `concurrency` at a time:
 * - the real job machine (src/machines/job-machine.ts), its ports answering at once: a
 *   no-op handler, every write applied; it takes the drain's path claimed → running →
 *   completing → completed, its heartbeat and deadline asked of a WakeTimer (the supervisor's
 *   one timer) and dropped when it is done, as the supervisor does;
 * - the least an XState v5 actor per job can be: a machine of three states and one event
 *   each way, no timers, no context.
 * Neither touches the database: the figures are what XState alone puts on every job, the
 * part of the drain's CPU that no SQL or batching can take away. The same two, 10,000 of each
 * held in flight (the job actor running with its handler pending), give the heap's floor.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as JobMachineModule from '../../src/machines/job-machine.js';
import type * as WakeTimerModule from '../../src/supervisor/wake-timer.js';
import type * as Xstate from 'xstate';
import type { RunResult, RunSpec } from './run-spec.js';

const WARMUP = 2_000;

export async function actorFloor(spec: RunSpec): Promise<RunResult> {
  const load = (path: string) => import(pathToFileURL(join(spec.jobvisorRoot, path)).href);
  const { jobMachine } = (await load('src/machines/job-machine.ts')) as typeof JobMachineModule;
  // The supervisor's one timer that job actors ask to wake them (a checkout before it has none:
  // its actors set XState timers of their own and never ask).
  const wakes = await load('src/supervisor/wake-timer.ts').then(
    (m: typeof WakeTimerModule) => new m.WakeTimer({ now: () => Date.now() }),
    () => undefined,
  );
  // The xstate the job machine was built with, so both actors run the same copy.
  const xstatePath = createRequire(join(spec.jobvisorRoot, 'package.json')).resolve('xstate');
  const { createActor, createMachine } = (await import(pathToFileURL(xstatePath).href)) as typeof Xstate;
  const concurrency = spec.concurrency ?? 50;

  const policy = { leaseMs: 30_000, heartbeatMs: 10_000, deadlineMs: 900_000, writeRetryMs: 1_000 };
  const ports = {
    runHandler: async () => undefined,
    writeOutcome: async () => true,
    renewLease: async () => true,
    freeSlot: () => {},
    wakeAt: (actor: JobMachineModule.WakeTarget, event: JobMachineModule.WakeEvent, at: number) => wakes!.wakeAt(actor, event, at),
    now: () => Date.now(),
    backoffMs: () => 1_000,
    suspend: async () => ({ answer: 'lost' as const }),
  };
  const jobActor = (i: number) =>
    new Promise<void>((resolve) => {
      const actor = createActor(jobMachine, {
        input: { job: claimedJob(i), ports, policy, hasHandler: true, waitForStart: false, leaseValidUntil: Date.now() + policy.leaseMs, expiresAtMs: null },
      });
      // As the supervisor does when the job's slot frees.
      actor.subscribe({ complete: () => (wakes?.drop(actor), resolve()) });
      actor.start();
    });

  const minimal = createMachine({
    initial: 'claimed',
    states: { claimed: { on: { start: 'running' } }, running: { on: { done: 'completed' } }, completed: { type: 'final' } },
  });
  const minimalActor = () =>
    new Promise<void>((resolve) => {
      const actor = createActor(minimal);
      actor.subscribe({ complete: () => resolve() });
      actor.start();
      actor.send({ type: 'start' });
      // The answer arrives later, as a handler's would.
      void Promise.resolve().then(() => actor.send({ type: 'done' }));
    });

  // The heap floor: actors held in the state a job in flight is in (the job actor running,
  // its handler pending and its timers set; the minimal one in `running`), after a full GC.
  const pending = new Promise<never>(() => {});
  const runningPorts = { ...ports, runHandler: () => pending };
  const runningJobActor = (i: number) => {
    const actor = createActor(jobMachine, {
      input: { job: claimedJob(i), ports: runningPorts, policy, hasHandler: true, waitForStart: false, leaseValidUntil: Date.now() + policy.leaseMs, expiresAtMs: null },
    });
    actor.start();
    return { stop: () => (actor.stop(), wakes?.drop(actor)) };
  };
  const runningMinimalActor = () => {
    const actor = createActor(minimal);
    actor.start();
    actor.send({ type: 'start' });
    return actor;
  };

  return {
    metrics: {
      jobActorUs: await cpuPerJob(jobActor, spec.jobs, concurrency),
      minimalActorUs: await cpuPerJob(minimalActor, spec.jobs, concurrency),
      jobActorHeapKb: heapPerActor(runningJobActor, HEAP_ACTORS),
      minimalActorHeapKb: heapPerActor(runningMinimalActor, HEAP_ACTORS),
    },
  };
}

const HEAP_ACTORS = 10_000;

/** KB of heap each of `count` live actors holds, after a full GC (`--expose-gc`; the bench's
 *  children have it). Their timers are cleared after: the process goes on to other figures. */
function heapPerActor(make: (i: number) => { stop(): void }, count: number): number {
  const gc = globalThis.gc;
  if (!gc) throw new Error('the actor scenario needs --expose-gc');
  const collectedHeap = () => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  const before = collectedHeap();
  const actors = Array.from({ length: count }, (_, i) => make(i));
  const after = collectedHeap();
  for (const actor of actors) actor.stop();
  return (after - before) / 1024 / count;
}

/** µs of CPU per job, running `jobs` of them `concurrency` at a time, after a warm-up. */
async function cpuPerJob(run: (i: number) => Promise<void>, jobs: number, concurrency: number): Promise<number> {
  const batches = async (count: number) => {
    for (let done = 0; done < count; done += concurrency) {
      await Promise.all(Array.from({ length: Math.min(concurrency, count - done) }, (_, k) => run(done + k)));
    }
  };
  await batches(WARMUP);
  const cpu0 = process.cpuUsage();
  await batches(jobs);
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / jobs;
}

/** A job as a claim returns it; the actor reads only a few of its fields. */
function claimedJob(i: number) {
  const now = new Date();
  return {
    id: String(i + 1),
    queue: 'bench',
    kind: 'noop',
    payload: { n: i },
    state: 'running' as const,
    priority: 0,
    runAt: now,
    attempt: 1,
    maxAttempts: 25,
    uniqueKey: null,
    concurrencyKey: null,
    workerId: 'bench',
    leaseToken: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    leaseExpiresAt: now,
    result: null,
    error: null,
    createdAt: now,
    updatedAt: now,
    finishedAt: null,
    expiresAt: null,
    cancelRequestedAt: null,
    progress: null,
    traceContext: null, steps: [], waitingForSignal: null, tenant: null, debounceKey: null,
  };
}
