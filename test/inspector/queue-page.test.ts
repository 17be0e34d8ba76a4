/**
 * A queue's own page, in headless Chromium: its counts, and its dead jobs grouped by error
 * (code and message) with a retry per group, as sidekiq-undertaker shows a dead set. The API
 * refuses the retry without the token, a body that names no group, and a bad queue name.
 */
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { defineQueue, PermanentJobError } from '../../src/index.js';
import { describeBrowser } from '../support/chromium.js';

const TOKEN = 'queue-page-token';
const WAIT = { timeout: 10_000 };

describeBrowser('inspector page: a queue and its dead jobs by error', (session) => {
  let page: Page;

  it('groups the dead jobs by error and retries one group from the page', async () => {
    const store = memoryStore();
    let failing = true;
    const mail = defineQueue('mail', {
      handlers: {
        send: async (job: { payload: { fail?: string } }) => {
          if (failing && job.payload.fail) throw new PermanentJobError(job.payload.fail);
          return { sent: true };
        },
      },
    });
    const timedOut: string[] = [];
    for (let i = 0; i < 3; i++) timedOut.push((await mail.enqueue(store, 'send', { fail: 'upstream timed out' })).job.id);
    for (let i = 0; i < 2; i++) await mail.enqueue(store, 'send', { fail: 'place is gone' });
    await mail.enqueue(store, 'send', {});
    const supervisor = session.supervisor({ store, queues: [mail], pollIntervalMs: 20 });
    await supervisor.start();
    await expect.poll(async () => (await store.countJobsUpTo({ queue: 'mail', state: 'dead', max: 10 })).count, WAIT).toBe(5);

    const inspector = await session.startInspector({ store, port: 0, pollIntervalMs: 50, token: TOKEN });
    page = await session.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(inspector.url);
    await page.locator('#live', { hasText: /^live$/ }).waitFor(WAIT);
    await page.click('#queues tr[data-queue="mail"] td:first-child a');
    await page.locator('#queue-name', { hasText: 'mail' }).waitFor(WAIT);
    expect(page.url()).toMatch(/#\/queues\/mail$/);
    expect(await page.isHidden('#overview')).toBe(true);
    await page.locator('#queue-counts td.num.dead', { hasText: '5' }).waitFor(WAIT);

    const groups = page.locator('#dead-groups tbody tr');
    await groups.nth(1).waitFor(WAIT);
    expect(await groups.count()).toBe(2);
    expect(await groups.nth(0).locator('td').allTextContents()).toEqual(
      expect.arrayContaining(['3', 'permanent_error', 'upstream timed out', timedOut.at(-1)]),
    );
    expect(await groups.nth(1).locator('td').nth(2).textContent()).toBe('place is gone');
    expect(await page.textContent('#dead-groups-note')).toBe('5 dead jobs, grouped by error code and message');

    await page.fill('#token', TOKEN);
    await page.click('#token-form button[type=submit]');
    await page.locator('#token-note', { hasText: 'accepted' }).waitFor(WAIT);
    failing = false;
    await groups.nth(0).locator('button[data-group-action="retry"]').click();
    await page.locator('#flash', { hasText: '3 of 3 dead jobs of queue mail with this error retried' }).waitFor(WAIT);
    for (const id of timedOut) await expect.poll(async () => (await store.getJob({ id }))?.state, WAIT).toBe('completed');
    await page.locator('#queue-counts td.num.dead', { hasText: '2' }).waitFor(WAIT);
    await page.locator('#dead-groups tbody tr', { hasText: 'place is gone' }).waitFor(WAIT);
    await expect.poll(() => groups.count(), WAIT).toBe(1);
  });

  it("shows a fair queue's tenants with their backlogs, and no tenants for a plain queue", async () => {
    const store = memoryStore();
    const exports = defineQueue('exports', { fairShare: true, handlers: { run: async () => null } });
    for (let i = 0; i < 3; i++) await exports.enqueue(store, 'run', {}, { tenant: 'acme' });
    await exports.enqueue(store, 'run', {}, { tenant: 'globex' });
    await exports.enqueue(store, 'run', {});
    const [held] = await store.claimJobs({ workerId: 'w', leaseMs: 60_000, queues: [{ queue: 'exports', limit: 1, fairShare: true }] });
    expect(held!.tenant).toBe('acme');
    await store.enqueueJobs({ jobs: [{ queue: 'plain', kind: 'k', payload: {}, maxAttempts: 1 }] });
    const inspector = await session.startInspector({ store, port: 0 });
    page = await session.newPage();
    await page.goto(`${inspector.url}#/queues/exports`);
    const rows = page.locator('#tenants-table tbody tr');
    await rows.nth(2).waitFor(WAIT);
    const cells = await rows.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    expect(cells).toEqual([
      ['acme', '2', '1'],
      ['default tenant', '1', '0'],
      ['globex', '1', '0'],
    ]);
    await page.goto(`${inspector.url}#/queues/plain`);
    await page.locator('#queue-name', { hasText: 'plain' }).waitFor(WAIT);
    await page.locator('#dead-groups-note', { hasText: '0 dead jobs' }).waitFor(WAIT);
    expect(await page.isHidden('#tenants')).toBe(true);
  });

  it('refuses a retry without the token, a body that names no group, and a bad queue name', async () => {
    const store = memoryStore();
    const inspector = await session.startInspector({ store, port: 0, pollIntervalMs: 50, token: TOKEN });
    const retry = (body: string, headers: Record<string, string>) =>
      fetch(`${inspector.url}api/queues/mail/dead-groups/retry`, { method: 'POST', headers, body });
    const json = { 'content-type': 'application/json' };
    expect((await retry('{"code": null, "message": null}', json)).status).toBe(403);
    const authorized = { ...json, 'x-jobvisor-token': TOKEN };
    const refusal = await retry('{"code": 1, "message": "boom"}', authorized);
    expect(refusal.status).toBe(400);
    expect(((await refusal.json()) as { error: string }).error).toBe('code: must be a string or null, as the group shows it');
    expect((await retry('[]', authorized)).status).toBe(400);
    expect((await retry('code=x', { 'x-jobvisor-token': TOKEN, 'content-type': 'application/x-www-form-urlencoded' })).status).toBe(415);
    const none = await retry('{"code": "x", "message": "y"}', authorized);
    expect(await none.json()).toEqual({ matched: 0, applied: 0, capped: false, message: '0 of 0 dead jobs of queue mail with this error retried' });
    expect((await fetch(`${inspector.url}api/queues/${encodeURIComponent('no good')}/dead-groups`)).status).toBe(400);
    expect(await (await fetch(`${inspector.url}api/queues/mail/dead-groups`)).json()).toEqual({ groups: [], examined: 0, partial: false });
  });

  it('shows what the queue completed in the last hour, its throughput charts, and the limits its definition sets', async () => {
    const store = memoryStore();
    const reports = defineQueue('reports', {
      concurrency: 3,
      perKeyConcurrency: 2,
      rateLimit: { max: 10, intervalMs: 60_000 },
      maxAttempts: 4,
      deadlineMs: 30_000,
      handlers: { build: async () => null },
    });
    for (let i = 0; i < 4; i++) await reports.enqueue(store, 'build', {});
    const supervisor = session.supervisor({ store, queues: [reports], pollIntervalMs: 20 });
    await supervisor.start();
    await expect.poll(async () => (await store.countJobsUpTo({ queue: 'reports', state: 'completed', max: 10 })).count, WAIT).toBe(4);
    await store.enqueueJobs({
      jobs: [
        { queue: 'unknown', kind: 'k', payload: {}, maxAttempts: 1 },
        { queue: 'unknown', kind: 'k', payload: {}, maxAttempts: 1, runAt: new Date(Date.now() + 3_600_000) },
      ],
    });

    const inspector = await session.startInspector({ store, port: 0, queues: [reports] });
    page = await session.newPage();
    await page.goto(`${inspector.url}#/queues/reports`);
    await page.locator('#queue-completed-hour', { hasText: /^4$/ }).waitFor(WAIT);
    const bars = page.locator('#queue-throughput svg.tp-chart g.tp-bucket');
    await bars.first().waitFor(WAIT);
    const completed = await bars.evaluateAll((gs) => gs.reduce((sum, g) => sum + Number(g.getAttribute('data-completed') ?? 0), 0));
    expect(completed).toBe(4);
    expect(await page.textContent('#queue-limits')).toBe(
      'limits: concurrency 3 per worker, 2 per concurrency key, at most 10 starts per 1 min 0 s, 4 attempts, deadline 30 s, lease 2 min 0 s',
    );

    // A queue the inspector was not given: no limits to show, and an idle chart.
    await page.goto(`${inspector.url}#/queues/unknown`);
    await page.locator('#queue-name', { hasText: 'unknown' }).waitFor(WAIT);
    await page.locator('#queue-limits', { hasText: 'as its workers define them' }).waitFor(WAIT);
    await page.locator('#queue-throughput td.tp-idle').waitFor(WAIT);
    expect(await page.textContent('#queue-counts .pending-split')).toBe('1 due · 1 scheduled · 0 snoozed');
    expect(await page.textContent('#queue-completed-hour')).toBe('0');
  });
});
