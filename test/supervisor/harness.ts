/**
 * Supervisors on a memory store with a simulated clock, for the feature tests of this folder.
 * `supervisorHarness()` registers an afterEach (`stopSupervisorsAfterEach`) that stops every
 * supervisor a test made, driving its clock so the grace timer and release writes happen,
 * and fails the test if one will not stop.
 */
import { afterEach, expect } from 'vitest';
import type { SimulatedClock } from 'xstate';
import { memoryStore, type MemoryStore } from '../../src/adapters/memory/index.js';
import { defineQueue, type Queue } from '../../src/index.js';
import { createSupervisor, type Supervisor, type SupervisorOptions } from '../../src/supervisor/supervisor.js';
import { advance, createTestClock } from '../support/sim.js';

export interface Harness {
  clock: SimulatedClock;
  store: MemoryStore;
  queue: Queue<any>;
  supervisor: Supervisor;
}

/** Registers an afterEach that stops every supervisor given to the function it returns,
 *  driving that supervisor's clock, and fails the test if one will not stop. */
export function stopSupervisorsAfterEach(): (supervisor: Supervisor, clock: SimulatedClock) => void {
  const running: Array<{ supervisor: Supervisor; clock: SimulatedClock }> = [];
  afterEach(async () => {
    for (const { supervisor, clock } of running.splice(0)) {
      let stopped = false;
      void supervisor.stop({ graceMs: 0 }).then(() => {
        stopped = true;
      });
      for (let i = 0; i < 50 && !stopped; i++) await advance(clock, 1_000);
      expect(stopped, 'supervisor did not stop').toBe(true);
    }
  });
  return (supervisor, clock) => {
    running.push({ supervisor, clock });
  };
}

export function supervisorHarness() {
  const track = stopSupervisorsAfterEach();

  /** A supervisor of one queue `work`; pass `store` and `clock` to share them with another. */
  function setup(
    queueOptions: Parameters<typeof defineQueue>[1],
    options: Partial<SupervisorOptions> & { clock?: SimulatedClock; store?: MemoryStore } = {},
  ): Harness {
    const clock = options.clock ?? createTestClock();
    const store = options.store ?? memoryStore({ clock });
    const queue = defineQueue('work', queueOptions);
    const supervisor = createSupervisor({ workerId: 'w1', ...options, store, queues: [queue], clock });
    track(supervisor, clock);
    return { clock, store, queue, supervisor };
  }

  return { setup };
}

export async function pathOf(store: MemoryStore, id: string): Promise<string[]> {
  return (await store.getJobEvents({ id })).map((e) => e.toState);
}
