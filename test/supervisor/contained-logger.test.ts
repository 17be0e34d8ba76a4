/**
 * A logger that throws is the user's callback like any other: contained. The supervisor
 * starts, runs its jobs and stops whatever the logger does (an outside check: `info` throwing
 * made start() reject and stop() hang).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { defineQueue, InvalidOptionError, type Logger } from '../../src/index.js';
import { createSupervisor } from '../../src/supervisor/supervisor.js';
import { createTestClock, settle } from '../support/sim.js';
import { stopSupervisorsAfterEach } from './harness.js';

const track = stopSupervisorsAfterEach();

afterEach(() => {
  vi.restoreAllMocks();
});

const throwing = (levels: readonly (keyof Logger)[]): Logger => {
  const logger: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
  for (const level of levels) {
    logger[level] = () => {
      throw new Error(`${level} is broken`);
    };
  }
  return logger;
};

describe('a logger that throws', () => {
  for (const levels of [['info'], ['debug', 'info', 'warn', 'error']] as const) {
    it(`throwing on ${levels.join(', ')}: the supervisor starts, runs jobs that succeed and fail, and stops`, async () => {
      const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
      const clock = createTestClock();
      const store = memoryStore({ clock });
      const queue = defineQueue('q', {
        maxAttempts: 1,
        handlers: { ok: () => 'done', fails: () => Promise.reject(new Error('no')) },
      });
      const supervisor = createSupervisor({ store, queues: [queue], clock, workerId: 'w1', logger: throwing(levels) });
      track(supervisor, clock);
      await queue.enqueue(store, 'ok', {});
      await queue.enqueue(store, 'fails', {});
      await supervisor.start();
      for (let i = 0; i < 200 && (await store.listJobs({ queue: 'q' })).some((j) => j.state !== 'completed' && j.state !== 'dead'); i++) await settle(1);
      expect((await store.listJobs({ queue: 'q' })).map((j) => j.state).sort()).toEqual(['completed', 'dead']);
      await supervisor.stop();
      // Said once, not once per entry.
      expect(warnings).toHaveBeenCalledTimes(1);
      expect(String(warnings.mock.calls[0]![0])).toContain('the logger threw');
    });
  }

  it('is refused when it lacks a level, naming it', () => {
    const store = memoryStore();
    const logger = { info: () => {}, warn: () => {}, error: () => {} } as unknown as Logger;
    const queues = [defineQueue('q', { handlers: { ok: () => null } })];
    expect(() => createSupervisor({ store, queues, logger })).toThrow(InvalidOptionError);
    expect(() => createSupervisor({ store, queues, logger })).toThrow('logger: has no debug() method');
  });
});
