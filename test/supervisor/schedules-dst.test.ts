/**
 * A DST fall-back repeats an hour of wall time: `30 1 * * *` in America/New_York reads 01:30
 * EDT and then 01:30 EST on 2027-11-07. Its tick is 01:30 EDT only, whether one supervisor
 * runs straight through or one is restarted in the repeated hour (catchUp false): the last
 * tick the store holds makes the restart skip 01:30 EST. On every store.
 */
import { afterEach, expect, it } from 'vitest';
import type { SimulatedClock } from 'xstate';
import type { JobStore } from '../../src/adapters/store.js';
import { defineQueue, defineSchedule, type Job, type Supervisor } from '../../src/index.js';
import { createSupervisor } from '../../src/supervisor/supervisor.js';
import { advance, createTestClock, settle, until } from '../support/sim.js';
import { interceptStore } from '../support/store-proxy.js';
import { describeEachStore } from '../support/test-stores.js';
import { stopSupervisorsAfterEach } from './harness.js';

const track = stopSupervisorsAfterEach();
const MINUTE = 60_000;
const reports = defineQueue('reports', { handlers: { render: async (_job: Job<null>) => null } });
/** What the supervisors run: not the reports, whose jobs stay as the scheduler wrote them. */
const idle = defineQueue('idle', { handlers: { none: async (_job: Job<null>) => null } });
const daily = defineSchedule({ name: 'nightly', cron: '30 1 * * *', timezone: 'America/New_York', queue: reports, kind: 'render', payload: null });
/** 01:30 EDT, the day's tick; 01:30 EST is an hour later. */
const TICK = '2027-11-07T05:30:00.000Z';

describeEachStore('a daily schedule over the DST fall-back', (testStore) => {
  const stores: JobStore[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    await testStore.reset();
  });

  /** One store for the test (every supervisor shares it), and a way to wait for the
   *  schedulers' calls to it: a database answers in real time, not within a settle. */
  async function openStore(clock: SimulatedClock) {
    const store = await testStore.create(clock);
    stores.push(store);
    let pending = 0;
    const counted = async <T>(call: Promise<T>) => {
      pending++;
      try {
        return await call;
      } finally {
        pending--;
      }
    };
    const watched = interceptStore(store, {
      getSchedules: (params) => counted(store.getSchedules(params)),
      enqueueScheduledJobs: (params) => counted(store.enqueueScheduledJobs(params)),
    });
    /** Moves the clock a minute at a time, each time until the schedulers' calls are answered. */
    const minutes = async (n: number) => {
      for (let i = 0; i < n; i++) {
        clock.increment(MINUTE);
        await until('the scheduler\'s store calls are answered', async () => {
          await settle(2);
          return pending === 0;
        }, 50_000);
      }
    };
    return { store: watched, minutes };
  }

  async function start(store: JobStore, clock: SimulatedClock, workerId: string) {
    const supervisor = createSupervisor({ store, queues: [idle], schedules: [daily], clock, workerId });
    track(supervisor, clock);
    await supervisor.start();
    return supervisor;
  }

  async function stop(supervisor: Supervisor) {
    let stopped = false;
    void supervisor.stop({ graceMs: 0 }).then(() => (stopped = true));
    await until('the supervisor stops', () => stopped, 50_000);
  }

  const ticks = async (store: JobStore) => (await store.listJobs({ queue: 'reports' })).map((job) => job.runAt.toISOString());

  it('one supervisor running through the repeated hour enqueues 01:30 once', async () => {
    const clock = createTestClock(Date.parse('2027-11-07T05:20:00Z'));
    const { store, minutes } = await openStore(clock);
    const supervisor = await start(store, clock, 'w1');
    await minutes(90);
    expect(await ticks(store)).toEqual([TICK]);
    await stop(supervisor);
  });

  it('a supervisor restarted at 01:45 EST does not enqueue 01:30 again', async () => {
    const clock = createTestClock(Date.parse('2027-11-07T05:20:00Z'));
    const { store, minutes } = await openStore(clock);
    const first = await start(store, clock, 'w1');
    await minutes(15);
    expect(await ticks(store)).toEqual([TICK]);
    await stop(first);
    await advance(clock, 70 * MINUTE, 10 * MINUTE); // 06:45Z: 01:45 EST
    const second = await start(store, clock, 'w2');
    await minutes(10);
    expect(await ticks(store)).toEqual([TICK]);
    await stop(second);
  });
});
