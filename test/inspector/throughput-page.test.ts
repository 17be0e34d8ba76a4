/**
 * Throughput over time on the queues page, in headless Chromium: a known history (written at
 * set times a few minutes ago) read back off the charts, per minute and per hour, and the JSON
 * API's answer and refusals.
 */
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { memoryStore, type MemoryStore } from '../../src/adapters/memory/index.js';
import type { JobOutcome } from '../../src/adapters/store.js';
import { describeBrowser } from '../support/chromium.js';

const WAIT = { timeout: 10_000 };
const MINUTE = 60_000;
const HOUR = 3_600_000;

describeBrowser('inspector page: throughput over time', (session) => {
  let page: Page;

  /** The store's clock, set by the seeding below; the inspector reads the wall clock. */
  let at = 0;

  async function attempt(store: MemoryStore, queue: string, runMs: number, state: 'completed' | 'retrying' | 'dead', startAt: number) {
    at = startAt;
    const [claimed] = await store.claimJobs({ workerId: 'w1', leaseMs: 60_000, queues: [{ queue, limit: 1 }] });
    at = startAt + runMs;
    const lease = { id: claimed!.id, leaseToken: claimed!.leaseToken };
    const outcome: JobOutcome =
      state === 'completed'
        ? { ...lease, state, result: null }
        : state === 'retrying'
          ? { ...lease, state, error: { code: 'handler_error', message: 'boom' }, delayMs: 0 }
          : { ...lease, state, error: { code: 'permanent_error', message: 'gone' } };
    expect(await store.setStatesIfRunning({ outcomes: [outcome] })).toEqual([true]);
  }

  /** Queue mail, five minutes ago: two completed (200 and 100 ms), one retried (500 ms), one
   *  dead (900 ms). Queue bills, three minutes ago: one completed in 1,500 ms. */
  async function seed(): Promise<{ store: MemoryStore; mailMinute: number; billsMinute: number }> {
    const store = memoryStore({ clock: { now: () => at } });
    const mailMinute = Math.floor(Date.now() / MINUTE) * MINUTE - 5 * MINUTE;
    const billsMinute = mailMinute + 2 * MINUTE;
    at = mailMinute + 1_000;
    await store.enqueueJobs({ jobs: [1, 2, 3].map((n) => ({ queue: 'mail', kind: 'send', payload: { n }, maxAttempts: n === 3 ? 1 : 3 })) });
    await attempt(store, 'mail', 200, 'completed', mailMinute + 1_000);
    await attempt(store, 'mail', 500, 'retrying', mailMinute + 2_000);
    await attempt(store, 'mail', 100, 'completed', mailMinute + 3_000);
    await attempt(store, 'mail', 900, 'dead', mailMinute + 4_000);
    at = billsMinute;
    await store.enqueueJobs({ jobs: [{ queue: 'idle', kind: 'wait', payload: {}, maxAttempts: 1 }] });
    await store.enqueueJobs({ jobs: [{ queue: 'bills', kind: 'pay', payload: {}, maxAttempts: 1 }] });
    await attempt(store, 'bills', 1_500, 'completed', billsMinute + 10_000);
    return { store, mailMinute, billsMinute };
  }

  const bucket = (queue: string, start: number, chart: 1 | 2) =>
    page.locator(`#throughput tr[data-queue="${queue}"] td.tp-cell:nth-child(${chart + 1}) g.tp-bucket[data-bucket="${new Date(start).toISOString()}"]`);
  const attributes = (queue: string, start: number, chart: 1 | 2, names: string[]) =>
    bucket(queue, start, chart).evaluate((g, n) => Object.fromEntries(n.map((name) => [name, g.getAttribute(`data-${name}`)])), names);

  it('draws completed, failed and the run time per minute, then per hour', async () => {
    const { store, mailMinute, billsMinute } = await seed();
    const inspector = await session.startInspector({ store, port: 0 });
    page = await session.newPage();
    await page.goto(inspector.url);
    await bucket('mail', mailMinute, 1).waitFor({ state: 'attached', ...WAIT });

    expect(await page.locator('#throughput tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-queue')))).toEqual(['bills', 'idle', 'mail']);
    expect(await page.textContent('#throughput tr[data-queue="idle"] td.tp-idle')).toBe('idle: nothing ended in this window');
    expect(await attributes('mail', mailMinute, 1, ['completed', 'failed'])).toEqual({ completed: '2', failed: '2' });
    expect(await attributes('mail', mailMinute, 2, ['attempts', 'p50', 'p95'])).toEqual({ attempts: '4', p50: '200', p95: '900' });
    expect(await bucket('mail', mailMinute, 1).locator('title').textContent()).toMatch(/: 2 completed, 2 failed \(1 retried, 1 dead\)$/);
    expect(await bucket('mail', mailMinute, 2).locator('title').textContent()).toMatch(/: 4 attempts ended, p50 200 ms, p95 900 ms$/);
    expect(await attributes('bills', billsMinute, 2, ['attempts', 'p50', 'p95'])).toEqual({ attempts: '1', p50: '1500', p95: '1500' });
    // Only the minutes where something ended are drawn.
    expect(await page.locator('#throughput tr[data-queue="mail"] td.tp-cell:nth-child(2) g.tp-bucket').count()).toBe(1);
    expect(await page.textContent('#throughput tr[data-queue="mail"] .tp-totals')).toBe('2 completed, 2 failed (1 retried, 1 dead)');
    expect(await page.getAttribute('#throughput tr[data-queue="mail"] td.tp-cell:nth-child(2) svg', 'aria-label')).toBe(
      'mail: 2 completed, 2 failed, per min',
    );
    expect(await page.textContent('#throughput-note')).toBe('last hour, per minute');

    await page.check('input[name="throughput-window"][value="24h"]');
    await page.locator('#throughput-note', { hasText: 'last 24 hours, per hour' }).waitFor(WAIT);
    const mailHour = Math.floor(mailMinute / HOUR) * HOUR;
    const billsHour = Math.floor(billsMinute / HOUR) * HOUR;
    expect(await attributes('mail', mailHour, 2, ['attempts', 'p50', 'p95'])).toEqual({ attempts: '4', p50: '200', p95: '900' });
    expect(await attributes('mail', mailHour, 1, ['completed', 'failed'])).toEqual({ completed: '2', failed: '2' });
    expect(await attributes('bills', billsHour, 1, ['completed', 'failed'])).toEqual({ completed: '1', failed: '0' });
  });

  it('answers the numbers as JSON, and refuses an unknown window or parameter', async () => {
    const { store, mailMinute } = await seed();
    const inspector = await session.startInspector({ store, port: 0 });
    const get = async (query: string) => {
      const response = await fetch(`${inspector.url}api/throughput${query}`);
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const { status, body } = await get('?window=1h');
    expect(status).toBe(200);
    expect(body).toMatchObject({ window: '1h', bucketMs: MINUTE, partial: false });
    const buckets = body.buckets as string[];
    expect(buckets).toHaveLength(60);
    const i = buckets.indexOf(new Date(mailMinute).toISOString());
    expect(i).toBeGreaterThanOrEqual(0);
    const mail = (body.queues as Array<Record<string, unknown[]>>).find((q) => q.queue === ('mail' as unknown))!;
    expect([mail.completed![i], mail.failed![i], mail.retried![i], mail.dead![i], mail.attempts![i], mail.p50Ms![i], mail.p95Ms![i]]).toEqual([
      2, 2, 1, 1, 4, 200, 900,
    ]);
    expect(mail.completed!.reduce((a, b) => (a as number) + (b as number), 0)).toBe(2);
    expect((await get('')).body).toMatchObject({ window: '1h' });
    expect((await get('?window=24h')).body).toMatchObject({ window: '24h', bucketMs: HOUR });
    expect(await get('?window=7d')).toMatchObject({ status: 400, body: { error: expect.stringContaining('window: must be one of 1h, 24h') } });
    expect(await get('?window=1h&queue=mail')).toMatchObject({ status: 400, body: { error: expect.stringContaining('queue') } });
  });
});
