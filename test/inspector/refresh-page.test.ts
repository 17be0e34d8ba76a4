/**
 * The page's one refresh loop: transitions only mark the view changed, the loop reads it again
 * at the rate the user picks (kept in localStorage), and nothing is read while the tab is
 * hidden. Headless Chromium, the page's timers on Playwright's clock: the ticks are run by the
 * test, not waited for.
 */
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { defineQueue } from '../../src/index.js';
import { describeBrowser } from '../support/chromium.js';

const WAIT = { timeout: 10_000 };

describeBrowser('inspector page: one refresh loop', (session) => {
  /** Every /api/ read the page makes from now on, but the event stream. */
  function recordReads(page: Page): string[] {
    const reads: string[] = [];
    page.on('request', (request) => {
      const { pathname } = new URL(request.url());
      if (pathname.startsWith('/api/') && pathname !== '/api/events') reads.push(pathname);
    });
    return reads;
  }

  /** The page has heard of a transition (the live badge's title says when). */
  async function transitionArrived(page: Page): Promise<void> {
    await page.waitForFunction(`(document.querySelector('#live').getAttribute('title') || '').startsWith('last transition')`, undefined, WAIT);
  }

  async function setVisibility(page: Page, visibility: 'hidden' | 'visible'): Promise<void> {
    await page.evaluate(`
      Object.defineProperty(document, 'visibilityState', { value: '${visibility}', configurable: true });
      document.dispatchEvent(new Event('visibilitychange'));`);
  }

  it('reads nothing while the tab is hidden, and what changed as soon as it is shown again', async () => {
    const store = memoryStore();
    const mail = defineQueue('mail', { handlers: { send: async () => null } });
    const inspector = await session.startInspector({ store, port: 0, pollIntervalMs: 50 });
    const page = await session.newPage();
    await page.clock.install();
    await page.goto(inspector.url);
    await page.locator('#live', { hasText: 'live' }).waitFor(WAIT);
    await page.selectOption('#refresh-rate', '1000');

    await setVisibility(page, 'hidden');
    const reads = recordReads(page);
    const job = (await mail.enqueue(store, 'send', {})).job;
    await transitionArrived(page);
    await page.clock.runFor(20_000);
    expect(reads).toEqual([]);
    expect(await page.locator(`#jobs tr[data-job-id="${job.id}"]`).count()).toBe(0);

    await setVisibility(page, 'visible');
    await page.locator(`#jobs tr[data-job-id="${job.id}"]`).waitFor(WAIT);
    expect(reads).toContain('/api/jobs');
  });

  it('keeps the rate the user picks across reloads, and reads nothing while paused', async () => {
    const store = memoryStore();
    const mail = defineQueue('mail', { handlers: { send: async () => null } });
    const inspector = await session.startInspector({ store, port: 0, pollIntervalMs: 50 });
    const page = await session.newPage();
    await page.clock.install();
    await page.goto(inspector.url);
    await page.locator('#live', { hasText: 'live' }).waitFor(WAIT);
    expect(await page.inputValue('#refresh-rate')).toBe('2000');
    await page.selectOption('#refresh-rate', '0');
    await page.reload();
    await page.locator('#live', { hasText: 'live' }).waitFor(WAIT);
    expect(await page.inputValue('#refresh-rate')).toBe('0');
    expect(await page.evaluate(`localStorage.getItem('jobvisor-refresh-ms')`)).toBe('0');

    const reads = recordReads(page);
    await mail.enqueue(store, 'send', {});
    await transitionArrived(page);
    await page.clock.runFor(60_000);
    expect(reads).toEqual([]);

    await page.selectOption('#refresh-rate', '1000');
    await page.clock.runFor(1_000);
    await page.locator('#jobs tbody tr[data-job-id]').first().waitFor(WAIT);
    // One loop: a tick reads the queues (with throughput), the list and its count, no more.
    expect(new Set(reads)).toEqual(new Set(['/api/queues', '/api/throughput', '/api/jobs', '/api/jobs-count']));
  });
});
