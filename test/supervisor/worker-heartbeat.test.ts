/**
 * Every started supervisor keeps a row in the store's workers table: written at start, moved
 * every heartbeat with what it holds, removed at stop; a failing heartbeat never stops jobs.
 */
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { WORKER_HEARTBEAT_MS } from '../../src/supervisor/worker-heartbeat.js';
import { advance, until } from '../support/sim.js';
import { supervisorHarness } from './harness.js';

describe('worker heartbeat', () => {
  const { setup } = supervisorHarness();

  it('records the supervisor at start, moves its last seen with its running count, and removes it at stop', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let running = false;
    const hold = () => {
      running = true;
      return held;
    };
    const { clock, store, queue, supervisor } = setup({ handlers: { hold } });
    const started = clock.now();
    await supervisor.start();
    await until('the worker recorded', async () => (await store.listWorkers()).length === 1);
    expect(await store.listWorkers()).toEqual([
      { workerId: 'w1', host: hostname(), pid: process.pid, queues: ['work'], running: 0, held: [], startedAt: new Date(started), lastSeenAt: new Date(started) },
    ]);
    const { job } = await queue.enqueue(store, 'hold', {});
    await until('the job runs', () => running);
    await advance(clock, WORKER_HEARTBEAT_MS);
    await until('the heartbeat written', async () => (await store.listWorkers())[0]?.running === 1);
    expect(await store.listWorkers()).toEqual([
      expect.objectContaining({
        running: 1,
        // Its handler runs: none is held for a slot (a job claimed ahead would be listed).
        held: [],
        startedAt: new Date(started),
        lastSeenAt: new Date(started + WORKER_HEARTBEAT_MS),
      }),
    ]);
    release();
    await supervisor.stop();
    expect(await store.listWorkers()).toEqual([]);
  });

  it('a heartbeat the store refuses is logged, and the supervisor runs on', async () => {
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, error() {}, warn: (_: object, msg?: string) => void warnings.push(msg ?? '') };
    const { clock, store, queue, supervisor } = setup({ handlers: { k: async () => 'ok' } }, { logger });
    store.recordWorker = () => Promise.reject(new Error('workers table gone'));
    const failures = () => warnings.filter((w) => w === 'worker heartbeat failed; trying again at the next').length;
    await supervisor.start();
    await until('the refused heartbeat logged', () => failures() === 1);
    const { job } = await queue.enqueue(store, 'k', {});
    await advance(clock, 100);
    await until('the job completed', async () => (await store.getJob({ id: job.id }))?.state === 'completed');
    await advance(clock, WORKER_HEARTBEAT_MS);
    await until('the next refused heartbeat logged', () => failures() === 2);
    expect(failures()).toBe(2);
  });

  it('a store that throws instead of returning a promise fails the heartbeat, the removal and the unsubscribe, not the supervisor', async () => {
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, error() {}, warn: (_: object, msg?: string) => void warnings.push(msg ?? '') };
    const { clock, store, queue, supervisor } = setup({ handlers: { k: async () => 'ok' } }, { logger });
    const subscribe = store.subscribe.bind(store);
    store.subscribe = async (...args: Parameters<typeof store.subscribe>) => {
      await subscribe(...args);
      return () => {
        throw new Error('listener gone');
      };
    };
    store.recordWorker = () => {
      throw new Error('workers table gone');
    };
    store.removeWorker = () => {
      throw new Error('workers table gone');
    };
    const heartbeatFailures = () => warnings.filter((w) => w === 'worker heartbeat failed; trying again at the next').length;
    await supervisor.start();
    expect(heartbeatFailures()).toBe(1);
    const { job } = await queue.enqueue(store, 'k', {});
    await advance(clock, 100);
    await until('the job completed', async () => (await store.getJob({ id: job.id }))?.state === 'completed');
    await advance(clock, WORKER_HEARTBEAT_MS);
    await until('the next failed heartbeat logged', () => heartbeatFailures() === 2);
    await supervisor.stop();
    expect(warnings).toContain('could not remove this worker’s row; it is forgotten once long unseen');
    expect(warnings).toContain('unsubscribing from store notifications failed');
  });
});
