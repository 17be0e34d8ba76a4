/**
 * Dead-job alerts as a fleet sees them, through the public API: one alert per natural key per
 * window across every supervisor on the store, the count held back since carried by the next
 * alert whatever other keys alerted meanwhile, and user callbacks that throw contained.
 */
import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { defineQueue, PermanentJobError } from '../../src/index.js';
import type { DeadJobAlert } from '../../src/supervisor/alerts.js';
import { createSupervisor } from '../../src/supervisor/supervisor.js';
import type { Logger } from '../../src/types.js';
import { advance, createTestClock, settle, until } from '../support/sim.js';
import { stopSupervisorsAfterEach } from './harness.js';

const track = stopSupervisorsAfterEach();

const dies = async () => {
  throw new PermanentJobError('place is gone');
};

function recordingLogger() {
  const errors: Array<{ obj: object; msg: string | undefined }> = [];
  const logger: Logger = { debug() {}, info() {}, warn() {}, error: (obj, msg) => void errors.push({ obj, msg }) };
  return { logger, errors };
}

describe('dead-job alerts across a fleet', () => {
  it('one natural key dying six times across two supervisors gives one alert; the next carries the five held back', async () => {
    const clock = createTestClock();
    const store = memoryStore({ clock });
    const alerts: DeadJobAlert[] = [];
    const queue = defineQueue('places', { handlers: { describe: dies }, alertKey: (job) => (job.payload as { placeId: string }).placeId });
    const [a, b] = ['w1', 'w2'].map((workerId) =>
      createSupervisor({ store, queues: [queue], clock, workerId, alertThrottleMs: 60_000, onDead: (alert) => void alerts.push(alert) }),
    );
    track(a!, clock);
    track(b!, clock);
    for (let i = 0; i < 6; i++) {
      await queue.enqueue(store, 'describe', { placeId: 'p1' });
      await (i % 2 ? a! : b!).drain();
    }
    await until('the first alert', () => alerts.length > 0);
    // The five later deaths are held back, not late: the turns they would take pass with none.
    await settle();
    expect(alerts.map((x) => x.dedupeKey)).toEqual(['job_dead:places:describe:p1']);

    // Another key alerts first after the window: p1's held-back count is not lost.
    await advance(clock, 60_000);
    await queue.enqueue(store, 'describe', { placeId: 'p2' });
    await a!.drain();
    await queue.enqueue(store, 'describe', { placeId: 'p1' });
    await b!.drain();
    await until('two more alerts', () => alerts.length >= 3);
    expect(alerts.slice(1).map((x) => [x.dedupeKey, x.suppressed])).toEqual([
      ['job_dead:places:describe:p2', 0],
      ['job_dead:places:describe:p1', 5],
    ]);
  });
});

describe('alert keys that are not strings', () => {
  it('a numeric key is its decimal text: places 101, 202 and 303 dying give three alerts; 101 again is held back', async () => {
    const clock = createTestClock();
    const store = memoryStore({ clock });
    const alerts: DeadJobAlert[] = [];
    const queue = defineQueue('places', {
      handlers: { describe: dies },
      alertKey: (job) => (job.payload as { placeId: number }).placeId,
    });
    const supervisor = createSupervisor({ store, queues: [queue], clock, onDead: (alert) => void alerts.push(alert) });
    track(supervisor, clock);
    for (const placeId of [101, 202, 303, 101]) await queue.enqueue(store, 'describe', { placeId });
    expect(await supervisor.drain()).toBe(4);
    await until('three alerts', () => alerts.length >= 3);
    // The fourth death (101 again) is held back: the turns it would take pass with none.
    await settle();
    expect(alerts.map((a) => a.dedupeKey).sort()).toEqual(['job_dead:places:describe:101', 'job_dead:places:describe:202', 'job_dead:places:describe:303']);
  });

  it('a key that is no string or number (an object, a symbol, NaN) is logged as an InvalidOptionError, and every such alert goes out', async () => {
    const clock = createTestClock();
    const store = memoryStore({ clock });
    const alerts: DeadJobAlert[] = [];
    const { logger, errors } = recordingLogger();
    const keys: unknown[] = [{ id: 1 }, { id: 2 }, Symbol('p'), Number.NaN];
    const queue = defineQueue('places', {
      handlers: { describe: dies },
      alertKey: (job) => keys[(job.payload as { n: number }).n] as string,
    });
    const supervisor = createSupervisor({ store, queues: [queue], clock, logger, onDead: (alert) => void alerts.push(alert) });
    track(supervisor, clock);
    for (let n = 0; n < keys.length; n++) await queue.enqueue(store, 'describe', { n });
    expect(await supervisor.drain()).toBe(4);
    await until('four alerts', () => alerts.length >= 4);
    expect(alerts.map((a) => [a.dedupeKey, a.suppressed])).toEqual(Array(4).fill(['job_dead:places:describe:', 0]));
    expect(errors.map((e) => (e.obj as { err: { code: string; option: string; message: string } }).err)).toEqual([
      expect.objectContaining({ code: 'invalid_option', option: 'queue "places" alertKey', message: expect.stringMatching(/returned an object for job \d+; it must return a string, a finite number or undefined$/) }),
      expect.objectContaining({ message: expect.stringMatching(/returned an object for job/) }),
      expect.objectContaining({ message: expect.stringMatching(/returned a symbol for job/) }),
      expect.objectContaining({ message: expect.stringMatching(/returned NaN for job/) }),
    ]);
  });
});

describe('user callbacks that throw are contained', () => {
  it('an alertKey that throws is logged; the alert still goes out, unthrottled, keyed by queue and kind', async () => {
    const clock = createTestClock();
    const store = memoryStore({ clock });
    const alerts: DeadJobAlert[] = [];
    const { logger, errors } = recordingLogger();
    const queue = defineQueue('places', {
      handlers: { describe: dies },
      alertKey: () => {
        throw new Error('alertKey is broken');
      },
    });
    const supervisor = createSupervisor({ store, queues: [queue], clock, logger, onDead: (alert) => void alerts.push(alert) });
    track(supervisor, clock);
    const { job } = await queue.enqueue(store, 'describe', { placeId: 'p1' });
    expect(await supervisor.drain()).toBe(1);
    await until('the alert', () => alerts.length > 0);
    expect(alerts).toEqual([expect.objectContaining({ dedupeKey: 'job_dead:places:describe:', job: expect.objectContaining({ id: job.id }) })]);
    expect(errors.map((e) => (e.obj as { err: Error }).err.message)).toEqual(['alertKey is broken']);
    // The supervisor goes on: another job runs, and its death alerts too, not held back under
    // the shared key (it may be another place).
    await queue.enqueue(store, 'describe', { placeId: 'p2' });
    expect(await supervisor.drain()).toBe(1);
    await until('the second alert', () => alerts.length > 1);
    expect(alerts.map((a) => a.suppressed)).toEqual([0, 0]);
  });

  it('an onDead that throws or rejects is logged, and the worker goes on', async () => {
    for (const onDead of [
      () => {
        throw new Error('sink threw');
      },
      async () => {
        throw new Error('sink rejected');
      },
    ]) {
      const clock = createTestClock();
      const store = memoryStore({ clock });
      const { logger, errors } = recordingLogger();
      const queue = defineQueue('q', { handlers: { k: dies } });
      const supervisor = createSupervisor({ store, queues: [queue], clock, logger, onDead });
      track(supervisor, clock);
      await queue.enqueue(store, 'k', {});
      await queue.enqueue(store, 'k', {});
      expect(await supervisor.drain()).toBe(2);
      await until('the sink failed', () => errors.length > 0);
      // The second death's alert is held back by the first's window: no second failure comes.
      await settle();
      expect(errors.map((e) => e.msg)).toEqual(['dead-job alert sink failed']);
    }
  });
});
