/**
 * Flows through the public API on the memory store: static flows with results flowing down,
 * failure policies, a plain enqueue's dependsOn, fan-out and continue, a cancelled flow, and
 * every check that refuses a flow before anything is written. The store-level semantics run
 * on every store in test/adapters/conformance-flows.ts.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  defineFlow,
  defineQueue,
  enqueueFlow,
  FlowNotFoundError,
  flowJob,
  InvalidFlowError,
  InvalidOptionError,
  type Job,
  JobNotFoundError,
  MAX_FLOW_JOBS,
  type ParentResults,
  type JobState,
  PermanentJobError,
  retryFlow,
} from '../../src/index.js';
import { createTestClock, drain, memoryStore, runFlow } from '../../src/testing/index.js';

/** Records each handler's start, in order, and what it read. */
function reportQueue() {
  const started: string[] = [];
  const queue = defineQueue('reports', {
    maxAttempts: 2,
    backoff: () => 1_000,
    handlers: {
      fetch: async ({ payload }: Job<{ source: string }>) => {
        started.push(payload.source);
        return { rows: payload.source.length };
      },
      broken: async (): Promise<{ rows: number }> => {
        started.push('broken');
        throw new PermanentJobError('source is gone');
      },
      merge: async (job: Job<{ into: string }>) => {
        started.push(job.payload.into);
        const parents = await job.parents<{ a: { rows: number }; b: { rows: number } }>();
        return { total: (parents.a.result?.rows ?? 0) + (parents.b.result?.rows ?? 0), states: [parents.a.state, parents.b.state] };
      },
      /** Sums whatever it waited for, named by id on a plain enqueue. */
      total: async (job: Job<{ of: string }>) => {
        started.push(job.payload.of);
        const parents = await job.parents<Record<string, { rows: number }>>();
        return { rows: Object.values(parents).reduce((sum, p) => sum + (p.result?.rows ?? 0), 0), names: Object.keys(parents) };
      },
      publish: async (job: Job<{ to: string }>) => {
        started.push(job.payload.to);
        const { merge } = await job.parents<{ merge: { total: number } }>();
        return { published: merge.result!.total };
      },
    },
  });
  const flow = defineFlow('report', {
    a: flowJob(queue, 'fetch', { source: 'alpha' }),
    b: flowJob(queue, 'fetch', { source: 'beta' }),
    merge: flowJob(queue, 'merge', { into: 'merge' }, { dependsOn: ['a', 'b'] }),
    publish: flowJob(queue, 'publish', { to: 'publish' }, { dependsOn: ['merge'] }),
  });
  return { queue, flow, started };
}

describe('static flows', () => {
  it('types what a job reads of its parents from the flow', () => {
    const { flow } = reportQueue();
    expectTypeOf<ParentResults<typeof flow, 'merge'>>().toEqualTypeOf<{ a: { rows: number }; b: { rows: number } }>();
    expectTypeOf<ParentResults<typeof flow, 'publish'>>().toEqualTypeOf<{ merge: { total: number; states: JobState[] } }>();
  });

  it('runs each job after its parents, with their results', async () => {
    const { queue, flow, started } = reportQueue();
    const run = await runFlow(flow, [queue]);
    expect(run.states).toEqual({ a: 'completed', b: 'completed', merge: 'completed', publish: 'completed' });
    expect(started.slice(2)).toEqual(['merge', 'publish']);
    expect(run.jobs.merge.result).toEqual({ total: 9, states: ['completed', 'completed'] });
    expect(run.jobs.publish.result).toEqual({ published: 9 });
    const history = await run.store.getJobEvents({ id: run.jobs.merge.id });
    expect(history.map((e) => e.toState)).toEqual(['waiting', 'pending', 'running', 'completed']);
  });

  it('enqueues nothing while a job waits: its row is waiting, not claimable', async () => {
    const { queue, flow } = reportQueue();
    const store = memoryStore();
    const enqueued = await enqueueFlow(store, flow);
    expect(Object.values(enqueued.jobs).map((j) => j.state)).toEqual(['pending', 'pending', 'waiting', 'waiting']);
    const claimed = await store.claimJobs({ workerId: 'w', leaseMs: 1_000, queues: [{ queue: queue.name, limit: 10 }] });
    expect(claimed.map((j) => j.id).sort()).toEqual([enqueued.jobs.a.id, enqueued.jobs.b.id].sort());
  });

  it('cancels the children of a parent that died (default), and the reason is in their history', async () => {
    const { queue, started } = reportQueue();
    const flow = defineFlow('broken', {
      a: flowJob(queue, 'broken', undefined),
      b: flowJob(queue, 'fetch', { source: 'beta' }),
      merge: flowJob(queue, 'merge', { into: 'merge' }, { dependsOn: ['a', 'b'] }),
      publish: flowJob(queue, 'publish', { to: 'publish' }, { dependsOn: ['merge'] }),
    });
    const run = await runFlow(flow, [queue]);
    expect(run.states).toEqual({ a: 'dead', b: 'completed', merge: 'cancelled', publish: 'cancelled' });
    expect(started).not.toContain('merge');
    const [, last] = await run.store.getJobEvents({ id: run.jobs.merge.id });
    expect(last).toMatchObject({
      fromState: 'waiting',
      toState: 'cancelled',
      error: { code: 'dependency_failed', message: `parent "a" (job ${run.jobs.a.id}) ended dead; cancelled (onFailure: cancel)` },
    });
  });

  it('runs a child anyway (onParentFailure run), or kills it (die), as chosen per job or per parent', async () => {
    const { queue } = reportQueue();
    const flow = defineFlow('anyway', {
      a: flowJob(queue, 'broken', undefined),
      b: flowJob(queue, 'fetch', { source: 'beta' }),
      merge: flowJob(queue, 'merge', { into: 'merge' }, { dependsOn: ['a', 'b'], onParentFailure: 'run' }),
      publish: flowJob(queue, 'publish', { to: 'publish' }, { dependsOn: [{ job: 'a', onFailure: 'die' }] }),
    });
    const run = await runFlow(flow, [queue]);
    expect(run.states).toMatchObject({ merge: 'completed', publish: 'dead' });
    expect(run.jobs.merge.result).toEqual({ total: 4, states: ['dead', 'completed'] });
    expect(run.jobs.publish.error).toMatchObject({ code: 'dependency_failed' });
  });

  it('waits on stored jobs with a plain enqueue (dependsOn)', async () => {
    const { queue, started } = reportQueue();
    const clock = createTestClock();
    const store = memoryStore({ clock });
    const a = await queue.enqueue(store, 'fetch', { source: 'alpha' });
    const b = await queue.enqueue(store, 'fetch', { source: 'beta' });
    const total = await queue.enqueue(store, 'total', { of: 'total' }, { dependsOn: [a.job.id, b.job.id] });
    expect(total.job.state).toBe('waiting');
    await drain(store, [queue], { clock });
    expect(started).toEqual(['alpha', 'beta', 'total']);
    expect(await store.getJob({ id: total.job.id })).toMatchObject({ state: 'completed', result: { rows: 9, names: [a.job.id, b.job.id] } });
    await expect(queue.enqueue(store, 'merge', { into: 'x' }, { dependsOn: ['987654321'] })).rejects.toThrow(JobNotFoundError);
    await expect(queue.enqueue(store, 'merge', { into: 'x' }, { dependsOn: [a.job.id], uniqueKey: 'k' })).rejects.toThrow(InvalidOptionError);
    await expect(queue.enqueue(store, 'merge', { into: 'x' }, { dependsOn: [a.job.id, a.job.id] })).rejects.toThrow('names a job twice');
    await expect(queue.enqueueMany(store, [{ kind: 'merge', payload: { into: 'x' }, dependsOn: [a.job.id] }])).rejects.toThrow(InvalidOptionError);
  });

  it('refuses cycles, unknown parents, parents named twice and unique keys, writing nothing', async () => {
    const { queue } = reportQueue();
    const store = memoryStore();
    const cases: Array<[ReturnType<typeof defineFlow>, string]> = [
      [defineFlow('f', { a: flowJob(queue, 'fetch', { source: 's' }, { dependsOn: ['c'] }), b: flowJob(queue, 'fetch', { source: 's' }, { dependsOn: ['a'] }), c: flowJob(queue, 'fetch', { source: 's' }, { dependsOn: ['b'] }) }), 'has a cycle: a → c → b → a'],
      [defineFlow('f', { a: flowJob(queue, 'fetch', { source: 's' }, { dependsOn: ['a'] }) }), 'has a cycle: a → a'],
      [defineFlow('f', { a: flowJob(queue, 'fetch', { source: 's' }, { dependsOn: ['z' as 'a'] }) }), 'job "a" depends on "z", which is not a job of the flow (it has a)'],
      [defineFlow('f', { a: flowJob(queue, 'fetch', { source: 's' }), b: flowJob(queue, 'fetch', { source: 's' }, { dependsOn: ['a', { job: 'a', onFailure: 'run' }] }) }), 'job "b" names "a" twice in dependsOn'],
      [defineFlow('f', { a: flowJob(queue, 'fetch', { source: 's' }, { uniqueKey: 'k' } as object) }), 'a job of a flow takes no uniqueKey'],
      [defineFlow('f', {}), 'has no jobs'],
    ];
    for (const [flow, message] of cases) {
      const refused = await enqueueFlow(store, flow).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(InvalidFlowError);
      expect((refused as Error).message).toContain(message);
    }
    await expect(enqueueFlow(store, defineFlow('f', { a: flowJob(queue, 'fetch', { source: 's' }, { onParentFailure: 'maybe' as 'run' }) }))).rejects.toThrow(InvalidOptionError);
    await expect(enqueueFlow(store, defineFlow('f', { a: flowJob(queue, 'nope' as 'fetch', { source: 's' }) }))).rejects.toThrow('has no handler for kind "nope"');
    expect(await store.countJobs()).toEqual([]);
  });

  it('refuses a cycle of 5,000 jobs with an InvalidFlowError naming a bounded path, and a flow over MAX_FLOW_JOBS', async () => {
    const { queue } = reportQueue();
    const store = memoryStore();
    const ring = (n: number) =>
      defineFlow('ring', Object.fromEntries(Array.from({ length: n }, (_, i) => [`j${i}`, flowJob(queue, 'fetch', { source: 's' }, { dependsOn: [`j${(i + 1) % n}`] })])));
    const refused = await enqueueFlow(store, ring(5_000)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(InvalidFlowError);
    expect((refused as Error).message).toMatch(/^flow "ring": has a cycle: j0 → j1 → .* → … \(4991 more\) → j0 \(5000 jobs\)/);
    expect((refused as Error).message.length).toBeLessThan(300);
    const big = defineFlow('big', Object.fromEntries(Array.from({ length: MAX_FLOW_JOBS + 1 }, (_, i) => [`j${i}`, flowJob(queue, 'fetch', { source: 's' })])));
    await expect(enqueueFlow(store, big)).rejects.toThrow(`has ${MAX_FLOW_JOBS + 1} jobs, more than ${MAX_FLOW_JOBS} (MAX_FLOW_JOBS)`);
    const unknown = defineFlow('u', { ...ring(20).jobs, x: flowJob(queue, 'fetch', { source: 's' }, { dependsOn: ['z' as 'j0'] }) });
    await expect(enqueueFlow(store, unknown)).rejects.toThrow('(it has j0, j1, j2, j3, j4, j5, j6, j7, j8, j9 and 11 more)');
    expect(await store.countJobs()).toEqual([]);
  });

  it('retryFlow: resumes a failed flow on the memory store; an unknown flow or a bad id is refused', async () => {
    const { queue } = reportQueue();
    const store = memoryStore();
    const flow = await enqueueFlow(store, defineFlow('r', { a: flowJob(queue, 'fetch', { source: 's' }), b: flowJob(queue, 'fetch', { source: 's' }, { dependsOn: ['a'] }) }));
    await store.cancelFlow({ id: flow.flowId });
    expect(await retryFlow(store, flow.flowId)).toEqual({ retried: 2, left: 0 });
    expect((await store.getJob({ id: flow.jobs.b.id }))!.state).toBe('waiting');
    await expect(retryFlow(store, '987654321')).rejects.toThrow(FlowNotFoundError);
    await expect(retryFlow(store, 'x')).rejects.toThrow(InvalidOptionError);
  });
});

describe('fan-out, then continue', () => {
  /** `failOnce`: the first continuation throws, and its retry fans out the same children
   *  again before it sums them, as a handler that does not look would. */
  function fanOutQueue(options: { failOnce?: boolean } = {}) {
    let failed = false;
    let refanned = false;
    const queue = defineQueue('pages', {
      maxAttempts: 2,
      backoff: () => 1_000,
      handlers: {
        crawl: async (job: Job<{ pages: number }>) => {
          const children = await job.children<Record<string, { words: number }>>();
          const pages = () =>
            job.continueAfter(
              Object.fromEntries(Array.from({ length: job.payload.pages }, (_, i) => [`page-${i}`, { queue: 'pages', kind: 'page', payload: { n: i } }])),
            );
          if (Object.keys(children).length === 0) return pages();
          if (options.failOnce && !failed) {
            failed = true;
            throw new Error('flaky');
          }
          if (options.failOnce && !refanned) {
            refanned = true;
            return pages();
          }
          return { words: Object.values(children).reduce((sum, c) => sum + c.result!.words, 0) };
        },
        page: async ({ payload }: Job<{ n: number }>) => ({ words: 10 * (payload.n + 1) }),
      },
    });
    return queue;
  }

  it('adds children, waits for them without a lease, and runs its continuation with their results', async () => {
    const queue = fanOutQueue();
    const clock = createTestClock();
    const store = memoryStore({ clock });
    const { job } = await queue.enqueue(store, 'crawl', { pages: 3 });
    await drain(store, [queue], { clock, advance: true });
    const row = (await store.getJob({ id: job.id }))!;
    expect(row).toMatchObject({ state: 'completed', result: { words: 60 }, attempt: 2, maxAttempts: 3 });
    const history = await store.getJobEvents({ id: job.id });
    expect(history.map((e) => e.toState)).toEqual(['pending', 'running', 'waiting', 'pending', 'running', 'completed']);
    const flow = (await store.getFlow({ jobId: job.id }))!;
    expect(flow.jobs.map((j) => [j.node, j.job.state])).toEqual([
      ['crawl', 'completed'],
      ['page-0', 'completed'],
      ['page-1', 'completed'],
      ['page-2', 'completed'],
    ]);
  });

  it('adds nothing twice when a retry fans out the same children again: due at once, they are all done', async () => {
    const queue = fanOutQueue({ failOnce: true });
    const clock = createTestClock();
    const store = memoryStore({ clock });
    const { job } = await queue.enqueue(store, 'crawl', { pages: 2 });
    await drain(store, [queue], { clock, advance: true });
    expect((await store.getJob({ id: job.id }))!).toMatchObject({ state: 'completed', result: { words: 30 } });
    expect((await store.getFlow({ jobId: job.id }))!.jobs).toHaveLength(3);
    const path = (await store.getJobEvents({ id: job.id })).map((e) => e.toState);
    expect(path).toEqual(['pending', 'running', 'waiting', 'pending', 'running', 'retrying', 'running', 'pending', 'running', 'completed']);
  });

  it('a cancelled flow cancels what has not run', async () => {
    const { queue, flow } = reportQueue();
    const store = memoryStore();
    const enqueued = await enqueueFlow(store, flow);
    expect(await store.cancelFlow({ id: enqueued.flowId })).toEqual({ cancelled: 4, requested: 0 });
    const read = (await store.getFlow({ id: enqueued.flowId }))!;
    expect(read.jobs.map((j) => j.job.state)).toEqual(['cancelled', 'cancelled', 'cancelled', 'cancelled']);
  });
});
