/**
 * The schedules page, in headless Chromium: each schedule given to the inspector with its
 * timetable, job, last and next tick; pause, resume and run now behind the token, each asked
 * first; a schedule no supervisor has started yet can be run but not paused.
 */
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { defineQueue, defineSchedule } from '../../src/index.js';
import { describeBrowser } from '../support/chromium.js';

const TOKEN = 'schedules-page-token';
const WAIT = { timeout: 10_000 };

describeBrowser('inspector page: schedules', (session) => {
  let page: Page;

  it('lists each schedule with its ticks, and pauses, resumes and runs one from the page', async () => {
    const store = memoryStore();
    const built: unknown[] = [];
    const reports = defineQueue('reports', { handlers: { build: async (job: { payload: unknown }) => void built.push(job.payload) } });
    const hourly = defineSchedule({ name: 'hourly-report', cron: '0 * * * *', queue: reports, kind: 'build', payload: { span: 'hour' } });
    const nightly = defineSchedule({ name: 'nightly-report', cron: '30 2 * * *', timezone: 'Europe/Paris', queue: reports, kind: 'build', payload: { span: 'day' } });
    const supervisor = session.supervisor({ store, queues: [reports], schedules: [hourly], pollIntervalMs: 20 });
    await supervisor.start();
    await expect.poll(async () => (await store.getSchedules({ names: ['hourly-report'] })).schedules.length, WAIT).toBe(1);

    const inspector = await session.startInspector({ store, port: 0, token: TOKEN, schedules: [hourly, nightly] });
    page = await session.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${inspector.url}#/schedules`);
    await page.fill('#token', TOKEN);
    await page.click('#token-form button[type=submit]');
    await page.locator('#token-note', { hasText: 'accepted' }).waitFor(WAIT);
    const row = (name: string) => page.locator(`#schedules-table tr[data-schedule="${name}"]`);
    await row('hourly-report').locator('.schedule-status', { hasText: 'active' }).waitFor(WAIT);
    expect(await page.isHidden('#overview')).toBe(true);
    const cells = (await row('hourly-report').locator('td').allTextContents()).map((t) => t.trim());
    expect(cells.slice(0, 4)).toEqual(['hourly-report', 'active', '0 * * * * UTC', 'reports/build']);
    const nextTick = await row('hourly-report').locator('td:nth-child(6) time').getAttribute('datetime');
    expect(new Date(nextTick!).getUTCMinutes()).toBe(0);
    expect(new Date(nextTick!).getTime()).toBeGreaterThan(Date.now());
    expect((await row('nightly-report').locator('td').allTextContents()).slice(1, 3)).toEqual(['not started', '30 2 * * * Europe/Paris']);
    expect(await row('nightly-report').locator('button').allTextContents()).toEqual(['run now']);

    await row('hourly-report').locator('button[data-schedule-action="pause"]').click();
    await row('hourly-report').locator('.schedule-status', { hasText: 'paused' }).waitFor(WAIT);
    expect((await store.getSchedules({ names: ['hourly-report'] })).schedules[0]!.pausedAt).toBeInstanceOf(Date);

    await row('hourly-report').locator('button[data-schedule-action="run"]').click();
    await page.locator('#flash', { hasText: /^schedule hourly-report: job \d+ enqueued now \(reports\/build\)$/ }).waitFor(WAIT);
    await expect.poll(() => built, WAIT).toEqual([{ span: 'hour' }]);

    await row('hourly-report').locator('button[data-schedule-action="resume"]').click();
    await row('hourly-report').locator('.schedule-status', { hasText: 'active' }).waitFor(WAIT);
    expect((await store.getSchedules({ names: ['hourly-report'] })).schedules[0]!.pausedAt).toBeNull();

    const post = (path: string, headers: Record<string, string> = { 'x-jobvisor-token': TOKEN }) => fetch(`${inspector.url}api/schedules/${path}`, { method: 'POST', headers });
    expect((await post('hourly-report/pause', {})).status).toBe(403);
    expect((await post('unknown/pause')).status).toBe(404);
    expect((await post('hourly-report/stop')).status).toBe(404);
    const notStarted = await post('nightly-report/pause');
    expect(notStarted.status).toBe(409);
    expect(((await notStarted.json()) as { error: string }).error).toBe(
      'schedule nightly-report is not in the store yet: a supervisor that runs it registers it at its start',
    );
  });

  it('without schedules the page says how to give them', async () => {
    const inspector = await session.startInspector({ store: memoryStore(), port: 0 });
    page = await session.newPage();
    await page.goto(`${inspector.url}#/schedules`);
    await page.locator('#schedules-table td.muted', { hasText: 'no schedules: start the inspector with them' }).waitFor(WAIT);
    expect(await (await fetch(`${inspector.url}api/schedules`)).json()).toMatchObject({ schedules: [] });
  });
});
