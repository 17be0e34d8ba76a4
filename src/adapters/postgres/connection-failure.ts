/**
 * Which `pg` errors mean "the database cannot be reached" rather than "this statement
 * failed", so that they surface as one typed DatabaseUnavailableError naming the database.
 */
import type pg from 'pg';
import { DatabaseUnavailableError } from '../../errors.js';

/** Socket-level failures: the server is not there, not listening, or went away. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE']);

/** SQLSTATEs the server answers a connection with: class 08 (connection exception), 28
 *  (authentication), 3D000 (no such database), 53300 (too many connections), 57P01-57P03
 *  (shutting down, crashed, starting up). */
const SERVER_CODES = /^(08...|28...|3D000|53300|57P0[123])$/;

/** What `pg` itself throws when a connection fails or drops. */
const DRIVER_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable)/;

export function asUnavailable(error: unknown, database: string, connectTimeoutMs: number | undefined): unknown {
  if (!(error instanceof Error)) return error;
  const code = (error as { code?: unknown }).code;
  const failed =
    (typeof code === 'string' && (NETWORK_CODES.has(code) || SERVER_CODES.test(code))) || DRIVER_MESSAGES.test(error.message);
  if (!failed) return error;
  const timedOut = /timeout/i.test(error.message) && connectTimeoutMs !== undefined;
  const message = timedOut ? `no connection within ${connectTimeoutMs} ms (connectTimeoutMs): ${error.message}` : error.message;
  return new DatabaseUnavailableError(database, message, { cause: error });
}

/** A connection string with its password hidden: `postgres://app:***@db:5432/jobs`. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
  }
}

/** How to name a pool's database in messages: its URL (password hidden) or host:port/db. */
export function describePool(pool: pg.Pool): string {
  const options = (pool as unknown as { options?: pg.PoolConfig }).options ?? {};
  if (typeof options.connectionString === 'string') return redactUrl(options.connectionString);
  const host = typeof options.host === 'string' ? options.host : (process.env.PGHOST ?? 'localhost');
  return `${host}:${options.port ?? process.env.PGPORT ?? 5432}/${options.database ?? process.env.PGDATABASE ?? ''}`;
}
