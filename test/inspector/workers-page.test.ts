/**
 * The workers page in headless Chromium: every started supervisor on the store, from its
 * heartbeat row, with the jobs it holds; a stopped one is gone.
 */
import { hostname } from 'node:os';
import { expect, it, vi } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { defineQueue } from '../../src/index.js';
import { describeBrowser } from '../support/chromium.js';

const WAIT = { timeout: 10_000 };

describeBrowser('inspector page: workers', (session) => {
  it('lists each supervisor with host, pid, queues and the jobs it holds; a stopped one goes', async () => {
    const store = memoryStore();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const media = defineQueue('media', { concurrency: 1, handlers: { resize: () => held.then(() => ({ ok: true })) } });
    const mail = defineQueue('mail', { handlers: { send: async () => null } });
    const busy = session.supervisor({ store, queues: [media], workerId: 'busy-worker', pollIntervalMs: 20 });
    const idle = session.supervisor({ store, queues: [mail, media], workerId: 'idle-worker', concurrency: 1, pollIntervalMs: 20 });
    await busy.start();
    const { job } = await media.enqueue(store, 'resize', { w: 640 });
    await expectState(store, job.id, 'running');
    await idle.start();

    const inspector = await session.startInspector({ store, port: 0, pollIntervalMs: 50 });
    const page = await session.newPage();
    await page.goto(`${inspector.url}#/workers`);
    const row = (id: string) => page.locator(`#workers-table tr[data-worker-id="${id}"]`);
    await row('busy-worker').waitFor(WAIT);
    await row('idle-worker').waitFor(WAIT);
    const cells = async (id: string) => (await row(id).locator('td').allTextContents()).map((t) => t.trim());
    const busyCells = await cells('busy-worker');
    expect(busyCells.slice(0, 5)).toEqual(['busy-worker', hostname(), String(process.pid), 'media', '1']);
    expect(busyCells[7]).toBe(`${job.id} media/resize`);
    expect((await cells('idle-worker')).slice(3, 5)).toEqual(['mail, media', '0']);
    expect((await cells('idle-worker'))[7]).toBe('none');
    await page.locator('#tab-workers.current').waitFor(WAIT);

    release();
    await expectState(store, job.id, 'completed');
    await idle.stop();
    await page.reload();
    await row('busy-worker').waitFor(WAIT);
    expect(await row('idle-worker').count()).toBe(0);
    expect((await cells('busy-worker'))[7]).toBe('none');
  });
});

async function expectState(store: ReturnType<typeof memoryStore>, id: string, state: string): Promise<void> {
  await vi.waitFor(async () => expect((await store.getJob({ id }))?.state).toBe(state), { timeout: 10_000, interval: 10 });
}
