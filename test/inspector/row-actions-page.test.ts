/**
 * Actions on each row of the job list, in headless Chromium: each row offers what its state
 * allows, asks before acting, needs the token (refused without it, as the bulk actions are),
 * and the row shows the outcome. A read-only inspector shows no buttons.
 */
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { memoryStore, type MemoryStore } from '../../src/adapters/memory/index.js';
import { createSupervisor, defineQueue, PermanentJobError } from '../../src/index.js';
import { describeBrowser } from '../support/chromium.js';

const TOKEN = 'row-actions-token';
const WAIT = { timeout: 10_000 };

describeBrowser('inspector page: actions on each job row', (session) => {
  let page: Page;

  const mail = defineQueue('mail', {
    maxAttempts: 1,
    handlers: { send: async () => null, bounce: async (): Promise<never> => { throw new PermanentJobError('gone'); } },
  });

  /** A dead job, a completed one, then a pending one (no worker runs it). */
  async function seed(): Promise<{ store: MemoryStore; dead: string; completed: string; pending: string }> {
    const store = memoryStore();
    const dead = (await mail.enqueue(store, 'bounce', {})).job.id;
    const completed = (await mail.enqueue(store, 'send', {})).job.id;
    const supervisor = createSupervisor({ store, queues: [mail] });
    await supervisor.drain();
    await supervisor.stop();
    const pending = (await mail.enqueue(store, 'send', {})).job.id;
    return { store, dead, completed, pending };
  }

  const row = (id: string) => page.locator(`#jobs tr[data-job-id="${id}"]`);
  const buttons = (id: string) => row(id).locator('button[data-row-action]').evaluateAll((bs) => bs.map((b) => b.getAttribute('data-row-action')));

  it('offers what each state allows, asks first, and needs the token', async () => {
    const { store, dead, completed, pending } = await seed();
    const inspector = await session.startInspector({ store, port: 0, pollIntervalMs: 50, token: TOKEN });
    page = await session.newPage();
    const dialogs: string[] = [];
    let answer = true;
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void (answer ? dialog.accept() : dialog.dismiss());
    });
    await page.goto(inspector.url);
    await row(pending).waitFor(WAIT);
    expect(await buttons(dead)).toEqual(['retry', 'delete']);
    expect(await buttons(completed)).toEqual(['delete']);
    expect(await buttons(pending)).toEqual(['cancel', 'delete']);

    // No token given yet: the server refuses, and says so.
    await row(dead).locator('button[data-row-action="retry"]').click();
    await page.locator('#flash.error', { hasText: 'retry refused (403)' }).waitFor(WAIT);
    expect((await store.getJob({ id: dead }))?.state).toBe('dead');

    await page.fill('#token', TOKEN);
    await page.click('#token-form button[type=submit]');
    await page.locator('#token-note', { hasText: 'accepted' }).waitFor(WAIT);

    // Said no to the question: nothing happens.
    answer = false;
    await row(completed).locator('button[data-row-action="delete"]').click();
    await expect.poll(() => dialogs.length, WAIT).toBe(2);
    expect(dialogs.at(-1)).toBe(`delete job ${completed} (mail/send, completed)?`);
    expect(await store.getJob({ id: completed })).not.toBeNull();
    answer = true;

    await row(dead).locator('button[data-row-action="retry"]').click();
    await row(dead).locator('.state', { hasText: 'pending' }).waitFor(WAIT);
    expect(await store.getJob({ id: dead })).toMatchObject({ state: 'pending', attempt: 1, maxAttempts: 2 });
    expect(await buttons(dead)).toEqual(['cancel', 'delete']);

    await row(pending).locator('button[data-row-action="cancel"]').click();
    await row(pending).locator('.state', { hasText: 'cancelled' }).waitFor(WAIT);
    expect((await store.getJob({ id: pending }))?.state).toBe('cancelled');

    await row(completed).locator('button[data-row-action="delete"]').click();
    await row(completed).waitFor({ state: 'detached', ...WAIT });
    expect(await store.getJob({ id: completed })).toBeNull();

    expect(dialogs).toEqual([
      `retry job ${dead} (mail/bounce, dead)?`,
      `delete job ${completed} (mail/send, completed)?`,
      `retry job ${dead} (mail/bounce, dead)?`,
      `cancel job ${pending} (mail/send, pending)?`,
      `delete job ${completed} (mail/send, completed)?`,
    ]);
  });

  it('on an older page, a row whose job moves gets the buttons of its new state', async () => {
    const { store, pending } = await seed();
    const inspector = await session.startInspector({ store, port: 0, pollIntervalMs: 50, token: TOKEN });
    page = await session.newPage();
    // An older page is not reloaded as jobs move: only its rows' states change in place.
    await page.goto(`${inspector.url}?before=${Number(pending) + 1}`);
    await page.locator('#live', { hasText: /^live$/ }).waitFor(WAIT);
    await row(pending).waitFor(WAIT);
    expect(await buttons(pending)).toEqual(['cancel', 'delete']);
    expect((await store.cancelJob({ id: pending }))?.cancelled).toBe(true);
    await row(pending).locator('.state', { hasText: 'cancelled' }).waitFor(WAIT);
    expect(await buttons(pending)).toEqual(['retry', 'delete']);
  });

  it('shows no buttons when the inspector is read-only', async () => {
    const { store, pending } = await seed();
    const inspector = await session.startInspector({ store, port: 0 });
    page = await session.newPage();
    await page.goto(inspector.url);
    await row(pending).waitFor(WAIT);
    expect(await page.locator('#jobs button[data-row-action]').count()).toBe(0);
  });
});
