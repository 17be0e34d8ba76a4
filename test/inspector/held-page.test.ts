/**
 * Held versus running on the page, in headless Chromium: a worker holds three jobs and its
 * heartbeat says two wait there for a slot; the queues panel, the queue's page, the job list, the
 * running jobs and the workers page show one running and two held.
 */
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { describeBrowser } from '../support/chromium.js';

const WAIT = { timeout: 10_000 };

describeBrowser('inspector page: held versus running', (session) => {
  let page: Page;

  it('shows the jobs a worker holds for a slot apart from those whose handler runs', async () => {
    const store = memoryStore();
    await store.enqueueJobs({ jobs: [1, 2, 3].map((n) => ({ queue: 'mail', kind: 'send', payload: { n }, maxAttempts: 3 })) });
    const claimed = await store.claimJobs({ workerId: 'w-busy', leaseMs: 600_000, queues: [{ queue: 'mail', limit: 3 }] });
    expect(claimed).toHaveLength(3);
    const [first, ...rest] = claimed.map((job) => job.id);
    await store.recordWorker({ worker: { workerId: 'w-busy', host: 'box', pid: 7, queues: ['mail'], running: 3, held: rest.map((id) => ({ id, queue: 'mail' })) } });
    const inspector = await session.startInspector({ store, port: 0 });
    page = await session.newPage();
    await page.goto(inspector.url);

    const runningCell = page.locator('#queues tr[data-queue="mail"] td.num.running');
    await runningCell.locator('.held-count', { hasText: '+2 held' }).waitFor(WAIT);
    expect(await runningCell.locator('a').textContent()).toBe('1');
    for (const id of rest) await page.locator(`#jobs tr[data-job-id="${id}"] .state.held`).waitFor(WAIT);
    expect(await page.textContent(`#jobs tr[data-job-id="${first}"] .state`)).toBe('running');
    expect(await page.locator('#running .state.held').count()).toBe(2);

    await page.goto(`${inspector.url}#/queues/mail`);
    await page.locator('#queue-counts td.num.running .held-count', { hasText: '+2 held' }).waitFor(WAIT);

    await page.goto(`${inspector.url}#/workers`);
    const row = page.locator('#workers-table tr[data-worker-id="w-busy"]');
    await row.locator('.held-count', { hasText: '+2 held' }).waitFor(WAIT);
    expect(await row.locator('td.num').nth(1).evaluate((td) => td.firstChild?.textContent)).toBe('1');
    expect(await row.locator('td.held .state.held').count()).toBe(2);
  });
});
