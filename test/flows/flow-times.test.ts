/**
 * Flows take absolute times only: their statements resolve nothing from the store's clock, so
 * `runIn` and `expiresIn` (which the types leave out) are refused, with nothing written, on
 * every store; a plain enqueue with dependsOn is a flow too.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { JobStore } from '../../src/adapters/store.js';
import { continueAfter, defineFlow, defineQueue, enqueueFlow, flowJob, type FlowJobOptions, type Job } from '../../src/index.js';
import { createTestClock } from '../support/sim.js';
import { describeEachStore } from '../support/test-stores.js';

const queue = defineQueue('pages', { handlers: { crawl: async (_job: Job<{ url: string }>) => null } });

describeEachStore('relative times in flows', (testStore) => {
  let store: JobStore;
  beforeEach(async () => {
    store = await testStore.create(createTestClock());
  });
  afterEach(async () => {
    await store.close();
    await testStore.reset();
  });

  it.each(['runIn', 'expiresIn'])('refuses %s in a flow, in a plain enqueue with dependsOn, and in a child, writing nothing', async (option) => {
    const relative = { [option]: 60_000 } as Record<string, number>;
    const flow = defineFlow('crawl', { a: flowJob(queue, 'crawl', { url: 'a' }), b: flowJob(queue, 'crawl', { url: 'b' }, { ...relative, dependsOn: ['a'] } as FlowJobOptions<'a'>) });
    const refusal = { code: 'invalid_option', option, message: expect.stringContaining("only enqueue and enqueueMany resolve a time from the store's clock") };
    await expect(enqueueFlow(store, flow)).rejects.toMatchObject(refusal);
    const { job } = await queue.enqueue(store, 'crawl', { url: 'parent' });
    await expect(queue.enqueue(store, 'crawl', { url: 'c' }, { dependsOn: [job.id], ...relative })).rejects.toMatchObject(refusal);
    expect(() => continueAfter({ c: { queue, kind: 'crawl', payload: { url: 'c' }, ...relative } })).toThrow(expect.objectContaining(refusal));
    expect(await store.countJobs()).toEqual([{ queue: 'pages', state: 'pending', count: 1 }]);
  });
});
