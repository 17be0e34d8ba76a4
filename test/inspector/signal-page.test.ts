/**
 * A durable job's page in headless Chromium: its stored steps listed in order (stored or
 * not), and, while it sleeps waiting for a signal, a "send signal" form that asks first, needs
 * the token (as every action), and wakes the job with the payload typed.
 */
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { memoryStore, type MemoryStore } from '../../src/adapters/memory/index.js';
import { NEVER } from '../../src/adapters/store.js';
import { defineQueue } from '../../src/index.js';
import { describeBrowser } from '../support/chromium.js';

const TOKEN = 'signal-page-token';
const WAIT = { timeout: 10_000 };

describeBrowser('inspector page: a job waiting for a signal', (session) => {
  const orders = defineQueue('orders', { handlers: { ship: async () => null } });

  /** A job that stored the step "charge" and sleeps waiting for "shipped". */
  async function waitingJob(store: MemoryStore): Promise<string> {
    const { job } = await orders.enqueue(store, 'ship', {});
    const [claimed] = await store.claimJobs({ workerId: 'w1', leaseMs: 60_000, queues: [{ queue: 'orders', limit: 1 }] });
    const lease = { id: job.id, leaseToken: claimed!.leaseToken };
    await store.checkpointSteps({ steps: [{ ...lease, name: 'charge', result: { chargeId: 'ch_1' } }] });
    await store.suspendIfRunning({ ...lease, kind: 'signal', name: 'shipped', signal: 'shipped', wake: { at: NEVER } });
    return job.id;
  }

  const rows = (page: Page) =>
    page.locator('#job-durable-steps tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 5).map((td) => td.textContent)));

  it('lists the steps, and sends a signal after asking, with the token', async () => {
    const store = memoryStore();
    const id = await waitingJob(store);
    const pending = (await orders.enqueue(store, 'ship', {})).job.id;
    const inspector = await session.startInspector({ store, port: 0, pollIntervalMs: 50, token: TOKEN });
    const page = await session.newPage();
    const dialogs: string[] = [];
    let answer = false;
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void (answer ? dialog.accept() : dialog.dismiss());
    });
    await page.goto(`${inspector.url}#/jobs/${id}`);
    await page.locator('#job-durable:not([hidden])').waitFor(WAIT);
    expect(await rows(page)).toEqual([
      ['charge', 'step', 'stored', 'yes', '{"chargeId":"ch_1"}'],
      ['shipped', 'signal', 'waiting', 'no', 'signal "shipped"'],
    ]);
    await page.locator('#signal-form:not([hidden])').waitFor(WAIT);
    expect(await page.inputValue('#signal-name')).toBe('shipped');

    // No token yet: the server refuses.
    answer = true;
    await page.fill('#signal-payload', '{"carrier": "dhl"}');
    await page.click('#signal-form button[type=submit]');
    await page.locator('#flash.error', { hasText: 'signal refused (403)' }).waitFor(WAIT);
    await page.fill('#token', TOKEN);
    await page.click('#token-form button[type=submit]');
    await page.locator('#token-note', { hasText: 'accepted' }).waitFor(WAIT);

    // Said no: nothing sent. A payload that is not JSON is refused on the page.
    answer = false;
    await page.click('#signal-form button[type=submit]');
    await expect.poll(() => dialogs.length, WAIT).toBe(2);
    expect(dialogs.at(-1)).toBe(`Send signal "shipped" to job ${id}?`);
    expect((await store.getJob({ id }))?.state).toBe('sleeping');
    await page.fill('#signal-payload', '{carrier}');
    await page.click('#signal-form button[type=submit]');
    await page.locator('#flash.error', { hasText: 'the payload is not valid JSON' }).waitFor(WAIT);
    expect(dialogs).toHaveLength(2);

    answer = true;
    await page.fill('#signal-payload', '{"carrier": "dhl"}');
    await page.click('#signal-form button[type=submit]');
    await page.locator('#flash', { hasText: `job ${id} woke: signal "shipped" delivered` }).waitFor(WAIT);
    await page.locator('#job-state .state', { hasText: 'pending' }).waitFor(WAIT);
    expect(await page.locator('#signal-form').isHidden()).toBe(true);
    expect(await store.getJob({ id })).toMatchObject({ state: 'pending', waitingForSignal: null });

    // A job that waits for nothing has no form and no steps.
    await page.goto(`${inspector.url}#/jobs/${pending}`);
    await page.locator('#job-id', { hasText: pending }).waitFor(WAIT);
    await page.locator('#job-state .state', { hasText: 'pending' }).waitFor(WAIT);
    expect(await page.locator('#signal-form').isHidden()).toBe(true);
    expect(await page.locator('#job-durable').isHidden()).toBe(true);
  });
});
