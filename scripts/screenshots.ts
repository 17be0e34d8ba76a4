/**
 * npm run screenshots: renews the inspector's screenshots in docs/ (inspector.png, the main
 * page; inspector-job.png, a job's story; inspector-workers.png, the workers page;
 * inspector-queue.png, a queue's page; inspector-schedules.png, the schedules page) from a
 * scene set up here on the memory store, in Debian's chromium through playwright-core.
 */
import { execFileSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { memoryStore, type MemoryStore } from '../src/adapters/memory/index.js';
import { startInspector } from '../src/inspector/index.js';
import { createSupervisor, defineQueue, defineSchedule, PermanentJobError } from '../src/index.js';

const OUT = new URL('../docs/', import.meta.url);
const WAIT = { timeout: 15_000 };

/** The store's clock runs `past` ms behind the wall clock while the last hour is written. */
let past = 0;

/** An hour of history for the throughput charts: mail and places completing and failing, one
 *  attempt every few seconds, run times that vary (a repeatable sequence, not Math.random). */
async function lastHour(store: MemoryStore): Promise<void> {
  let seed = 42;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  for (const [queue, kind, every, failing] of [['mail', 'send', 9_000, 0.04], ['places', 'collect', 20_000, 0.15]] as const) {
    past = 3_600_000;
    while (past > 90_000) {
      await store.enqueueJobs({ jobs: [{ queue, kind, payload: {}, maxAttempts: 1 }] });
      const [job] = await store.claimJobs({ workerId: 'api-1:4121:9f2c', leaseMs: 60_000, queues: [{ queue, limit: 1 }] });
      past -= Math.round(40 + next() * next() * (queue === 'mail' ? 800 : 4_000));
      const lease = { id: job!.id, leaseToken: job!.leaseToken };
      const fails = next() < failing;
      await store.setStatesIfRunning({
        outcomes: [fails ? { ...lease, state: 'dead', error: { code: 'handler_error', message: 'upstream answered 503' } } : { ...lease, state: 'completed', result: null }],
      });
      past -= Math.round(every * (0.3 + next() * 1.4));
    }
  }
  past = 0;
}

async function main(): Promise<void> {
  const store = memoryStore({ clock: { now: () => Date.now() - past } });
  await lastHour(store);
  let calls = 0;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
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

  const { job: story } = await places.enqueue(store, 'collect', { placeId: 'p-1042' }, { uniqueKey: 'collect:p-1042' });
  for (let i = 0; i < 6; i++) await mail.enqueue(store, 'send', { to: `user${i}@example.com` });
  await mail.enqueue(store, 'bounce', { to: 'nobody@example.com' });
  const drainer = createSupervisor({ store, queues: [places, mail], workerId: 'api-1:4121:9f2c' });
  await drainer.drain();
  await drainer.stop();
  for (let i = 0; i < 3; i++) await reports.enqueue(store, 'build', { month: i + 1 });
  await store.pauseQueue({ queue: 'reports' });

  const schedules = [
    defineSchedule({ name: 'monthly-report', cron: '0 6 1 * *', timezone: 'Europe/Paris', queue: reports, kind: 'build', payload: { month: 'last' } }),
    defineSchedule({ name: 'digest', cron: '*/15 * * * *', queue: mail, kind: 'send', payload: { to: 'team@example.com' } }),
  ];
  const workers = [
    createSupervisor({ store, queues: [media], workerId: 'media-1:5210:1a7e', pollIntervalMs: 50 }),
    createSupervisor({ store, queues: [mail, reports], schedules, workerId: 'mail-1:5377:c3d0', pollIntervalMs: 50 }),
  ];
  await Promise.all(workers.map((w) => w.start()));
  await media.enqueue(store, 'resize', { image: 'cover.jpg', width: 1280 });

  const inspector = await startInspector({ store, port: 0, token: 'screenshots-token', queues: [places, mail, media, reports], schedules });
  const executablePath = execFileSync('which', ['chromium'], { encoding: 'utf8' }).trim();
  const browser = await chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
    await page.goto(inspector.url);
    await page.locator('#live', { hasText: /^live$/ }).waitFor(WAIT);
    await page.locator('#running tbody td', { hasText: /^media$/ }).waitFor(WAIT);
    await page.locator('#queues tr[data-queue="reports"] .state.paused').waitFor(WAIT);
    await page.locator('#throughput tr[data-queue="places"] g.tp-bucket').first().waitFor({ state: 'attached', ...WAIT });
    // The top of the page: the queues, their throughput, the running jobs and the newest jobs.
    await page.screenshot({ path: new URL('inspector.png', OUT).pathname, fullPage: true, clip: { x: 0, y: 0, width: 1360, height: 1300 } });

    await page.goto(`${inspector.url}#/jobs/${story.id}`);
    await page.locator('#job-diagram[data-view="story"] svg').waitFor(WAIT);
    await page.locator('#job-attempts tbody tr[data-attempt="3"]').waitFor(WAIT);
    await page.locator('#job-attempts tbody tr[data-attempt="1"] summary').click();
    await page.screenshot({ path: new URL('inspector-job.png', OUT).pathname, fullPage: true });

    await page.goto(`${inspector.url}#/workers`);
    await page.locator('#workers-table tr[data-worker-id="media-1:5210:1a7e"] .held a').waitFor(WAIT);
    await page.screenshot({ path: new URL('inspector-workers.png', OUT).pathname, fullPage: true });

    await page.goto(`${inspector.url}#/queues/mail`);
    await page.fill('#token', 'screenshots-token');
    await page.click('#token-form button[type=submit]');
    await page.locator('#token-note', { hasText: 'accepted' }).waitFor(WAIT);
    await page.locator('#dead-groups tbody tr button').first().waitFor(WAIT);
    await page.locator('#enqueue-form').waitFor(WAIT);
    await page.screenshot({ path: new URL('inspector-queue.png', OUT).pathname, fullPage: true });

    await page.goto(`${inspector.url}#/schedules`);
    await page.locator('#schedules-table tr[data-schedule="digest"] .schedule-status', { hasText: 'active' }).waitFor(WAIT);
    await page.screenshot({ path: new URL('inspector-schedules.png', OUT).pathname, fullPage: true });
  } finally {
    await browser.close();
    release();
    await Promise.all(workers.map((w) => w.stop({ graceMs: 0 })));
    await inspector.close();
  }
  console.log('wrote docs/inspector.png, docs/inspector-job.png, docs/inspector-workers.png, docs/inspector-queue.png, docs/inspector-schedules.png');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
