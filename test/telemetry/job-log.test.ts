/**
 * Every log line about a job has one shape: the supervisor's dead-job line (a library's, with
 * no CLI around it) reads like the CLI worker's completed and retrying lines.
 */
import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { defineQueue, PermanentJobError } from '../../src/index.js';
import { createSupervisor } from '../../src/supervisor/supervisor.js';
import { jobLogLine } from '../../src/telemetry/job-log.js';
import type { Logger } from '../../src/types.js';
import { createTestClock } from '../support/sim.js';
import { stopSupervisorsAfterEach } from '../supervisor/harness.js';

const track = stopSupervisorsAfterEach();
const job = { id: '12', queue: 'mail', kind: 'send', attempt: 2, maxAttempts: 3 };

describe('jobLogLine', () => {
  it('names the job, its attempt, the details and the error on one line', () => {
    const line = jobLogLine(job, 'retrying', 'failed, will retry', { code: 'handler_error', message: 'SMTP 421\n  try later', name: 'Error' }, ['12 ms']);
    expect(line.message).toBe('job 12 mail/send failed, will retry (attempt 2 of 3, 12 ms): handler_error: SMTP 421 try later');
    expect(line.fields).toEqual({ job, jobEvent: 'retrying', error: { code: 'handler_error', message: 'SMTP 421\n  try later', name: 'Error' } });
  });

  it('has no error field without an error, and keeps only the job fields it names', () => {
    const line = jobLogLine({ ...job, payload: { secret: 1 } } as typeof job, 'completed', 'completed', null);
    expect(line).toEqual({ fields: { job, jobEvent: 'completed' }, message: 'job 12 mail/send completed (attempt 2 of 3)' });
  });
});

describe('the supervisor’s own job lines', () => {
  it('a dead job is logged at warn in the shape of every job line', async () => {
    const clock = createTestClock();
    const store = memoryStore({ clock });
    const warnings: Array<{ obj: object; msg: string | undefined }> = [];
    const logger: Logger = { debug() {}, info() {}, warn: (obj, msg) => void warnings.push({ obj, msg }), error() {} };
    const queue = defineQueue('places', {
      handlers: {
        describe: async () => {
          throw new PermanentJobError('place is gone');
        },
      },
    });
    const supervisor = createSupervisor({ store, queues: [queue], clock, logger });
    track(supervisor, clock);
    const { job: enqueued } = await queue.enqueue(store, 'describe', {});
    expect(await supervisor.drain()).toBe(1);
    expect(warnings).toEqual([
      {
        obj: {
          job: { id: enqueued.id, queue: 'places', kind: 'describe', attempt: 1, maxAttempts: enqueued.maxAttempts },
          jobEvent: 'dead',
          error: expect.objectContaining({ code: 'permanent_error', message: 'place is gone' }),
        },
        msg: `job ${enqueued.id} places/describe is dead (attempt 1 of ${enqueued.maxAttempts}): permanent_error: place is gone`,
      },
    ]);
  });
});
