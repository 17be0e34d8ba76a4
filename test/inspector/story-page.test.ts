/**
 * A job's story in headless Chromium: a job that failed twice and then completed reads as
 * exactly that (numbered steps in order, one colour per attempt, the edge back from retrying
 * drawn, three attempts in the timeline with the error's stack on expand); the full machine is
 * a toggle away; and at 1024 and 1440 px the page never scrolls sideways, even with
 * 5,000-character values: the diagram scrolls inside its box, its labels at a legible size.
 */
import { expect, it } from 'vitest';
import { memoryStore, type MemoryStore } from '../../src/adapters/memory/index.js';
import { createSupervisor, defineQueue } from '../../src/index.js';
import { describeBrowser } from '../support/chromium.js';

const WAIT = { timeout: 10_000 };
const LONG = 'x'.repeat(5_000);

describeBrowser('inspector page: a job’s story', (session) => {
  let store: MemoryStore;

  /** A job that threw twice (the second time with a 5,000-character message) and completed. */
  async function twiceFailedJob(): Promise<string> {
    store = memoryStore();
    let calls = 0;
    const places = defineQueue('places', {
      maxAttempts: 5,
      backoff: () => 0,
      handlers: {
        collect: async () => {
          calls += 1;
          if (calls === 1) throw new Error('upstream timed out');
          if (calls === 2) throw new Error(`bad answer ${LONG}`);
          return { photos: 20, note: LONG };
        },
      },
    });
    const { job } = await places.enqueue(store, 'collect', { placeId: LONG }, { uniqueKey: `k-${LONG.slice(0, 900)}` });
    const supervisor = createSupervisor({ store, queues: [places], workerId: `worker-${LONG.slice(0, 300)}` });
    await supervisor.drain();
    await supervisor.stop();
    return job.id;
  }

  it('reads a job that failed twice and completed as exactly that', async () => {
    const id = await twiceFailedJob();
    const inspector = await session.startInspector({ store, port: 0 });
    const page = await session.newPage();
    await page.goto(`${inspector.url}#/jobs/${id}`);
    await page.locator('#job-diagram[data-view="story"] svg').waitFor(WAIT);

    const steps = await page.locator('#job-steps li').allTextContents();
    expect(steps.map((s) => s.replace(/\s+/g, ' ').trim())).toEqual([
      '1 waiting enqueued',
      '2 waiting → running claimed (attempt 1)',
      '3 running → retrying handler threw (attempt 1)',
      '4 retrying → running retry due (attempt 2)',
      '5 running → retrying handler threw (attempt 2)',
      '6 retrying → running retry due (attempt 3)',
      '7 running → completed handler returned (attempt 3)',
    ]);
    // On the diagram: the same steps, each on its edge, coloured per attempt.
    const drawn: Array<[string | null, string | null, string | null]> = [];
    const groups = page.locator('#job-diagram g.step');
    for (let i = 0; i < (await groups.count()); i++) {
      const g = groups.nth(i);
      drawn.push([await g.getAttribute('data-step'), await g.getAttribute('data-edge'), await g.locator('circle').getAttribute('fill')]);
    }
    expect(drawn.map(([step, edge]) => [step, edge])).toEqual([
      ['2', 'waiting->running'],
      ['3', 'running->retrying'],
      ['4', 'retrying->running'],
      ['5', 'running->retrying'],
      ['6', 'retrying->running'],
      ['7', 'running->completed'],
    ]);
    const colors = drawn.map(([, , fill]) => fill);
    expect(new Set([colors[0], colors[1]]).size).toBe(1);
    expect(new Set([colors[1], colors[2], colors[4]]).size).toBe(3);
    expect(await page.locator('#job-diagram [data-state="completed"]').getAttribute('class')).toContain('current');

    const attempts = page.locator('#job-attempts tbody tr');
    expect(await attempts.count()).toBe(3);
    const outcomes = await attempts.locator('td:nth-child(4)').allTextContents();
    expect(outcomes.map((t) => t.trim())).toEqual(['retrying handler threw', 'retrying handler threw', 'completed handler returned']);
    const firstError = attempts.nth(0).locator('details');
    expect(await firstError.locator('pre').isVisible()).toBe(false);
    await firstError.locator('summary').click();
    expect(await firstError.locator('pre').textContent()).toContain('Error: upstream timed out\n    at ');
    // Dates carry the day.
    expect(await attempts.nth(0).locator('td:nth-child(2)').textContent()).toMatch(/\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun)\b/);

    await page.check('input[name="diagram-view"][value="machine"]');
    await page.locator('#job-diagram[data-view="machine"] svg [data-state="failing"]').waitFor(WAIT);
  });

  for (const width of [1024, 1440]) {
    it(`never scrolls sideways at ${width} px, with 5,000-character values; the diagram's labels stay legible`, async () => {
      const id = await twiceFailedJob();
      const inspector = await session.startInspector({ store, port: 0 });
      const page = await session.newPage();
      await page.setViewportSize({ width, height: 900 });
      for (const path of ['#/', '#/workers', `#/jobs/${id}`]) {
        await page.goto(`${inspector.url}${path}`);
        await page.locator('#live', { hasText: /^live$/ }).waitFor(WAIT);
        if (path.startsWith('#/jobs/')) await page.locator('#job-diagram svg').waitFor(WAIT);
        else await page.locator(path === '#/' ? `#jobs tr[data-job-id="${id}"]` : '#workers-table tbody tr').waitFor(WAIT);
        const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
        expect(overflow, `${path} at ${width} px`).toBeLessThanOrEqual(0);
      }
      // Drawn at its own size: an edge label is as large on screen as in the SVG (13 px).
      const label = page.locator('#job-diagram svg g.edge text').first();
      const box = await label.boundingBox();
      expect(box!.height).toBeGreaterThanOrEqual(12);
    });
  }
});
