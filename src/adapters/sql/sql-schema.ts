/**
 * The schema a SQL store lives in. Its name ends up inside SQL text (identifiers cannot be
 * bound as parameters), so it is checked against a strict identifier pattern and always
 * double-quoted: a hostile name is refused before any SQL runs.
 */
import { createHash } from 'node:crypto';
import { InvalidOptionError } from '../../errors.js';

export const DEFAULT_SCHEMA = 'jobvisor';

/** Letters, digits and underscores, not starting with a digit: nothing to escape. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** PostgreSQL's NAMEDATALEN - 1: longer names are silently truncated by the server. */
const MAX_IDENTIFIER_LENGTH = 63;

export interface SqlSchema {
  /** As given, e.g. `jobvisor`. */
  readonly name: string;
  /** Double-quoted for SQL text, e.g. `"jobvisor"`. */
  readonly quoted: string;
  /** The LISTEN/NOTIFY channel that carries wake-ups (a queue name as payload). */
  readonly channel: string;
}

export function sqlSchema(name: unknown = DEFAULT_SCHEMA): SqlSchema {
  if (typeof name !== 'string' || !IDENTIFIER.test(name) || name.length > MAX_IDENTIFIER_LENGTH) {
    throw new InvalidOptionError(
      'schema',
      `must be 1-${MAX_IDENTIFIER_LENGTH} letters, digits or "_", not starting with a digit; got ${JSON.stringify(name)}`,
    );
  }
  if (name.toLowerCase().startsWith('pg_')) {
    throw new InvalidOptionError('schema', `the prefix "pg_" is reserved for system schemas; got "${name}"`);
  }
  return { name, quoted: `"${name}"`, channel: channelFor(name) };
}

/** `jobvisor:<schema>`; a hash of the name when that would pass the 63-byte channel limit. */
function channelFor(name: string): string {
  const channel = `jobvisor:${name}`;
  if (channel.length <= MAX_IDENTIFIER_LENGTH) return channel;
  return `jobvisor:${createHash('sha256').update(name).digest('hex').slice(0, 32)}`;
}
