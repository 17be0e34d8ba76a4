/**
 * Enqueue from the page, in headless Chromium: the queue page's form adds a job checked as the
 * library checks it (the queue's kinds and payload limit when the inspector is given the
 * queues; else a queue the store's jobs use), behind the token; refusals name what was wrong.
 */
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { defineQueue, InvalidOptionError } from '../../src/index.js';
import { startInspector } from '../../src/inspector/index.js';
import { describeBrowser } from '../support/chromium.js';

const TOKEN = 'enqueue-page-token';
const WAIT = { timeout: 10_000 };

describeBrowser('inspector page: enqueue a job', (session) => {
  let page: Page;

  const mail = defineQueue('mail', { maxPayloadBytes: 64, handlers: { send: async () => null, digest: async () => null } });

  async function openQueuePage(url: string, queue: string) {
    page = await session.newPage();
    await page.goto(`${url}#/queues/${queue}`);
    await page.fill('#token', TOKEN);
    await page.click('#token-form button[type=submit]');
    await page.locator('#token-note', { hasText: 'accepted' }).waitFor(WAIT);
    await page.locator('#enqueue-form').waitFor(WAIT);
  }

  it("adds a job from the queue's form and opens its page; refuses an unknown kind, a payload over the queue's limit, bad JSON", async () => {
    const store = memoryStore();
    const inspector = await session.startInspector({ store, port: 0, token: TOKEN, queues: [mail] });
    await openQueuePage(inspector.url, 'mail');
    expect(await page.locator('#enqueue-kinds option').evaluateAll((options) => options.map((o) => o.getAttribute('value')))).toEqual(['send', 'digest']);

    await page.fill('#enqueue-form input[name="kind"]', 'send');
    await page.fill('#enqueue-form textarea[name="payload"]', '{"to": "ada@example.com"}');
    await page.fill('#enqueue-form input[name="runIn"]', '60');
    await page.fill('#enqueue-form input[name="priority"]', '3');
    await page.fill('#enqueue-form input[name="uniqueKey"]', 'welcome-ada');
    const before = Date.now();
    await page.click('#enqueue-form button[type="submit"]');
    await page.locator('#flash', { hasText: 'job 1 enqueued (mail/send)' }).waitFor(WAIT);
    await page.waitForURL(/#\/jobs\/1$/, WAIT);
    await page.locator('#job-id', { hasText: '1' }).waitFor(WAIT);
    const job = (await store.getJob({ id: '1' }))!;
    expect(job).toMatchObject({ queue: 'mail', kind: 'send', payload: { to: 'ada@example.com' }, priority: 3, uniqueKey: 'welcome-ada', state: 'pending' });
    expect(job.runAt.getTime()).toBeGreaterThanOrEqual(before + 59_000);

    await page.goBack();
    await page.locator('#enqueue-form').waitFor(WAIT);
    const refused = async (kind: string, payload: string, message: string) => {
      await page.fill('#enqueue-form input[name="kind"]', kind);
      await page.fill('#enqueue-form textarea[name="payload"]', payload);
      await page.click('#enqueue-form button[type="submit"]');
      await page.locator('#flash.error', { hasText: message }).waitFor(WAIT);
    };
    await refused('nope', '{}', 'enqueue refused (400): kind: queue "mail" has no handler for kind "nope" (it has send, digest)');
    await refused('send', JSON.stringify({ text: 'x'.repeat(80) }), 'enqueue refused (400): payload is 91 bytes of JSON, over the limit of 64');
    await refused('send', '{to: 1}', 'enqueue refused: payload is not valid JSON');
    expect(await store.listJobs({})).toHaveLength(1);
  });

  it('without queues: a queue the store knows, with the defaults; a live unique key answers its job; the token and the body are checked', async () => {
    const store = memoryStore();
    await mail.enqueue(store, 'send', {}, { uniqueKey: 'k' });
    const inspector = await session.startInspector({ store, port: 0, token: TOKEN });
    const post = (body: unknown, headers: Record<string, string> = { 'x-jobvisor-token': TOKEN }) =>
      fetch(`${inspector.url}api/jobs`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const answer = async (response: Response) => ({ status: response.status, body: (await response.json()) as Record<string, unknown> });

    expect((await post({ queue: 'mail', kind: 'send' }, {})).status).toBe(403);
    const created = await answer(await post({ queue: 'mail', kind: 'anything', payload: [1, 2], maxAttempts: 7 }));
    expect(created).toMatchObject({ status: 200, body: { created: true, message: 'job 2 enqueued (mail/anything)' } });
    expect(await store.getJob({ id: '2' })).toMatchObject({ payload: [1, 2], maxAttempts: 7 });
    expect(await answer(await post({ queue: 'mail', kind: 'send', uniqueKey: 'k' }))).toMatchObject({
      status: 200,
      body: { created: false, message: 'job 1 (pending) already holds unique key "k" in mail: nothing enqueued' },
    });
    for (const [body, error] of [
      [{ queue: 'sms', kind: 'send' }, 'queue: no job in the store uses "sms"; to enqueue the first job of a queue, start the inspector with its queues'],
      [{ queue: 'mail', kind: 'send', when: 1 }, 'unknown field "when"; expected queue, kind, payload, runInMs, priority, uniqueKey, maxAttempts'],
      [{ queue: 'mail', kind: 'send', priority: '3' }, 'priority: must be a number'],
      [{ queue: 'mail' }, 'kind: must be a string'],
      [{ queue: 'mail', kind: 'bad kind' }, expect.stringContaining('kind')],
      [{ queue: 'mail', kind: 'send', maxAttempts: 0 }, expect.stringContaining('maxAttempts')],
    ] as const) {
      expect(await answer(await post(body))).toEqual({ status: 400, body: { error } });
    }
    expect(await store.listJobs({})).toHaveLength(2);
    await expect(startInspector({ store, port: 0, queues: 'mail' as never })).rejects.toThrow(InvalidOptionError);
  });
});
