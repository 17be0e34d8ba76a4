/**
 * Searching the list from the page, in headless Chromium: by JSON the payload contains, by
 * text in the error message, within a queue; the search is in the URL; a payload search that
 * is not JSON is refused with a message naming it.
 */
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { createSupervisor, defineQueue, PermanentJobError } from '../../src/index.js';
import { describeBrowser } from '../support/chromium.js';

const WAIT = { timeout: 10_000 };

describeBrowser('inspector page: search by payload and by error', (session) => {
  let page: Page;

  const rows = () => page.locator('#jobs tbody tr[data-job-id]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-job-id')));

  async function search(text: string, within: '' | 'payload' | 'error', queue = '') {
    await page.fill('#filters input[name="q"]', text);
    await page.selectOption('#filters select[name="in"]', within);
    await page.fill('#filters input[name="queue"]', queue);
    await page.click('#filters button[type="submit"]');
  }

  it('finds jobs by the JSON their payload contains and by their error text, within a queue', async () => {
    const store = memoryStore();
    const handlers = {
      send: async () => null,
      fail: async (job: { payload: { message: string } }): Promise<never> => {
        throw new PermanentJobError(job.payload.message);
      },
    };
    const mail = defineQueue('mail', { maxAttempts: 1, handlers });
    const sms = defineQueue('sms', { maxAttempts: 1, handlers });
    const alice = (await mail.enqueue(store, 'send', { user: { id: 7, name: 'alice' }, tags: ['vip', 'eu'] })).job.id;
    await mail.enqueue(store, 'send', { user: { id: 8, name: 'bob' }, tags: ['eu'] });
    const timeout = (await mail.enqueue(store, 'fail', { message: 'Upstream timed out after 30 s' })).job.id;
    await mail.enqueue(store, 'fail', { message: 'mailbox full' });
    const smsTimeout = (await sms.enqueue(store, 'fail', { message: 'gateway timed out' })).job.id;
    const supervisor = createSupervisor({ store, queues: [mail, sms] });
    await supervisor.drain();
    await supervisor.stop();
    const inspector = await session.startInspector({ store, port: 0 });
    page = await session.newPage();
    await page.goto(inspector.url);
    await page.locator(`#jobs tr[data-job-id="${smsTimeout}"]`).waitFor(WAIT);

    await search('{"tags": ["vip"]}', 'payload');
    await page.waitForURL((url) => new URL(url).searchParams.get('in') === 'payload', WAIT);
    await expect.poll(rows, WAIT).toEqual([alice]);
    expect(await page.getAttribute('#filters input[name="q"]', 'placeholder')).toBe('{"user": 7}: JSON it contains');

    await search('{"user": {"id": 7}}', 'payload', 'sms');
    await expect.poll(() => page.textContent('#jobs tbody'), WAIT).toContain('no jobs match');

    await search('TIMED OUT', 'error');
    await expect.poll(rows, WAIT).toEqual([smsTimeout, timeout]);
    await search('timed out', 'error', 'mail');
    await expect.poll(rows, WAIT).toEqual([timeout]);
    await page.reload();
    await expect.poll(rows, WAIT).toEqual([timeout]);
    expect(await page.inputValue('#filters select[name="in"]')).toBe('error');

    await search('{user: 7}', 'payload');
    await page.locator('#flash.error', { hasText: 'q: a payload search is JSON that the payload contains' }).waitFor(WAIT);
    const refused = await fetch(`${inspector.url}api/jobs?q=x&in=stack`);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toBe('in: must be one of key, payload, error');
  });
});
