/**
 * Pausing and resuming a queue from the page, in headless Chromium: the queue shows as paused,
 * two supervisors on the store take none of its jobs while it is, and all of them once resumed.
 * The API refuses the action without the token, and a bad queue name with a 400.
 */
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { memoryStore, type MemoryStore } from '../../src/adapters/memory/index.js';
import { defineQueue } from '../../src/index.js';
import { describeBrowser } from '../support/chromium.js';

const TOKEN = 'queue-page-token';
const WAIT = { timeout: 10_000 };

describeBrowser('inspector page: pause and resume a queue', (session) => {
  let page: Page;
  let store: MemoryStore;

  const mail = defineQueue('mail', { handlers: { send: async () => ({ sent: true }) } });
  const status = () => page.locator('#queues tr[data-queue="mail"] .queue-status .state');

  it('pauses from the page; two supervisors take nothing until it is resumed, then everything', async () => {
    store = memoryStore();
    await mail.enqueue(store, 'send', { n: 0 });
    const supervisors = [0, 1].map(() => session.supervisor({ store, queues: [mail], pollIntervalMs: 20 }));
    await Promise.all(supervisors.map((s) => s.start()));
    const inspector = await session.startInspector({ store, port: 0, pollIntervalMs: 50, token: TOKEN });
    page = await session.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(inspector.url);
    await page.locator('#live', { hasText: /^live$/ }).waitFor(WAIT);
    await page.locator('#jobs tr[data-job-id="1"] .state', { hasText: 'completed' }).waitFor(WAIT);
    await page.fill('#token', TOKEN);
    await page.click('#token-form button[type=submit]');
    await page.locator('#token-note', { hasText: 'accepted' }).waitFor(WAIT);
    expect(await status().textContent()).toBe('active');

    await page.click('#queues tr[data-queue="mail"] button[data-queue-action="pause"]');
    await status().filter({ hasText: 'paused' }).waitFor(WAIT);
    expect((await store.listQueues())[0]?.pausedAt).toBeInstanceOf(Date);

    const ids: string[] = [];
    for (let i = 1; i <= 4; i++) ids.push((await mail.enqueue(store, 'send', { n: i })).job.id);
    // Each enqueue woke both supervisors, which claimed (nothing) at once.
    await page.locator('#queues tr[data-queue="mail"] td.num.pending', { hasText: '4' }).waitFor(WAIT);
    for (const id of ids) expect((await store.getJob({ id }))?.state).toBe('pending');

    const resumedAt = Date.now();
    await page.click('#queues tr[data-queue="mail"] button[data-queue-action="resume"]');
    await status().filter({ hasText: 'active' }).waitFor(WAIT);
    for (const id of ids) await page.locator(`#jobs tr[data-job-id="${id}"] .state`, { hasText: 'completed' }).waitFor(WAIT);
    for (const id of ids) {
      const events = await store.getJobEvents({ id });
      expect(events.map((e) => e.toState)).toEqual(['pending', 'running', 'completed']);
      expect(events[1]!.at.getTime()).toBeGreaterThanOrEqual(resumedAt);
    }
  });

  it('counts a queue\'s waiting (flow) and sleeping (durable) jobs in columns of their own, not as pending', async () => {
    store = memoryStore();
    const { job: parent } = await mail.enqueue(store, 'send', { n: 0 });
    await mail.enqueue(store, 'send', { n: 1 }, { dependsOn: [parent.id] });
    const [claimed] = await store.claimJobs({ workerId: 'w1', leaseMs: 60_000, queues: [{ queue: 'mail', limit: 1 }] });
    await store.suspendIfRunning({ id: parent.id, leaseToken: claimed!.leaseToken, kind: 'sleep', name: 'nap', wake: { delayMs: 3_600_000 } });
    const inspector = await session.startInspector({ store, port: 0, pollIntervalMs: 50 });
    page = await session.newPage();
    await page.goto(inspector.url);
    const cell = (state: string) => page.locator(`#queues tr[data-queue="mail"] td.num.${state}`);
    await cell('sleeping').filter({ hasText: '1' }).waitFor(WAIT);
    expect(await cell('waiting').textContent()).toBe('1');
    const counts = await page.locator('#queues tr[data-queue="mail"] td.num').allTextContents();
    // pending, retrying, running, waiting, sleeping, dead, skipped, cancelled
    expect(counts).toEqual(['0', '0', '0', '1', '1', '0', '0', '0']);
  });

  it('the API needs the token for a queue action, and refuses a bad name', async () => {
    store = memoryStore();
    await mail.enqueue(store, 'send', {});
    const inspector = await session.startInspector({ store, port: 0, token: TOKEN });
    page = await session.newPage();
    await page.goto(inspector.url);
    const post = (path: string, token?: string) =>
      page.evaluate(
        async ([p, t]) => {
          const response = await fetch(p!, { method: 'POST', headers: t ? { 'x-jobvisor-token': t } : {} });
          return { status: response.status, body: await response.json() };
        },
        [path, token],
      );
    expect((await post('/api/queues/mail/pause')).status).toBe(403);
    expect((await store.listQueues())[0]?.pausedAt).toBeNull();
    expect(await post('/api/queues/a%20b/pause', TOKEN)).toMatchObject({ status: 400, body: { error: expect.stringContaining('queue: must be') } });
    expect((await post('/api/queues/mail/stop', TOKEN)).status).toBe(404);
    expect(await post('/api/queues/mail/pause', TOKEN)).toMatchObject({ status: 200, body: { queue: { name: 'mail' } } });
    expect((await store.listQueues())[0]?.pausedAt).toBeInstanceOf(Date);
  });
});
