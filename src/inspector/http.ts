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

const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** Whether the server listens on loopback only; then requests must name it as their Host. */
function isLoopback(host: string): boolean {
  return LOOPBACK_NAMES.has(host) || host.startsWith('127.');
}

/**
 * Against DNS rebinding: a page on another site that got its name to resolve to 127.0.0.1
 * reaches this server with that name in the Host header, and is refused. Only checked when
 * the server listens on loopback; bound elsewhere on purpose, any name may be in use.
 */
export function checkHost(req: IncomingMessage, boundHost: string): void {
  if (!isLoopback(boundHost)) return;
  const host = req.headers.host ?? '';
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]!;
  if (!LOOPBACK_NAMES.has(name) && !name.startsWith('127.')) {
    throw new HttpError(403, `the inspector answers only to a loopback host name, not "${host}"`);
  }
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

/** A small request body (an action's form), refused past a few kilobytes. */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `request body over ${MAX_BODY_BYTES} bytes`);
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

/** Constant-time comparison: hashing first gives both sides the same length. */
export function tokenMatches(expected: string, presented: string | undefined): boolean {
  if (presented === undefined) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(expected), digest(presented));
}
