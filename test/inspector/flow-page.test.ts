/**
 * A flow's page in headless Chromium: the DAG of a flow a → (b, c) → d, each node coloured by
 * its job's state, follows the jobs live as a supervisor runs them (no reload), is reached
 * from a job's page, and a click on a node opens that job. Screenshot to test-results/.
 */
import { mkdir } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { FLOW_STATE_COLORS } from '../../src/inspector/flow-svg.js';
import { defineFlow, defineQueue, enqueueFlow, flowJob, type Job, type JobState } from '../../src/index.js';
import { describeBrowser } from '../support/chromium.js';

const WAIT = { timeout: 15_000 };
const SCREENSHOTS = 'test-results';

describeBrowser('inspector page: a flow’s DAG', (session) => {
  let page: Page;

  beforeAll(async () => {
    await mkdir(SCREENSHOTS, { recursive: true });
  });

  /** A diamond whose jobs each wait for the test to let them finish. */
  async function diamond() {
    const store = memoryStore();
    const gates = new Map<string, () => void>();
    const opened = new Map<string, Promise<void>>();
    for (const node of ['a', 'b', 'c', 'd']) opened.set(node, new Promise<void>((resolve) => gates.set(node, resolve)));
    const steps = defineQueue('steps', {
      concurrency: 4,
      handlers: {
        step: async ({ payload }: Job<{ node: string }>) => {
          await opened.get(payload.node);
          return { node: payload.node };
        },
      },
    });
    const flow = defineFlow('diamond', {
      a: flowJob(steps, 'step', { node: 'a' }),
      b: flowJob(steps, 'step', { node: 'b' }, { dependsOn: ['a'] }),
      c: flowJob(steps, 'step', { node: 'c' }, { dependsOn: ['a'] }),
      d: flowJob(steps, 'step', { node: 'd' }, { dependsOn: ['b', 'c'] }),
    });
    const enqueued = await enqueueFlow(store, flow);
    const supervisor = session.supervisor({ store, queues: [steps], pollIntervalMs: 20 });
    // Released before the supervisor stops, so that no handler is left waiting.
    session.afterTest(() => gates.forEach((release) => release()));
    return { store, supervisor, ...enqueued, release: (node: string) => gates.get(node)!() };
  }

  async function nodeStates(): Promise<Record<string, [string | null, string | null]>> {
    const nodes = page.locator('#flow-diagram a.flow-node');
    const found: Record<string, [string | null, string | null]> = {};
    for (let i = 0; i < (await nodes.count()); i++) {
      const node = nodes.nth(i);
      found[(await node.getAttribute('data-node'))!] = [await node.getAttribute('data-state'), await node.locator('rect').getAttribute('fill')];
    }
    return found;
  }

  const colored = (state: JobState): [string, string] => [state, FLOW_STATE_COLORS[state].fill];

  async function waitNode(node: string, state: JobState) {
    await page.locator(`#flow-diagram a.flow-node[data-node="${node}"][data-state="${state}"]`).waitFor(WAIT);
  }

  it('draws the flow coloured by state, follows it live, and opens a job from its node', async () => {
    const { store, supervisor, flowId, jobs, release } = await diamond();
    const inspector = await session.startInspector({ store, port: 0, pollIntervalMs: 50 });
    page = await session.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${inspector.url}#/flows/${flowId}`);
    await page.locator('#live', { hasText: /^live$/ }).waitFor(WAIT);
    await page.locator('#flow-diagram svg').waitFor(WAIT);
    await page.evaluate('window.__sameDocument = true');

    expect(await page.locator('#flow-name').textContent()).toBe('diamond');
    expect(await nodeStates()).toEqual({ a: colored('pending'), b: colored('waiting'), c: colored('waiting'), d: colored('waiting') });
    // Edges parent → child, drawn left to right: a in the first column, d in the last.
    const edges = await page.locator('#flow-diagram path.flow-edge').evaluateAll((paths) => paths.map((p) => p.getAttribute('data-edge')));
    const id = (node: 'a' | 'b' | 'c' | 'd') => jobs[node].id;
    expect(edges.sort()).toEqual([`${id('a')}->${id('b')}`, `${id('a')}->${id('c')}`, `${id('b')}->${id('d')}`, `${id('c')}->${id('d')}`].sort());
    const x = async (node: string) => (await page.locator(`#flow-diagram a.flow-node[data-node="${node}"] rect`).boundingBox())!.x;
    expect(await x('a')).toBeLessThan(await x('b'));
    expect(await x('b')).toBe(await x('c'));
    expect(await x('c')).toBeLessThan(await x('d'));

    // The supervisor runs a; then a completes and b and c run: each node changes colour in place.
    await supervisor.start();
    await waitNode('a', 'running');
    expect((await nodeStates()).a).toEqual(colored('running'));
    release('a');
    await waitNode('a', 'completed');
    await waitNode('b', 'running');
    await waitNode('c', 'running');
    expect(await nodeStates()).toEqual({ a: colored('completed'), b: colored('running'), c: colored('running'), d: colored('waiting') });
    await page.screenshot({ path: `${SCREENSHOTS}/inspector-flow.png`, fullPage: true });
    expect(await page.evaluate('window.__sameDocument === true')).toBe(true);

    // A click on d opens d's job page, which links back to the flow.
    await page.click('#flow-diagram a.flow-node[data-node="d"]');
    await page.locator('#job-id', { hasText: new RegExp(`^${id('d')}$`) }).waitFor(WAIT);
    expect(new URL(page.url()).hash).toBe(`#/jobs/${id('d')}`);
    await page.locator('#job-flow-link').waitFor(WAIT);
    expect(await page.locator('#job-flow').textContent()).toBe(`in flow ${flowId} diamond as d (4 jobs)`);
    await page.click('#job-flow-link');
    await page.locator('#flow-diagram svg').waitFor(WAIT);
    expect(new URL(page.url()).hash).toBe(`#/flows/${flowId}`);
    expect(errors).toEqual([]);
  });

  it('says so when the flow does not exist, and a job outside any flow shows no flow link', async () => {
    const store = memoryStore();
    const loose = defineQueue('loose', { handlers: { one: async () => ({}) } });
    const { job } = await loose.enqueue(store, 'one', {});
    const inspector = await session.startInspector({ store, port: 0, pollIntervalMs: 50 });
    page = await session.newPage();
    await page.goto(`${inspector.url}#/flows/404`);
    await page.locator('#flow-name', { hasText: 'not found' }).waitFor(WAIT);
    expect(await page.locator('#flow-diagram svg').count()).toBe(0);
    // The flow link is asked for after the job renders: wait for that answer, then look.
    const answered = page.waitForResponse((response) => response.url().endsWith(`/api/jobs/${job.id}/flow`), WAIT);
    await page.goto(`${inspector.url}#/jobs/${job.id}`);
    await page.locator('#job-state .state', { hasText: 'pending' }).waitFor(WAIT);
    expect(await (await answered).json()).toEqual({ flow: null });
    expect(await page.locator('#job-flow').isHidden()).toBe(true);
  });
});
