/**
 * The page's list in the real URL (reload and Back show the same list; a plain `/?state=dead`
 * is the page, not a JSON error), a banner when the server stops answering, and a running
 * job's progress as a bar with a rounded percent, live. Headless Chromium.
 */
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { memoryStore, type MemoryStore } from '../../src/adapters/memory/index.js';
import { createSupervisor, defineQueue, PermanentJobError } from '../../src/index.js';
import { describeBrowser } from '../support/chromium.js';

const WAIT = { timeout: 10_000 };

describeBrowser('inspector page: the list in the URL, the offline banner, progress', (session) => {
  let page: Page;
  let store: MemoryStore;

  const rows = () => page.locator('#jobs tbody tr[data-job-id]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-job-id')));

  it('keeps filters and paging in the query: reload and Back show the same list', async () => {
    store = memoryStore();
    const mail = defineQueue('mail', {
      maxAttempts: 1,
      handlers: { send: async () => null, bounce: async (): Promise<never> => { throw new PermanentJobError('gone'); } },
    });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await mail.enqueue(store, 'bounce', { i })).job.id);
    const sent = (await mail.enqueue(store, 'send', {})).job.id;
    const supervisor = createSupervisor({ store, queues: [mail] });
    await supervisor.drain();
    await supervisor.stop();
    const inspector = await session.startInspector({ store, port: 0 });
    page = await session.newPage();

    const response = await page.goto(`${inspector.url}?state=dead`);
    expect(response!.status()).toBe(200);
    expect(response!.headers()['content-type']).toContain('text/html');
    await page.locator(`#jobs tr[data-job-id="${ids[2]}"]`).waitFor(WAIT);
    expect(await rows()).toEqual([...ids].reverse());
    expect(await page.inputValue('#filters select[name="state"]')).toBe('dead');

    await page.selectOption('#filters select[name="state"]', 'completed');
    await page.click('#filters button[type="submit"]');
    await page.waitForURL((url) => url.search === '?state=completed', WAIT);
    await page.locator(`#jobs tr[data-job-id="${sent}"]`).waitFor(WAIT);
    expect(await rows()).toEqual([sent]);

    await page.reload();
    await page.locator(`#jobs tr[data-job-id="${sent}"]`).waitFor(WAIT);
    expect(await rows()).toEqual([sent]);
    await page.goBack();
    await page.waitForURL((url) => url.search === '?state=dead', WAIT);
    await page.locator(`#jobs tr[data-job-id="${ids[0]}"]`).waitFor(WAIT);
    expect(await rows()).toEqual([...ids].reverse());

    // A page further down the list is a URL too.
    await page.goto(`${inspector.url}?state=dead&before=${ids[2]}`);
    await page.locator(`#jobs tr[data-job-id="${ids[0]}"]`).waitFor(WAIT);
    expect(await rows()).toEqual([ids[1], ids[0]]);
    expect(await page.textContent('#pager-note')).toBe(`jobs older than ${ids[2]}`);
    await page.click('#newest');
    await page.waitForURL((url) => url.search === '?state=dead', WAIT);
    await page.locator(`#jobs tr[data-job-id="${ids[2]}"]`).waitFor(WAIT);
  });

  it('shows a banner when the server stops answering', async () => {
    store = memoryStore();
    const inspector = await session.startInspector({ store, port: 0 });
    page = await session.newPage();
    await page.goto(inspector.url);
    await page.locator('#live', { hasText: /^live$/ }).waitFor(WAIT);
    expect(await page.locator('#offline').isVisible()).toBe(false);
    await inspector.close();
    await page.locator('#offline').waitFor({ state: 'visible', ...WAIT });
    expect(await page.locator('#offline').textContent()).toContain('does not answer');
  });

  it('shows a running job’s progress as a bar with a rounded percent, live', async () => {
    store = memoryStore();
    let report!: (percent: number, message?: string) => void;
    let release!: () => void;
    const reported = new Promise<void>((resolve) => (release = resolve));
    const media = defineQueue('media', {
      handlers: {
        resize: async ({ progress }) => {
          report = progress;
          progress(12.4, 'fetching');
          await reported;
          return null;
        },
      },
    });
    const supervisor = session.supervisor({ store, queues: [media], pollIntervalMs: 20, progressIntervalMs: 10 });
    await supervisor.start();
    const { job } = await media.enqueue(store, 'resize', {});
    const inspector = await session.startInspector({ store, port: 0, pollIntervalMs: 50 });
    page = await session.newPage();
    await page.goto(`${inspector.url}#/jobs/${job.id}`);
    const bar = page.locator('#job-fields .progress');
    await bar.filter({ hasText: '12% fetching' }).waitFor(WAIT);
    expect(await bar.locator('progress').getAttribute('value')).toBe('12');
    report(67.6, 'resizing');
    await bar.filter({ hasText: '68% resizing' }).waitFor(WAIT);
    expect(await bar.locator('progress').getAttribute('value')).toBe('68');
    release();
  });

  it('retries every dead job of a queue at once, with a count and a confirm, behind the token', async () => {
    store = memoryStore();
    const mail = defineQueue('mail', {
      maxAttempts: 1,
      handlers: { send: async () => null, bounce: async (): Promise<never> => { throw new PermanentJobError('gone'); } },
    });
    const other = defineQueue('other', { maxAttempts: 1, handlers: { bounce: async (): Promise<never> => { throw new PermanentJobError('gone'); } } });
    const dead: string[] = [];
    for (let i = 0; i < 3; i++) dead.push((await mail.enqueue(store, 'bounce', { i })).job.id);
    const elsewhere = (await other.enqueue(store, 'bounce', {})).job.id;
    await mail.enqueue(store, 'send', {});
    const supervisor = createSupervisor({ store, queues: [mail, other] });
    await supervisor.drain();
    await supervisor.stop();
    const token = 'bulk-test-token';
    const inspector = await session.startInspector({ store, port: 0, token });
    page = await session.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.accept();
    });
    await page.goto(`${inspector.url}?queue=mail&state=dead`);
    await page.locator('#totals', { hasText: '3 jobs match queue mail, state dead' }).waitFor(WAIT);
    await page.fill('#token', token);
    await page.click('#token-form button[type=submit]');
    await page.locator('#token-note', { hasText: 'accepted' }).waitFor(WAIT);
    await page.click('#bulk-actions button[data-bulk="retry"]');
    await page.locator('#flash', { hasText: '3 of 3 matching jobs retried' }).waitFor(WAIT);
    expect(dialogs).toEqual(['retry all 3 jobs matching queue mail, state dead?']);
    for (const id of dead) expect((await store.getJob({ id }))?.state).toBe('pending');
    expect((await store.getJob({ id: elsewhere }))?.state).toBe('dead');
    await page.locator('#totals', { hasText: '0 jobs match queue mail, state dead' }).waitFor(WAIT);

    const refused = await page.evaluate<{ status: number }>(`fetch('/api/bulk/delete?queue=other', { method: 'POST' }).then((r) => ({ status: r.status }))`);
    expect(refused.status).toBe(403);
    const unfiltered = await page.evaluate<{ status: number }>(
      `fetch('/api/bulk/delete', { method: 'POST', headers: { 'x-jobvisor-token': '${token}' } }).then((r) => ({ status: r.status }))`,
    );
    expect(unfiltered.status).toBe(400);
    expect((await store.getJob({ id: elsewhere }))?.state).toBe('dead');
  });

  it('finds a match anywhere in the table, past the stretch one read looks at', async () => {
    store = memoryStore();
    const jobs = Array.from({ length: 10_050 }, (_, i) => ({ queue: 'bulk', kind: i === 0 ? 'rare' : 'common', payload: { i }, maxAttempts: 1 }));
    const [oldest] = await store.enqueueJobs({ jobs });
    const inspector = await session.startInspector({ store, port: 0 });
    page = await session.newPage();
    await page.goto(`${inspector.url}?kind=rare`);
    await page.locator(`#jobs tr[data-job-id="${oldest!.job.id}"]`).waitFor(WAIT);
    expect(await rows()).toEqual([oldest!.job.id]);
  });
});
