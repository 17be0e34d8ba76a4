/**
 * The story diagram's labels, measured in headless Chromium at 1024 px: for a job that retried
 * twice and one that ran over its deadline, no two label boxes (the edges' words and the
 * steps' numbers) intersect, and none lies on a state. The diagram is drawn at its own size
 * (the page scrolls it), so the words stay legible.
 */
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { memoryStore, type MemoryStore } from '../../src/adapters/memory/index.js';
import type { JobOutcome } from '../../src/adapters/store.js';
import type { Inspector } from '../../src/inspector/index.js';
import { describeBrowser } from '../support/chromium.js';

const WAIT = { timeout: 10_000 };

interface Measured {
  label: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

describeBrowser('inspector page: the story diagram’s labels', (session) => {
  let page: Page;
  let inspector: Inspector;

  /** Runs one job through attempts that end as given, by the store's own writes. */
  async function jobWith(store: MemoryStore, ends: ReadonlyArray<'retry' | 'retry-late' | 'dead-late' | 'completed'>): Promise<string> {
    const [created] = await store.enqueueJobs({ jobs: [{ queue: 'q', kind: 'k', payload: {}, maxAttempts: ends.length }] });
    for (const end of ends) {
      const [claimed] = await store.claimJobs({ workerId: 'w1', leaseMs: 60_000, queues: [{ queue: 'q', limit: 1 }] });
      const lease = { id: claimed!.id, leaseToken: claimed!.leaseToken };
      const late = { code: 'deadline_exceeded', message: 'ran over its deadline of 50 ms' };
      const outcome: JobOutcome =
        end === 'completed'
          ? { ...lease, state: 'completed', result: null }
          : end === 'dead-late'
            ? { ...lease, state: 'dead', error: late }
            : { ...lease, state: 'retrying', error: end === 'retry' ? { code: 'handler_error', message: 'boom' } : late, delayMs: 0 };
      expect(await store.setStatesIfRunning({ outcomes: [outcome] })).toEqual([true]);
    }
    return created!.job.id;
  }

  async function measure(id: string): Promise<{ labels: Measured[]; states: Measured[]; svgWidth: number; fontPx: number }> {
    await page.goto(`${inspector.url}#/jobs/${id}`);
    await page.locator('#job-diagram[data-view="story"] svg g.step').first().waitFor(WAIT);
    // A string: the test's TypeScript has no DOM types; this runs in the page.
    return page.evaluate(`(() => {
      const box = (label, el) => {
        const b = el.getBBox();
        return { label, x: b.x, y: b.y, width: b.width, height: b.height };
      };
      const svg = document.querySelector('#job-diagram svg');
      const labels = [
        ...[...svg.querySelectorAll('g.edge text')].map((t) => box('edge ' + t.closest('g').dataset.edge + ': ' + t.textContent, t)),
        ...[...svg.querySelectorAll('g.step circle')].map((c) => box('step ' + c.closest('g').dataset.step, c)),
      ];
      const states = [...svg.querySelectorAll('g.state rect')].map((r) => box('state ' + r.closest('g').dataset.state, r));
      const text = svg.querySelector('g.edge text');
      return { labels, states, svgWidth: svg.getBoundingClientRect().width, fontPx: text.getBoundingClientRect().height };
    })()`);
  }

  const meet = (a: Measured, b: Measured) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

  function collisions(labels: Measured[], states: Measured[]): string[] {
    const found: string[] = [];
    labels.forEach((a, i) => {
      for (const b of labels.slice(i + 1)) if (meet(a, b)) found.push(`${a.label} × ${b.label}`);
      for (const s of states) if (meet(a, s)) found.push(`${a.label} × ${s.label}`);
    });
    return found;
  }

  it.each([
    ['a job that retried twice, then completed', ['retry', 'retry', 'completed'] as const, 6],
    ['a job that ran over its deadline twice, then died', ['retry-late', 'dead-late'] as const, 4],
  ])('%s: no two label boxes intersect at 1024 px', async (_, ends, steps) => {
    const store = memoryStore();
    const id = await jobWith(store, ends);
    inspector = await session.startInspector({ store, port: 0 });
    page = await session.newPage();
    await page.setViewportSize({ width: 1024, height: 800 });
    const { labels, states, svgWidth, fontPx } = await measure(id);
    expect(labels.filter((l) => l.label.startsWith('step '))).toHaveLength(steps);
    expect(labels.filter((l) => l.label.startsWith('edge '))).toHaveLength(16);
    expect(collisions(labels, states)).toEqual([]);
    // Not shrunk to fit: drawn at its own width, its words at least 12 px high on screen.
    expect(svgWidth).toBe(1000);
    expect(fontPx).toBeGreaterThanOrEqual(12);
  });
});
