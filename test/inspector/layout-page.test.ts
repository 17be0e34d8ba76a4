/**
 * The inspector's layout in headless Chromium, on a scene with real content (queues in every
 * state, throughput, a running job, a flow, a sleeping durable job, a job with a long unique
 * key and a long error, a worker with a long id): at a phone's 390 x 844 and a laptop's
 * 1366 x 768 no page scrolls sideways; at 1366 x 768 no short word (an id, a state, a number, a
 * header) is broken mid-way in the queues table, the jobs list, the workers table or the job's
 * fields; and with the system in dark mode the page is light on dark, its state badges legible.
 */
import { mkdir } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { memoryStore, type MemoryStore } from '../../src/adapters/memory/index.js';
import { NEVER } from '../../src/adapters/store.js';
import type { Inspector } from '../../src/inspector/index.js';
import { defineFlow, defineQueue, enqueueFlow, flowJob, PermanentJobError, type Queue } from '../../src/index.js';
import { describeBrowser, type BrowserSession } from '../support/chromium.js';

const WAIT = { timeout: 15_000 };
const SCREENSHOTS = 'test-results';
const PHONE = { width: 390, height: 844 };
const LAPTOP = { width: 1366, height: 768 };
const LONG_KEY = `import:customers:${'a1b2c3d4e5f6'.repeat(12)}`;
const LONG_ERROR = `GET https://api.example.com/v1/places/p-1042/photos?cursor=${'Zm9vYmFy'.repeat(24)} answered 503`;
const LONG_WORKER = `media-1.eu-west-1.compute.internal:5210:${'1a7e9f2c'.repeat(6)}`;
/** Longer than this, a value without spaces (a key, a message) may wrap anywhere. */
const SHORT_WORD = 32;

interface Scene {
  store: MemoryStore;
  queues: Queue[];
  /** A job that retried twice then completed: its story and machine diagrams have content. */
  storyId: string;
  /** A dead job with the long unique key and the long error. */
  longId: string;
  /** A durable job waiting for a signal after a stored step: its page has the signal form. */
  sleepingId: string;
  flowId: string;
}

/** Much as scripts/screenshots.ts sets its scene: jobs in every state, history, workers. */
async function scene(session: BrowserSession): Promise<Scene> {
  const store = memoryStore();
  let calls = 0;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  session.afterTest(() => release());
  const places = defineQueue('places', {
    maxAttempts: 5,
    backoff: () => 0,
    handlers: {
      collect: async () => {
        calls += 1;
        if (calls === 1) throw new Error('upstream timed out after 5000 ms');
        if (calls === 2) throw new Error('upstream answered 503');
        return { photos: 20 };
      },
      import: async (): Promise<never> => {
        throw new PermanentJobError(LONG_ERROR);
      },
    },
  });
  const mail = defineQueue('mail', {
    maxAttempts: 1,
    handlers: {
      send: async () => ({ sent: true }),
      bounce: async (): Promise<never> => {
        throw new PermanentJobError('mailbox does not exist');
      },
    },
  });
  const media = defineQueue('media', { handlers: { resize: async ({ progress }) => (progress(40, 'resizing'), held.then(() => ({ ok: true }))) } });
  const reports = defineQueue('reports', { handlers: { build: async () => null } });
  const steps = defineQueue('steps', { handlers: { step: async () => ({ ok: true }) } });

  const { job: story } = await places.enqueue(store, 'collect', { placeId: 'p-1042' }, { uniqueKey: 'collect:p-1042' });
  const { job: long } = await places.enqueue(store, 'import', { file: 'customers.csv' }, { uniqueKey: LONG_KEY, maxAttempts: 1 });
  for (let i = 0; i < 6; i++) await mail.enqueue(store, 'send', { to: `user${i}@example.com` });
  await mail.enqueue(store, 'bounce', { to: 'nobody@example.com' });
  const { flowId } = await enqueueFlow(
    store,
    defineFlow('diamond', {
      a: flowJob(steps, 'step', { node: 'a' }),
      b: flowJob(steps, 'step', { node: 'b' }, { dependsOn: ['a'] }),
      c: flowJob(steps, 'step', { node: 'c' }, { dependsOn: ['a'] }),
      d: flowJob(steps, 'step', { node: 'd' }, { dependsOn: ['b', 'c'] }),
    }),
  );
  const drainer = session.supervisor({ store, queues: [places, mail], workerId: 'api-1:4121:9f2c' });
  await drainer.drain();
  await drainer.stop();
  await steps.enqueue(store, 'step', { node: 'alone' });
  const [first] = await store.claimJobs({ workerId: 'api-1:4121:9f2c', leaseMs: 60_000, queues: [{ queue: 'steps', limit: 1 }] });
  const lease = { id: first!.id, leaseToken: first!.leaseToken };
  await store.checkpointSteps({ steps: [{ ...lease, name: 'charge', result: { chargeId: 'ch_1' } }] });
  await store.suspendIfRunning({ ...lease, kind: 'signal', name: 'shipped', signal: 'shipped', wake: { at: NEVER } });
  for (let i = 0; i < 3; i++) await reports.enqueue(store, 'build', { month: i + 1 });
  await store.pauseQueue({ queue: 'reports' });

  const worker = session.supervisor({ store, queues: [media], workerId: LONG_WORKER, pollIntervalMs: 50 });
  await worker.start();
  await media.enqueue(store, 'resize', { image: 'cover.jpg', width: 1280 });
  return { store, queues: [places, mail, media, reports, steps], storyId: story.id, longId: long.id, sleepingId: first!.id, flowId };
}

/** Each page of the inspector, opened and waited for until its content is there. */
interface InspectorPage {
  name: string;
  hash: string;
  ready(page: Page): Promise<unknown>;
}

function pages(scene: Scene): Record<'overview' | 'queue' | 'workers' | 'story' | 'long' | 'sleeping' | 'flow', InspectorPage> {
  return {
    overview: {
      name: 'the overview',
      hash: '#/',
      async ready(page) {
        await page.locator('#running tbody td', { hasText: /^media$/ }).waitFor(WAIT);
        await page.locator('#queues tr[data-queue="reports"] .state.paused').waitFor(WAIT);
        await page.locator('#throughput tr[data-queue="places"] g.tp-bucket').first().waitFor({ state: 'attached', ...WAIT });
        await page.locator(`#jobs tr[data-job-id="${scene.longId}"]`).waitFor(WAIT);
      },
    },
    queue: {
      name: 'a queue',
      hash: '#/queues/places',
      async ready(page) {
        await page.locator('#dead-groups tbody tr td.error-cell').first().waitFor(WAIT);
        await page.locator('#enqueue-form').waitFor(WAIT);
      },
    },
    workers: { name: 'the workers', hash: '#/workers', ready: (page) => page.locator('#workers-table tbody tr .held a').first().waitFor(WAIT) },
    story: {
      name: 'a job with retries',
      hash: `#/jobs/${scene.storyId}`,
      async ready(page) {
        await page.locator('#job-diagram[data-view="story"] svg').waitFor(WAIT);
        await page.locator('#job-attempts tbody tr[data-attempt="3"]').waitFor(WAIT);
      },
    },
    long: {
      name: 'a job with a long key and error',
      hash: `#/jobs/${scene.longId}`,
      async ready(page) {
        await page.locator('#job-diagram[data-view="story"] svg').waitFor(WAIT);
        await page.locator('#job-history tbody tr').nth(2).waitFor(WAIT);
      },
    },
    sleeping: {
      name: 'a durable job waiting for a signal, its machine',
      hash: `#/jobs/${scene.sleepingId}`,
      async ready(page) {
        await page.locator('#job-durable-steps tbody tr').first().waitFor(WAIT);
        await page.locator('#signal-form').waitFor(WAIT);
        await page.check('input[name="diagram-view"][value="machine"]');
        await page.locator('#job-diagram[data-view="machine"] svg').waitFor(WAIT);
      },
    },
    flow: { name: 'a flow', hash: `#/flows/${scene.flowId}`, ready: (page) => page.locator('#flow-diagram svg a.flow-node').first().waitFor(WAIT) },
  };
}

/** Words (no spaces) of at most SHORT_WORD characters in `selector`'s cells that the browser
 *  drew on more than one line: each one as "word (in cell text)". Run in the page, as a string:
 *  the tests are compiled without the DOM's types. */
function brokenWords(page: Page, selector: string): Promise<string[]> {
  return page.evaluate(`(() => {
    const broken = [];
    for (const cell of document.querySelectorAll(${JSON.stringify(selector)})) {
      const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (const match of node.textContent.matchAll(/\\S+/g)) {
          if (match[0].length > ${SHORT_WORD}) continue;
          const range = document.createRange();
          range.setStart(node, match.index);
          range.setEnd(node, match.index + match[0].length);
          // One line box per line the word is drawn on.
          const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
          if (lines.size > 1) broken.push(match[0] + ' (in "' + cell.textContent.trim().slice(0, 60) + '")');
        }
      }
    }
    return broken;
  })()`);
}

function sidewaysOverflow(page: Page): Promise<number> {
  return page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
}

/** WCAG's contrast ratio of two `rgb(…)` colours. */
function contrast(a: string, b: string): number {
  const luminance = (color: string) => {
    const [r, g, b] = color.match(/[\d.]+/g)!.slice(0, 3).map((v) => {
      const c = Number(v) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  };
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (light! + 0.05) / (dark! + 0.05);
}

interface DarkColors {
  page: string;
  text: string;
  cell: string;
  header: string;
  badges: Array<{ text: string; color: string; background: string }>;
}

function lightness(color: string): number {
  return contrast(color, 'rgb(0, 0, 0)');
}

describeBrowser('inspector page: layout on a phone and a laptop, dark mode', (session) => {
  let built: Scene;
  let inspector: Inspector;

  async function open(viewport: { width: number; height: number }): Promise<Page> {
    built = await scene(session);
    // With a token, so that the page has its forms and buttons: enqueue, signal, row actions.
    inspector = await session.startInspector({ store: built.store, port: 0, pollIntervalMs: 100, token: 'layout-page-token', queues: built.queues });
    const page = await session.newPage();
    await page.setViewportSize(viewport);
    await page.goto(inspector.url);
    await page.locator('#live', { hasText: /^live$/ }).waitFor(WAIT);
    return page;
  }

  beforeAll(async () => {
    await mkdir(SCREENSHOTS, { recursive: true });
  });

  /** Opens `target` on `page` and waits for its content. */
  async function visit(page: Page, target: InspectorPage): Promise<void> {
    await page.goto(`${inspector.url}${target.hash}`);
    await target.ready(page);
  }

  for (const viewport of [PHONE, LAPTOP]) {
    it(`no page scrolls sideways at ${viewport.width} x ${viewport.height}`, async () => {
      const page = await open(viewport);
      const overflows: string[] = [];
      for (const target of Object.values(pages(built))) {
        await visit(page, target);
        const overflow = await sidewaysOverflow(page);
        await page.screenshot({ path: `${SCREENSHOTS}/layout-${viewport.width}-${target.hash.replace(/\W+/g, '-')}.png`, fullPage: true });
        if (overflow > 0) overflows.push(`${target.name} (${target.hash}): ${overflow} px too wide`);
      }
      expect(overflows).toEqual([]);
    });
  }

  it('at 1366 x 768 no id, state, number or header is broken mid-way in a table', async () => {
    const page = await open(LAPTOP);
    const { overview, workers, story, long } = pages(built);
    await overview.ready(page);
    const broken = [...(await brokenWords(page, '#queues th, #queues td')), ...(await brokenWords(page, '#jobs th, #jobs td'))];
    await visit(page, workers);
    broken.push(...(await brokenWords(page, '#workers-table th, #workers-table td')));
    for (const job of [story, long]) {
      await visit(page, job);
      broken.push(...(await brokenWords(page, '#job-fields th, #job-fields td')));
    }
    expect(broken).toEqual([]);
  });

  it('on a phone the throughput charts keep most of their drawn width', async () => {
    const page = await open(PHONE);
    await pages(built).overview.ready(page);
    const widths = await page.locator('#throughput svg.tp-chart').evaluateAll((charts) => charts.map((c) => c.getBoundingClientRect().width));
    expect(widths.length).toBeGreaterThan(0);
    for (const width of widths) expect(width).toBeGreaterThanOrEqual(300);
  });

  it('follows a dark system: a dark page, light text, state badges and diagram boxes with contrast', async () => {
    const page = await open(LAPTOP);
    await page.emulateMedia({ colorScheme: 'dark' });
    await pages(built).overview.ready(page);
    const colors = await page.evaluate<DarkColors>(`(() => {
      // The colour an element is drawn on: its own background, else its nearest ancestor's.
      const background = (element) => {
        for (let e = element; e; e = e.parentElement) {
          const color = getComputedStyle(e).backgroundColor;
          if (color !== 'rgba(0, 0, 0, 0)') return color;
        }
        return 'rgb(255, 255, 255)';
      };
      const badges = [...document.querySelectorAll('#jobs .state, #queues .state')].map((badge) => ({
        text: badge.textContent,
        color: getComputedStyle(badge).color,
        background: background(badge),
      }));
      return {
        page: background(document.body),
        text: getComputedStyle(document.body).color,
        cell: getComputedStyle(document.querySelector('#jobs td')).color,
        header: background(document.querySelector('#jobs thead th')),
        badges,
      };
    })()`);
    expect(lightness(colors.page)).toBeLessThan(1.5);
    expect(lightness(colors.header)).toBeLessThan(2);
    expect(contrast(colors.text, colors.page)).toBeGreaterThanOrEqual(7);
    expect(contrast(colors.cell, colors.page)).toBeGreaterThanOrEqual(7);
    const states = new Set(colors.badges.map((b) => b.text));
    for (const state of ['completed', 'dead', 'pending', 'paused', 'active']) expect(states).toContain(state);
    const weak = colors.badges.filter((b) => contrast(b.color, b.background) < 4.5);
    expect(weak).toEqual([]);
    // The diagrams the server draws with fixed light colours: dark boxes, light names.
    const { story, flow } = pages(built);
    for (const [target, node] of [[story, '#job-diagram g[data-state]'], [flow, '#flow-diagram a.flow-node']] as const) {
      await visit(page, target);
      const boxes = await page.evaluate<Array<{ box: string; name: string }>>(`[...document.querySelectorAll(${JSON.stringify(node)})].map((g) => ({
        box: getComputedStyle(g.querySelector('rect')).fill,
        name: getComputedStyle(g.querySelector('text')).fill,
      }))`);
      expect(boxes.length).toBeGreaterThan(3);
      for (const { box, name } of boxes) {
        expect(lightness(box), `${target.name}: a box ${box}`).toBeLessThan(2);
        expect(contrast(name, box), `${target.name}: ${name} on ${box}`).toBeGreaterThanOrEqual(4.5);
      }
    }
    for (const target of Object.values(pages(built))) {
      await visit(page, target);
      await page.screenshot({ path: `${SCREENSHOTS}/layout-dark-${target.hash.replace(/\W+/g, '-')}.png`, fullPage: true });
    }
  });
});
