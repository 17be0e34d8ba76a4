/** Responses, headers and request checks shared by the inspector's routes. */
import { timingSafeEqual, createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { safeJson } from './escape.js';

/** A request the inspector refuses, with the status and the message the client sees. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The page loads only its own script and stylesheet; nothing inline, nothing from elsewhere. */
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
};

export function setSecurityHeaders(res: ServerResponse): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = safeJson(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(text);
}

export function sendError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { error: message });
}

export function sendText(res: ServerResponse, contentType: string, body: string | Buffer): void {
  res.writeHead(200, { 'content-type': contentType, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  res.end(body);
}

/** 127.0.0.0/8 in dotted decimal, each part 0-255 without leading zeros (so `0x7f.1`,
 *  `127.1` and `0177.0.0.1`, which some resolvers read as loopback, are refused). */
const LOOPBACK_V4 = /^127(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** Whether an address to listen on is a loopback one: `localhost`, 127.0.0.0/8 or ::1. */
export function isLoopbackAddress(address: string): boolean {
  return address === 'localhost' || address === '::1' || address === '[::1]' || LOOPBACK_V4.test(address);
}

/**
 * Whether a Host header names this machine's loopback exactly: `localhost`, a 127.0.0.0/8
 * literal or `[::1]`, each with an optional port. Anything longer (`127.0.0.1.evil`,
 * `localhost.evil`, `[::1].evil`), a trailing dot or another spelling of an address is not.
 */
export function isLoopbackHostHeader(host: string): boolean {
  const match = /^(\[::1\]|[^:[\]]+)(:\d{1,5})?$/.exec(host);
  if (!match) return false;
  const name = match[1]!.toLowerCase();
  return name === 'localhost' || name === '[::1]' || LOOPBACK_V4.test(name);
}

/**
 * Against DNS rebinding: a page on another site that got its name to resolve to 127.0.0.1
 * reaches this server with that name in the Host header, and is refused. Only checked when
 * the server listens on loopback; bound elsewhere on purpose, any name may be in use (and
 * then every request needs the token instead).
 */
export function checkHost(req: IncomingMessage, boundHost: string): void {
  // Node keeps the first of two Host headers in req.headers; a proxy may read the other.
  const hostHeaders = rawHeaderCount(req, 'host');
  if (hostHeaders > 1) throw new HttpError(400, `a request has one Host header, this one has ${hostHeaders}`);
  if (!isLoopbackAddress(boundHost)) return;
  const host = req.headers.host ?? '';
  if (!isLoopbackHostHeader(host)) {
    throw new HttpError(403, `the inspector answers only to a loopback host name, not "${host}"`);
  }
  // An absolute-form target (`GET http://evil/api/jobs`) names the host a proxy or a server
  // goes by instead of the Host header (RFC 9112, 3.2.2): it must be loopback too.
  const target = req.url ?? '/';
  if (!target.startsWith('/')) {
    let targetHost: string;
    try {
      targetHost = new URL(target).host;
    } catch {
      throw new HttpError(400, 'the request target is neither a path nor an absolute URL');
    }
    if (!isLoopbackHostHeader(targetHost)) {
      throw new HttpError(403, `the inspector answers only to a loopback host name, not "${targetHost}" (request target)`);
    }
  }
}

/** How many times a header came, as sent (req.headers joins or drops repeats). */
function rawHeaderCount(req: IncomingMessage, name: string): number {
  let count = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === name) count += 1;
  return count;
}

/** A form or a fetch from another origin does not get to act, even with a guessed token. */
export function checkOrigin(req: IncomingMessage): void {
  const origin = req.headers.origin;
  if (origin === undefined) return;
  let originHost: string;
  try {
    originHost = new URL(origin).host;
  } catch {
    throw new HttpError(403, 'bad Origin header');
  }
  if (originHost !== req.headers.host) throw new HttpError(403, 'cross-origin requests may not act');
}

const MAX_BODY_BYTES = 4_096;

/** A small request body (an action's form), refused past a few kilobytes unless the action
 *  allows more (an enqueue's payload). */
export async function readBody(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new HttpError(413, `request body over ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The token an action carries: `x-jobvisor-token` or `authorization: Bearer …` header, or
 *  a `token` field of a form body. */
export function presentedToken(req: IncomingMessage, body: string): string | undefined {
  const header = req.headers['x-jobvisor-token'];
  if (typeof header === 'string') return header;
  const authorization = req.headers.authorization;
  if (authorization?.startsWith('Bearer ')) return authorization.slice('Bearer '.length);
  if ((req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
    return new URLSearchParams(body).get('token') ?? undefined;
  }
  return undefined;
}

/** The cookie a page gets for a token it presented (`POST /api/session`): a random value
 *  per inspector, not the token, since a browser sends a host's cookies to all its ports. */
export function sessionCookieName(port: number): string {
  return `jobvisor-session-${port}`;
}

export function presentedCookie(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

/** Constant-time comparison: hashing first gives both sides the same length. */
export function tokenMatches(expected: string, presented: string | undefined): boolean {
  if (presented === undefined) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(expected), digest(presented));
}

/** An action's JSON body as an object; `shape` names its fields in the errors, as
 *  `{"name": …, "payload": …}`. A body that is not JSON, or not an object, is a 400. */
export function jsonObjectBody(body: string, shape: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new HttpError(400, `the body is not valid JSON: send ${shape}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new HttpError(400, `the body must be a JSON object: ${shape}`);
  return parsed as Record<string, unknown>;
}
