import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../../src/adapters/memory/index.js';
import { InvalidOptionError } from '../../../src/errors.js';
import type { ClaimedJob } from '../../../src/types.js';

describe('memoryStore', () => {
  const job = { queue: 'q', kind: 'k', maxAttempts: 3 };

  it('numbers jobs "1", "2", … and reads the wall clock by default', async () => {
    const store = memoryStore();
    const before = Date.now();
    const results = await store.enqueueJobs({ jobs: [{ ...job, payload: 1 }, { ...job, payload: 2 }] });
    await store.enqueueJobs({ jobs: [{ ...job, payload: 3 }] });
    expect(results.map((r) => r.job.id)).toEqual(['1', '2']);
    expect((await store.listJobs({})).map((j) => j.id)).toEqual(['3', '2', '1']);
    const createdAt = results[0]!.job.createdAt.getTime();
    expect(createdAt).toBeGreaterThanOrEqual(before);
    expect(createdAt).toBeLessThanOrEqual(Date.now());
  });

  it('refuses a SQL client with an InvalidOptionError naming it', async () => {
    const store = memoryStore();
    const client = { query: async () => ({ rows: [] }) };
    const attempt = store.enqueueJobs({ jobs: [{ ...job, payload: {} }], client });
    await expect(attempt).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(attempt).rejects.toMatchObject({ option: 'client' });
  });

  it('stores a JSON copy of what it is given, as a jsonb column would', async () => {
    const store = memoryStore();
    const payload = { list: [1, 2], when: new Date(0), gone: undefined as unknown };
    const [result] = await store.enqueueJobs({ jobs: [{ ...job, payload }] });
    payload.list.push(3);
    expect((await store.getJob({ id: result!.job.id }))!.payload).toEqual({ list: [1, 2], when: '1970-01-01T00:00:00.000Z' });
    expect(Object.keys(result!.job.payload as object)).toEqual(['list', 'when']);
  });

  it('hands out deep copies: changing a returned row, job or event changes nothing inside', async () => {
    const store = memoryStore();
    const [first] = await store.enqueueJobs({ jobs: [{ ...job, payload: { list: [1] } }] });
    const id = first!.job.id;
    const snapshot = await store.getJob({ id });

    const mutate = (row: { payload: unknown; runAt: Date; error: unknown; state: string }) => {
      (row.payload as { list: number[] }).list.push(99);
      row.runAt.setTime(0);
      row.state = 'completed';
    };
    mutate((await store.getJob({ id }))!);
    mutate((await store.listJobs({}))[0]!);
    mutate((await store.enqueueJobs({ jobs: [{ ...job, payload: { list: [] } }] }))[0]!.job);
    expect(await store.getJob({ id })).toEqual(snapshot);

    const [claimed] = (await store.claimJobs({ workerId: 'w1', leaseMs: 1_000, queues: [{ queue: 'q', limit: 1 }] })) as [ClaimedJob];
    const claimedSnapshot = structuredClone(claimed);
    claimed.leaseExpiresAt.setTime(0);
    claimed.leaseToken = 'stolen';
    (claimed.payload as { list: number[] }).list.length = 0;
    expect(await store.getJob({ id })).toEqual(claimedSnapshot);

    const outcome = { id, leaseToken: claimedSnapshot.leaseToken, state: 'dead' as const, error: { code: 'x', message: 'm' } };
    expect(await store.setStatesIfRunning({ outcomes: [outcome] })).toEqual([true]);
    outcome.error.message = 'changed after the write';
    const events = await store.getJobEvents({ id });
    events[2]!.error!.message = 'changed';
    events[2]!.at.setTime(0);
    const fresh = await store.getJobEvents({ id });
    expect(fresh[2]!.error).toEqual({ code: 'x', message: 'm' });
    expect(fresh[2]!.at.getTime()).not.toBe(0);
    expect((await store.getJob({ id }))!.error).toEqual({ code: 'x', message: 'm' });

    const retried = await store.retryJob({ id });
    retried!.job.error!.message = 'changed';
    expect((await store.getJob({ id }))!.error).toEqual({ code: 'x', message: 'm' });
  });

  it('wakes each subscriber once per queue per call, after the call returns', async () => {
    const store = memoryStore();
    const woken: string[] = [];
    await store.subscribe((queue) => woken.push(queue ?? '(any queue)'));
    await store.subscribe((queue) => woken.push(`second:${queue}`));
    const pending = store.enqueueJobs({
      jobs: [
        { ...job, queue: 'a', payload: 1 },
        { ...job, queue: 'b', payload: 2 },
        { ...job, queue: 'a', payload: 3 },
      ],
    });
    expect(woken).toEqual([]);
    await pending;
    await Promise.resolve();
    expect(woken.sort()).toEqual(['a', 'b', 'second:a', 'second:b']);
  });

  it('does not call a subscriber that left before its wake-up ran, nor any after close()', async () => {
    const store = memoryStore();
    const woken: string[] = [];
    const unsubscribe = await store.subscribe((queue) => woken.push(`early:${queue}`));
    const enqueued = store.enqueueJobs({ jobs: [{ ...job, payload: 1 }] });
    await unsubscribe();
    await enqueued;
    await store.subscribe((queue) => woken.push(queue ?? '(any queue)'));
    await store.close();
    await store.enqueueJobs({ jobs: [{ ...job, payload: 2 }] });
    await new Promise((resolve) => setImmediate(resolve));
    expect(woken).toEqual([]);
  });
});
