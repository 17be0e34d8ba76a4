/**
 * The inspector's page in headless Chromium, on the memory store: it loads, follows a job
 * live without a reload, draws the job's path, guards retry with the token and shows hostile
 * payloads as text. Screenshots go to test-results/.
 */
import { mkdir } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { memoryStore, type MemoryStore } from '../../src/adapters/memory/index.js';
import { defineQueue, PermanentJobError, type Supervisor } from '../../src/index.js';
import { describeBrowser } from '../support/chromium.js';

const TOKEN = 'page-test-token';
const SCREENSHOTS = 'test-results';
const WAIT = { timeout: 10_000 };

describeBrowser('inspector page', (session) => {
  let page: Page;
  let store: MemoryStore;

  beforeAll(async () => {
    await mkdir(SCREENSHOTS, { recursive: true });
  });

  async function open(options: { token?: string; supervisor?: Supervisor } = {}, path = '') {
    const inspector = await session.startInspector({ store, port: 0, pollIntervalMs: 50, ...options });
    page = await session.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${inspector.url}${path}`);
    await page.locator('#live', { hasText: 'live' }).waitFor(WAIT);
    // Set once; a reload would lose it.
    await page.evaluate('window.__sameDocument = true');
    return errors;
  }

  function supervise(queue: ReturnType<typeof defineQueue<any>>) {
    return session.supervisor({ store, queues: [queue], pollIntervalMs: 20 });
  }

  async function waitText(selector: string, text: string) {
    await page.locator(selector, { hasText: new RegExp(`^${text}$`) }).waitFor(WAIT);
  }

  async function stillSameDocument() {
    expect(await page.evaluate('window.__sameDocument === true')).toBe(true);
  }

  it('loads: queues, running jobs and the job list', async () => {
    store = memoryStore();
    const mail = defineQueue('mail', { handlers: { send: async () => ({ sent: 1 }) } });
    await mail.enqueue(store, 'send', { to: 'a@example.com' });
    await supervise(mail).drain();
    const errors = await open();
    await waitText('#queues tr[data-queue="mail"] td:first-child', 'mail');
    await waitText('#jobs tr[data-job-id="1"] .state', 'completed');
    expect(await page.title()).toBe('jobvisor inspector');
    expect(await page.locator('#readonly').isVisible()).toBe(true);
    await page.screenshot({ path: `${SCREENSHOTS}/inspector-overview.png`, fullPage: true });
    expect(errors).toEqual([]);
  });

  it('follows a job enqueued during the test from pending to running to completed, without a reload', async () => {
    store = memoryStore();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const work = defineQueue('work', { handlers: { slow: async () => { await released; return { done: true }; } } });
    const supervisor = supervise(work);
    await open({ supervisor });

    const { job } = await work.enqueue(store, 'slow', { n: 1 });
    const state = `#jobs tr[data-job-id="${job.id}"] .state`;
    await waitText(state, 'pending');
    await supervisor.start();
    await waitText(state, 'running');
    await waitText('#running tbody td:first-child', job.id);
    release();
    await waitText(state, 'completed');
    await stillSameDocument();
    await page.screenshot({ path: `${SCREENSHOTS}/inspector-live.png`, fullPage: true });

    // The job's own page follows it too.
    const { job: second } = await work.enqueue(store, 'slow', { n: 2 });
    await page.click(`#jobs tr[data-job-id="${second.id}"] a`);
    await waitText('#job-state .state', 'completed');
    await stillSameDocument();
  });

  it('draws the job machine with the path the job took', async () => {
    store = memoryStore();
    let calls = 0;
    const flaky = defineQueue('places', {
      backoff: () => 0,
      handlers: {
        collect: async () => {
          calls += 1;
          if (calls === 1) throw new Error('upstream timed out');
          return { photos: 20 };
        },
      },
    });
    const { job } = await flaky.enqueue(store, 'collect', { placeId: 'p1' }, { uniqueKey: 'collect:p1' });
    await supervise(flaky).drain();
    await open({ token: TOKEN }, `#/jobs/${job.id}`);
    await waitText('#job-state .state', 'completed');
    await page.locator('#job-diagram[data-view="story"] svg').waitFor(WAIT);
    await page.check('input[name="diagram-view"][value="machine"]');
    await page.locator('#job-diagram[data-view="machine"]').waitFor(WAIT);
    const diagram = page.locator('#job-diagram svg');
    await diagram.waitFor(WAIT);
    const classes = (selector: string) => diagram.locator(selector).getAttribute('class');
    expect(await classes('[data-state="completed"]')).toContain('current');
    for (const state of ['claimed', 'running', 'failing', 'retrying', 'completing']) {
      expect(await classes(`[data-state="${state}"]`)).toContain('visited');
    }
    for (const edge of ['claimed->running', 'running->failing', 'failing->retrying', 'running->completing', 'completing->completed']) {
      expect(await classes(`[data-edge="${edge}"]`)).toContain('visited');
    }
    for (const state of ['dying', 'dead', 'cancelling', 'lost']) {
      expect(await classes(`[data-state="${state}"]`)).not.toContain('visited');
    }
    await expect(page.locator('#job-history tbody tr').count()).resolves.toBe(5);
    await page.screenshot({ path: `${SCREENSHOTS}/inspector-job.png`, fullPage: true });
  });

  it("shows a fair queue's job's tenant, and a debounced job's key and when it runs", async () => {
    store = memoryStore();
    const exports = defineQueue('exports', { fairShare: true, handlers: { run: async () => {} } });
    const { job: fair } = await exports.enqueue(store, 'run', {}, { tenant: 'acme' });
    const { job: debounced } = await exports.enqueue(store, 'run', {}, { debounce: { key: 'digest', delayMs: 60_000 } });
    const fields = async () => (await page.locator('#job-fields').innerText()).replace(/\s+/g, ' ');
    await open({}, `#/jobs/${fair.id}`);
    await waitText('#job-state .state', 'pending');
    expect(await fields()).toContain('tenant (fair share) acme');
    expect(await fields()).not.toContain('debounce key');
    await open({}, `#/jobs/${debounced.id}`);
    await waitText('#job-id', debounced.id);
    await expect.poll(fields).toContain('debounce key digest');
    expect(await fields()).toContain('runs at (unless the burst goes on)');
    expect(await fields()).not.toContain('tenant (fair share)');
  });

  it('retries a dead job with the token, and refuses without it', async () => {
    store = memoryStore();
    const doomed = defineQueue('doomed', {
      handlers: { run: async () => { throw new PermanentJobError('place is gone'); } },
    });
    const { job } = await doomed.enqueue(store, 'run', {});
    await supervise(doomed).drain();
    await open({ token: TOKEN }, `#/jobs/${job.id}`);
    await waitText('#job-state .state', 'dead');
    const dialogs: string[] = [];
    let answer = false;
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void (answer ? dialog.accept() : dialog.dismiss());
    });

    // Asked first: refused, nothing is sent.
    await page.click('#actions button[data-action="retry"]');
    await expect.poll(() => dialogs.length, WAIT).toBe(1);
    expect(dialogs[0]).toBe(`Retry job ${job.id}? It goes back to pending and runs again.`);
    answer = true;
    await page.click('#actions button[data-action="retry"]');
    await page.locator('#flash', { hasText: 'retry refused (403): a valid token is required' }).waitFor(WAIT);
    expect((await store.getJob({ id: job.id }))!.state).toBe('dead');

    await page.fill('#token', TOKEN);
    await page.click('#token-form button');
    await page.click('#actions button[data-action="retry"]');
    await page.locator('#flash', { hasText: `job ${job.id} is pending again` }).waitFor(WAIT);
    await waitText('#job-state .state', 'pending');
    expect((await store.getJob({ id: job.id }))!.state).toBe('pending');
    expect(dialogs).toHaveLength(3);
    // History times carry their date, milliseconds and zone (the page's: UTC here or another).
    const historyTime = await page.locator('#job-history tbody time').first().textContent();
    expect(historyTime).toMatch(new RegExp(`${new Date().getUTCFullYear() - 1}|${new Date().getUTCFullYear()}`));
    expect(historyTime).toMatch(/\d\d:\d\d:\d\d\.\d{3}\s\S*(UTC|GMT|[A-Z]{3,5})/);
    await stillSameDocument();
  });

  it('is read-only without a token: no action buttons, and the API answers 403', async () => {
    store = memoryStore();
    const { job } = await defineQueue('q', { handlers: { k: async () => null } }).enqueue(store, 'k', {});
    await open({}, `#/jobs/${job.id}`);
    await waitText('#job-state .state', 'pending');
    expect(await page.locator('#actions').isVisible()).toBe(false);
    expect(await page.locator('#token-form').isVisible()).toBe(false);
    const status = await page.evaluate(`fetch('/api/jobs/${job.id}/cancel', { method: 'POST' }).then((r) => r.status)`);
    expect(status).toBe(403);
  });

  it('shows a payload and an error holding markup as text', async () => {
    store = memoryStore();
    const hostile = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">';
    const evil = defineQueue('evil', {
      maxAttempts: 1,
      handlers: { run: async () => { throw new Error(`<b id="injected">bold</b>${hostile}`); } },
    });
    const { job } = await evil.enqueue(store, 'run', { note: hostile }, { uniqueKey: '<i>key</i>' });
    await supervise(evil).drain();
    const errors = await open({}, `#/jobs/${job.id}`);
    await waitText('#job-state .state', 'dead');

    expect(await page.textContent('#job-payload')).toContain('<script>window.__xss = 1</script><img src=x onerror=');
    expect(await page.textContent('#job-outcome')).toContain('<b id="injected">bold</b>');
    expect(await page.locator('#job-payload *, #job-outcome *, #injected').count()).toBe(0);
    await page.click('a[href="#/"]');
    await waitText(`#jobs tr[data-job-id="${job.id}"] td:nth-child(6)`, '<i>key</i>');
    expect(await page.locator('#jobs i, #jobs img, #jobs script').count()).toBe(0);
    // A hostile <img src=x> the page had created would fire its onerror once loading "x"
    // fails. A probe image of the same URL, made after every render above, fails after it
    // (same resource, listeners told in the order they came): when the probe's error event has
    // fired, so would the hostile one's. No timed wait.
    await page.evaluate(`new Promise((resolve) => {
      const probe = new Image();
      probe.onerror = resolve;
      probe.src = 'x';
    })`);
    expect(await page.evaluate('window.__xss')).toBeUndefined();
    expect(errors).toEqual([]);
  });
});
