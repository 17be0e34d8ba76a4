import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { JobEventEntry, JobStore, ListJobEventsParams, ListNewJobsParams, NewJob } from '../../src/adapters/store.js';
import { EventFeed, type FeedBatch } from '../../src/inspector/event-feed.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** A history and a jobs table whose rows become visible when the test says, as commits do. */
function fakeHistory() {
  const visible = new Map<number, JobEventEntry>();
  const jobs = new Map<number, NewJob>();
  const show = (...ids: number[]) => {
    for (const id of ids) {
      visible.set(id, { id: String(id), jobId: `j${id}`, fromState: 'pending', toState: 'running', attempt: 1, workerId: 'w', at: new Date(0), error: null });
    }
  };
  const create = (...ids: number[]) => {
    for (const id of ids) jobs.set(id, { id: String(id), queue: 'q', state: 'pending', createdAt: new Date(id) });
  };
  const after = <Row extends { id: string }>(rows: Iterable<Row>, afterId: string | undefined, limit: number) => {
    const sorted = [...rows].sort((a, b) => Number(a.id) - Number(b.id));
    return afterId === undefined ? sorted.slice(-limit) : sorted.filter((e) => Number(e.id) > Number(afterId)).slice(0, limit);
  };
  const store = {
    async listJobEvents({ afterId, limit = 100 }: ListJobEventsParams) {
      return after(visible.values(), afterId, limit);
    },
    async listNewJobs({ afterId, limit = 100 }: ListNewJobsParams) {
      return after(jobs.values(), afterId, limit);
    },
  } as unknown as JobStore;
  return { store, show, create };
}

let feed: EventFeed | undefined;
// The feed polls on a timer: fake timers drive it (vi.waitFor advances them as it checks).
beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(async () => {
  await feed?.close();
  feed = undefined;
  vi.useRealTimers();
});

function collect(store: JobStore, batchSize?: number) {
  feed = new EventFeed(store, { pollIntervalMs: 5, logger: silent, ...(batchSize ? { batchSize } : {}) });
  const batches: FeedBatch[] = [];
  feed.subscribe((batch) => batches.push(batch));
  // Transitions carry job j<event id>; creations are the events from nothing.
  const ids = () => batches.flatMap((b) => (b.type === 'events' ? b.events.filter((e) => e.fromState !== null).map((e) => Number(e.jobId.slice(1))) : []));
  const created = () => batches.flatMap((b) => (b.type === 'events' ? b.events.filter((e) => e.fromState === null).map((e) => e.jobId) : []));
  return { batches, ids, created };
}

describe('EventFeed', () => {
  it('starts at the end of the history and streams what comes after, in id order', async () => {
    const { store, show } = fakeHistory();
    show(1, 2);
    const { ids } = collect(store);
    await vi.advanceTimersByTimeAsync(20);
    show(3, 4);
    await vi.waitFor(() => expect(ids()).toEqual([3, 4]));
  });

  it('comes back for an id that showed up late (a transaction committed after a later one)', async () => {
    const { store, show } = fakeHistory();
    show(1);
    const { ids } = collect(store);
    await vi.advanceTimersByTimeAsync(20);
    show(2, 4);
    await vi.waitFor(() => expect(ids()).toEqual([2, 4]));
    show(3, 5);
    await vi.waitFor(() => expect(ids().sort()).toEqual([2, 3, 4, 5]));
    expect(ids().filter((id) => id === 4)).toHaveLength(1);
  });

  it('skips to the newest event and says so when it falls too far behind', async () => {
    const { store, show } = fakeHistory();
    const { batches } = collect(store, 2);
    await vi.advanceTimersByTimeAsync(20);
    show(...Array.from({ length: 20 }, (_, i) => i + 1));
    await vi.waitFor(() => expect(batches.some((b) => b.type === 'reset')).toBe(true));
    show(21);
    await vi.waitFor(() => expect(batches.at(-1)).toMatchObject({ type: 'events', events: [{ jobId: 'j21' }] }));
  });

  it('streams each new job as a creation (an enqueue writes no history row), also one that committed late', async () => {
    const { store, show, create } = fakeHistory();
    create(1);
    const { created, ids, batches } = collect(store);
    await vi.advanceTimersByTimeAsync(20);
    create(2, 4);
    show(7);
    await vi.waitFor(() => expect(created()).toEqual(['2', '4']));
    await vi.waitFor(() => expect(ids()).toEqual([7]));
    create(3);
    await vi.waitFor(() => expect(created().sort()).toEqual(['2', '3', '4']));
    expect(batches.flatMap((b) => (b.type === 'events' ? b.events : [])).find((e) => e.jobId === '3')).toMatchObject({
      fromState: null, toState: 'pending', attempt: 0, workerId: null, at: new Date(3),
    });
  });

  it('stops polling when the last listener leaves', async () => {
    const { store } = fakeHistory();
    const spy = vi.spyOn(store, 'listJobEvents');
    feed = new EventFeed(store, { pollIntervalMs: 5, logger: silent });
    const unsubscribe = feed.subscribe(() => {});
    await vi.waitFor(() => expect(spy.mock.calls.length).toBeGreaterThan(2));
    unsubscribe();
    await vi.advanceTimersByTimeAsync(20);
    const calls = spy.mock.calls.length;
    await vi.advanceTimersByTimeAsync(30);
    expect(spy.mock.calls.length).toBe(calls);
  });
  it('a job created and claimed while the feed reads: its creation goes out first, in the same batch as its claim', async () => {
    const events = new Map<number, JobEventEntry>();
    const jobs = new Map<number, NewJob>();
    let commitDuringRead = false;
    const after = <Row extends { id: string }>(rows: Iterable<Row>, afterId: string | undefined, limit: number) => {
      const sorted = [...rows].sort((a, b) => Number(a.id) - Number(b.id));
      return afterId === undefined ? sorted.slice(-limit) : sorted.filter((e) => Number(e.id) > Number(afterId)).slice(0, limit);
    };
    const store = {
      // The job and its claim commit while the history is read: the read sees the claim.
      async listJobEvents({ afterId, limit = 100 }: ListJobEventsParams) {
        if (commitDuringRead) {
          commitDuringRead = false;
          await Promise.resolve();
          jobs.set(7, { id: '7', queue: 'q', state: 'pending', createdAt: new Date(7) });
          events.set(1, { id: '1', jobId: '7', fromState: 'pending', toState: 'running', attempt: 1, workerId: 'w', at: new Date(8), error: null });
        }
        return after(events.values(), afterId, limit);
      },
      // What the jobs' read sees is what had committed when it was asked.
      async listNewJobs({ afterId, limit = 100 }: ListNewJobsParams) {
        const seen = after(jobs.values(), afterId, limit);
        await Promise.resolve();
        return seen;
      },
    } as unknown as JobStore;
    const { batches } = collect(store);
    await vi.advanceTimersByTimeAsync(20);
    commitDuringRead = true;
    await vi.waitFor(() => expect(batches.some((b) => b.type === 'events')).toBe(true));
    const job7 = batches.flatMap((b) => (b.type === 'events' ? [b.events.map((e) => `${e.fromState ?? '-'}>${e.toState}`)] : []));
    expect(job7).toEqual([['->pending', 'pending>running']]);
  });
});
