/**
 * DNS rebinding as a browser meets it: Chromium resolves every name to 127.0.0.1 (as an
 * attacker's DNS would), and the inspector refuses each name that is not loopback exactly.
 * Then an inspector beyond loopback: the page asks for its token and shows nothing until a
 * right one is given; the token box says whether the server accepted it.
 */
import { expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { describeBrowser } from '../support/chromium.js';

const TOKEN = 'page-security-token';
const WAIT = { timeout: 10_000 };

describeBrowser('inspector page: who it answers', { args: ['--host-resolver-rules=MAP * 127.0.0.1'] }, (session) => {
  it.each(['127.0.0.1.evil', 'localhost.evil', '127.0.0.1.attacker.example', 'localhost.', '127.0.0.1.evil.'])(
    'refuses the page and the API under the name %s',
    async (name) => {
      const inspector = await session.startInspector({ store: memoryStore(), port: 0 });
      const page = await session.newPage();
      for (const path of ['/', '/api/jobs', '/api/events']) {
        const response = await page.goto(`http://${name}:${inspector.port}${path}`);
        expect(response!.status(), path).toBe(403);
        expect(await response!.text()).toContain('answers only to a loopback host name');
      }
      const fine = await page.goto(`http://localhost:${inspector.port}/api/info`);
      expect(fine!.status()).toBe(200);
    },
  );

  it('beyond loopback, shows nothing until the right token is given, and says so', async () => {
    const inspector = await session.startInspector({ store: memoryStore(), port: 0, host: '0.0.0.0', token: TOKEN });
    const page = await session.newPage();
    await page.goto(`http://inspector.lan:${inspector.port}/`);
    await page.locator('#flash', { hasText: 'needs its token' }).waitFor(WAIT);
    expect(await page.locator('#token-form').isVisible()).toBe(true);
    await page.fill('#token', 'not-the-token');
    await page.click('#token-form button[type=submit]');
    await page.locator('#token-note', { hasText: 'refused' }).waitFor(WAIT);
    expect(await page.locator('#live').textContent()).toBe('connecting…');
    await page.fill('#token', TOKEN);
    await page.click('#token-form button[type=submit]');
    await page.locator('#token-note', { hasText: 'accepted' }).waitFor(WAIT);
    // The event stream carries no header: the cookie the checked token got opens it.
    await page.locator('#live', { hasText: /^live$/ }).waitFor(WAIT);
  });

  it('on loopback, the token box says whether the token was accepted', async () => {
    const inspector = await session.startInspector({ store: memoryStore(), port: 0, token: TOKEN });
    const page = await session.newPage();
    await page.goto(inspector.url);
    await page.locator('#live', { hasText: /^live$/ }).waitFor(WAIT);
    await page.fill('#token', 'wrong-token-9');
    await page.click('#token-form button[type=submit]');
    await page.locator('#token-note', { hasText: 'refused' }).waitFor(WAIT);
    await page.fill('#token', TOKEN);
    await page.click('#token-form button[type=submit]');
    await page.locator('#token-note', { hasText: 'accepted' }).waitFor(WAIT);
  });
});
