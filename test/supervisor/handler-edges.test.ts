/**
 * Handlers as users write them, outside the happy path, through the public API: synchronous
 * handlers, thrown values that are hard to read, and results that change after they were
 * returned. Each ends its attempt as its async, well-behaved form would, and none holds back
 * another job.
 */
import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { defineQueue, PermanentJobError, SkipJobError, type Handler } from '../../src/index.js';
import { createSupervisor } from '../../src/supervisor/supervisor.js';
import type { JobRecord } from '../../src/types.js';
import { createTestClock } from '../support/sim.js';
import { interceptStore } from '../support/store-proxy.js';
import { stopSupervisorsAfterEach } from './harness.js';

const track = stopSupervisorsAfterEach();

/** Runs one job of each kind, two attempts each at most, and returns the rows by kind. */
async function runEach(handlers: Record<string, Handler>, maxAttempts = 2): Promise<Record<string, JobRecord>> {
  const clock = createTestClock();
  const store = memoryStore({ clock });
  const queue = defineQueue('edges', { handlers, maxAttempts, backoff: () => 0, concurrency: 4 });
  const supervisor = createSupervisor({ store, queues: [queue], clock, workerId: 'w1' });
  track(supervisor, clock);
  const ids = new Map<string, string>();
  for (const kind of Object.keys(handlers)) ids.set(kind, (await queue.enqueue(store, kind as never, {})).job.id);
  // Each drain runs what is due: the first attempts, then the retries (backoff 0).
  for (let i = 0; i < maxAttempts; i++) await supervisor.drain();
  const rows: Record<string, JobRecord> = {};
  for (const [kind, id] of ids) rows[kind] = (await store.getJob({ id }))!;
  return rows;
}

describe('synchronous handlers', () => {
  it('a value, a throw, a permanent error and a skip settle as their async forms do', async () => {
    const rows = await runEach({
      value: () => ({ photos: 20 }),
      nothing: () => undefined,
      throws: () => {
        throw new Error('upstream 503');
      },
      permanent: () => {
        throw new PermanentJobError('place is gone');
      },
      skip: () => {
        throw new SkipJobError('nothing to do');
      },
    });
    expect(rows.value).toMatchObject({ state: 'completed', attempt: 1, result: { photos: 20 } });
    expect(rows.nothing).toMatchObject({ state: 'completed', attempt: 1, result: null });
    expect(rows.throws).toMatchObject({ state: 'dead', attempt: 2, error: { code: 'handler_error', message: 'upstream 503' } });
    expect(rows.permanent).toMatchObject({ state: 'dead', attempt: 1, error: { code: 'permanent_error', message: 'place is gone' } });
    expect(rows.skip).toMatchObject({ state: 'skipped', attempt: 1, error: { code: 'skipped' } });
  });

  it('a thenable, and a value whose `then` throws when read, settle too', async () => {
    const rows = await runEach({
      thenable: () => ({ then: (resolve: (v: unknown) => void) => resolve({ ok: true }) }),
      badThen: () =>
        Object.defineProperty({}, 'then', {
          get() {
            throw new Error('then is poisoned');
          },
        }),
    }, 1);
    expect(rows.thenable).toMatchObject({ state: 'completed', result: { ok: true } });
    expect(rows.badThen).toMatchObject({ state: 'dead', error: { code: 'handler_error', message: 'then is poisoned' } });
  });
});

describe('thrown values that are hard to read', () => {
  it('each ends the attempt as handler_error with what can be read safely', async () => {
    const cyclic = Object.create(null) as Record<string, unknown>;
    cyclic.self = cyclic;
    const badMessage = new Error('x');
    Object.defineProperty(badMessage, 'message', {
      get() {
        throw new Error('message getter');
      },
    });
    const badStack = new Error('stack is poisoned');
    Object.defineProperty(badStack, 'stack', {
      get() {
        throw new Error('stack getter');
      },
    });
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const { proxy: revokedError, revoke: revokeError } = Proxy.revocable(new Error('revoked'), {});
    revokeError();
    const thrown = { cyclic, badMessage, badStack, proxy, revokedError } as Record<string, unknown>;
    const handlers = Object.fromEntries(
      Object.entries(thrown).map(([kind, value]) => [
        kind,
        async () => {
          throw value;
        },
      ]),
    );
    const rows = await runEach(handlers, 1);
    for (const kind of Object.keys(thrown)) {
      expect(rows[kind], kind).toMatchObject({ state: 'dead', attempt: 1, error: { code: 'handler_error' } });
      expect(typeof rows[kind]!.error!.message, kind).toBe('string');
    }
    expect(rows.badStack!.error).toMatchObject({ message: 'stack is poisoned', name: 'Error' });
    expect(rows.badStack!.error!.stack).toBeUndefined();
    expect(rows.badMessage!.error!.message).toBe('(the thrown value could not be read)');
  });

  it('a message or a stack megabytes long is kept cut to its first 16,384 characters', async () => {
    const huge = new Error('m'.repeat(5_000_000));
    huge.stack = 's'.repeat(2_000_000);
    const rows = await runEach({ huge: async () => Promise.reject(huge), text: async () => Promise.reject('t'.repeat(1_000_000)) }, 1);
    expect(rows.huge!.error!.message).toBe(`${'m'.repeat(16_384)}… (${5_000_000 - 16_384} more characters)`);
    expect(rows.huge!.error!.stack).toBe(`${'s'.repeat(16_384)}… (${2_000_000 - 16_384} more characters)`);
    expect(rows.text!.error!.message).toHaveLength(16_384 + `… (${1_000_000 - 16_384} more characters)`.length);
  });
});

describe('results that change after they were returned', () => {
  it('are read once, when the handler settles: one bad result holds back no other write', async () => {
    const clock = createTestClock();
    const memory = memoryStore({ clock });
    // Writes that take a round trip, as a database's do: outcomes that come meanwhile wait for
    // the next batch, by which time a result changed after its handler returned has changed.
    const store = interceptStore(memory, {
      setStatesIfRunning: async (params) => {
        await new Promise((resolve) => setImmediate(resolve));
        return memory.setStatesIfRunning(params);
      },
    });
    let executions = 0;
    const queue = defineQueue('results', {
      concurrency: 50,
      handlers: {
        work: async ({ payload }: { payload: { n: number } }) => {
          executions += 1;
          const result: Record<string, unknown> = { n: payload.n };
          if (payload.n % 30 === 0) {
            // After the handler has settled: a field becomes a BigInt, and a getter appears
            // that throws whenever it is read.
            setImmediate(() => {
              result.big = 10n;
              Object.defineProperty(result, 'poison', {
                enumerable: true,
                get() {
                  throw new Error('read after return');
                },
              });
            });
          }
          return result;
        },
      },
    });
    const supervisor = createSupervisor({ store, queues: [queue], clock, workerId: 'w1' });
    track(supervisor, clock);
    await queue.enqueueMany(store, Array.from({ length: 300 }, (_, i) => ({ kind: 'work' as const, payload: { n: i } })));
    expect(await supervisor.drain()).toBe(300);
    expect(executions).toBe(300);
    const counts = await store.countJobs();
    expect(counts).toEqual([{ queue: 'results', state: 'completed', count: 300 }]);
    const changed = await store.getJob({ id: (await store.listJobs({ queue: 'results', limit: 300 })).find((j) => (j.payload as { n: number }).n === 30)!.id });
    expect(changed!.result).toEqual({ n: 30 });
  });
});
