/**
 * Who the inspector answers: Host names that are loopback exactly (against DNS rebinding),
 * the token for every request when bound beyond loopback, one inspector per port across both
 * loopbacks, and the token box's check.
 */
import { request as httpRequest } from 'node:http';
import { connect, createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { InvalidOptionError } from '../../src/errors.js';
import { isLoopbackHostHeader } from '../../src/inspector/http.js';
import { startInspector, type Inspector, type InspectorOptions } from '../../src/inspector/index.js';

const TOKEN = 'security-test-token';
let open: Inspector[] = [];
let servers: Server[] = [];

afterEach(async () => {
  await Promise.all(open.map((inspector) => inspector.close()));
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  open = [];
  servers = [];
});

async function start(options: Partial<InspectorOptions> = {}): Promise<Inspector> {
  const inspector = await startInspector({ store: memoryStore(), port: 0, ...options });
  open.push(inspector);
  return inspector;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: any;
}

/** To 127.0.0.1 on the inspector's port, with the Host header a browser would send. */
function call(port: number, method: string, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode!, headers: res.headers, json: text.startsWith('{') ? JSON.parse(text) : undefined });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the Host header, against DNS rebinding', () => {
  const rejected = [
    '127.0.0.1.evil',
    '127.0.0.1.attacker.example',
    'localhost.evil',
    '0x7f.1',
    '0x7f000001',
    '2130706433',
    '127.1',
    '0177.0.0.1',
    '127.0.0.01',
    '127.0.0.256',
    '[::1].evil',
    '[::ffff:127.0.0.1]',
    '::1',
    'localhost.',
    '127.0.0.1.',
    '[::1].',
    'evil.example',
  ];

  it.each(rejected)('refuses Host "%s" (with and without a port)', async (name) => {
    const inspector = await start();
    for (const host of [name, `${name}:${inspector.port}`]) {
      const answer = await call(inspector.port, 'GET', '/api/info', { host });
      expect(answer.status, host).toBe(403);
      expect(answer.json.error).toContain('loopback host name');
    }
    expect((await call(inspector.port, 'GET', '/', { host: `${name}:${inspector.port}` })).status).toBe(403);
  });

  it.each(['localhost', 'LocalHost', '127.0.0.1', '127.0.0.2', '127.255.255.255', '[::1]'])('answers Host "%s"', async (name) => {
    const inspector = await start();
    expect((await call(inspector.port, 'GET', '/api/info', { host: name })).status).toBe(200);
    expect((await call(inspector.port, 'GET', '/api/info', { host: `${name}:${inspector.port}` })).status).toBe(200);
  });

  it('takes a port of digits only', () => {
    expect(isLoopbackHostHeader('localhost:4780')).toBe(true);
    expect(isLoopbackHostHeader('localhost:')).toBe(false);
    expect(isLoopbackHostHeader('localhost:47a')).toBe(false);
    expect(isLoopbackHostHeader('localhost:4780:1')).toBe(false);
    expect(isLoopbackHostHeader('[::1]:4780')).toBe(true);
  });
});

/** A request written by hand, as no HTTP client sends it: its status line's code. */
function rawCall(port: number, head: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`${head}\r\nconnection: close\r\n\r\n`));
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)));
    socket.on('error', reject);
  });
}

describe('the request target and repeated Host headers', () => {
  it('refuses an absolute-form target whose host is not loopback, whatever the Host header', async () => {
    const inspector = await start();
    const host = `127.0.0.1:${inspector.port}`;
    expect(await rawCall(inspector.port, `GET http://evil/api/jobs HTTP/1.1\r\nhost: ${host}`)).toBe(403);
    expect(await rawCall(inspector.port, `GET http://evil.example:${inspector.port}/ HTTP/1.1\r\nhost: ${host}`)).toBe(403);
    expect(await rawCall(inspector.port, `GET http://127.0.0.1.evil/api/info HTTP/1.1\r\nhost: ${host}`)).toBe(403);
    expect(await rawCall(inspector.port, `GET http://${host}/api/info HTTP/1.1\r\nhost: ${host}`)).toBe(200);
    expect(await rawCall(inspector.port, `GET /api/info HTTP/1.1\r\nhost: ${host}`)).toBe(200);
  });

  it('refuses a request with more than one Host header, loopback first or not', async () => {
    const inspector = await start();
    const host = `127.0.0.1:${inspector.port}`;
    expect(await rawCall(inspector.port, `GET /api/info HTTP/1.1\r\nhost: ${host}\r\nhost: evil.example`)).toBe(400);
    expect(await rawCall(inspector.port, `GET /api/info HTTP/1.1\r\nhost: evil.example\r\nhost: ${host}`)).toBe(400);
    expect(await rawCall(inspector.port, `GET /api/info HTTP/1.1\r\nhost: ${host}\r\nHOST: ${host}`)).toBe(400);
  });

  it('refuses two Host headers when bound beyond loopback too', async () => {
    const inspector = await start({ host: '0.0.0.0', token: TOKEN, logger: { debug() {}, info() {}, warn() {}, error() {} } });
    const head = `GET /api/info HTTP/1.1\r\nx-jobvisor-token: ${TOKEN}\r\nhost: inspector.lan`;
    expect(await rawCall(inspector.port, head)).toBe(200);
    expect(await rawCall(inspector.port, `${head}\r\nhost: other.lan`)).toBe(400);
  });
});

describe('bound beyond loopback', () => {
  it('refuses to start without a token', async () => {
    const refused = startInspector({ store: memoryStore(), port: 0, host: '0.0.0.0' });
    await expect(refused).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(refused).rejects.toMatchObject({ option: 'token', message: expect.stringContaining('0.0.0.0, which is not loopback') });
  });

  it('then needs the token for reads too, by header or by the cookie a checked token gets', async () => {
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, error() {}, warn: (_: object, msg?: string) => void warnings.push(msg ?? '') };
    const inspector = await start({ host: '0.0.0.0', token: TOKEN, logger });
    expect(warnings.join('\n')).toContain('every request, reads too, needs the token');
    const host = { host: `inspector.lan:${inspector.port}` };
    for (const path of ['/api/info', '/api/queues', '/api/jobs', '/api/jobs/1', '/api/machine.svg', '/api/events']) {
      const answer = await call(inspector.port, 'GET', path, host);
      expect(answer.status, path).toBe(401);
      expect(answer.json.error).toContain('every request needs the token');
    }
    expect((await call(inspector.port, 'GET', '/api/info', { ...host, 'x-jobvisor-token': 'wrong-token-1' })).status).toBe(401);
    expect((await call(inspector.port, 'GET', '/api/info', { ...host, 'x-jobvisor-token': TOKEN })).status).toBe(200);
    expect((await call(inspector.port, 'GET', '/api/info', { ...host, authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    // The page itself holds no data: it loads, and asks for the token.
    expect((await call(inspector.port, 'GET', '/', host)).status).toBe(200);

    expect((await call(inspector.port, 'POST', '/api/session', { ...host, 'x-jobvisor-token': 'wrong-token-1' })).status).toBe(403);
    const session = await call(inspector.port, 'POST', '/api/session', { ...host, 'x-jobvisor-token': TOKEN });
    expect(session).toMatchObject({ status: 200, json: { accepted: true } });
    const cookie = String(session.headers['set-cookie']).split(';')[0]!;
    expect(cookie).toMatch(new RegExp(`^jobvisor-session-${inspector.port}=`));
    expect(cookie).not.toContain(TOKEN);
    expect(String(session.headers['set-cookie'])).toContain('HttpOnly; SameSite=Strict');
    expect((await call(inspector.port, 'GET', '/api/jobs', { ...host, cookie })).status).toBe(200);
    expect((await call(inspector.port, 'GET', '/api/jobs', { ...host, cookie: `${cookie}x` })).status).toBe(401);
  });
});

describe('one inspector per port, across both loopbacks', () => {
  async function listen(host: string): Promise<number> {
    const server = createServer();
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    return (server.address() as { port: number }).port;
  }

  it('refuses ::1 on a port 127.0.0.1 already serves, and the other way round', async () => {
    const v4 = await listen('127.0.0.1');
    await expect(startInspector({ store: memoryStore(), host: '::1', port: v4 })).rejects.toMatchObject({
      code: 'EADDRINUSE',
      address: '127.0.0.1',
    });
    const v6 = await listen('::1');
    await expect(startInspector({ store: memoryStore(), host: '127.0.0.1', port: v6 })).rejects.toMatchObject({ code: 'EADDRINUSE', address: '::1' });
    await expect(startInspector({ store: memoryStore(), host: 'localhost', port: v6 })).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });

  it('refuses a second inspector on ::1 beside one on 127.0.0.1', async () => {
    const first = await start({ port: 0 });
    await expect(startInspector({ store: memoryStore(), host: '::1', port: first.port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    const answer = await call(first.port, 'GET', '/api/info', { host: `localhost:${first.port}` });
    expect(answer.status).toBe(200);
  });
});

describe('the token check', () => {
  it('says whether a token is the one the inspector was started with', async () => {
    const inspector = await start({ token: TOKEN });
    const host = { host: `127.0.0.1:${inspector.port}` };
    expect(await call(inspector.port, 'POST', '/api/session', { ...host, 'x-jobvisor-token': TOKEN })).toMatchObject({ status: 200 });
    const wrong = await call(inspector.port, 'POST', '/api/session', { ...host, 'x-jobvisor-token': `${TOKEN}x` });
    expect(wrong).toMatchObject({ status: 403, json: { error: expect.stringContaining('token refused') } });
    const readOnly = await start();
    const none = await call(readOnly.port, 'POST', '/api/session', { host: `127.0.0.1:${readOnly.port}`, 'x-jobvisor-token': TOKEN });
    expect(none).toMatchObject({ status: 403, json: { error: expect.stringContaining('without a token') } });
  });
});
