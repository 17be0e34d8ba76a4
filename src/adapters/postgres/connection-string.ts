import { InvalidOptionError } from '../../errors.js';
import { redactUrl } from './connection-failure.js';

/** A `postgres://` or `postgresql://` URL, checked before anything connects: pg would read
 *  "not a url" as a host named "base", an empty string as the local default server, and an
 *  http:// URL as a Postgres one. The error names `what` and shows the URL without its
 *  password. */
export function assertPostgresUrl(what: string, url: unknown): asserts url is string {
  let protocol: string | undefined;
  try {
    protocol = typeof url === 'string' ? new URL(url).protocol : undefined;
  } catch {
    // not a URL: refused below
  }
  if (typeof url !== 'string' || (protocol !== 'postgres:' && protocol !== 'postgresql:')) {
    const shown = typeof url === 'string' ? JSON.stringify(redactUrl(url)) : String(url);
    throw new InvalidOptionError(what, `must be a postgres:// or postgresql:// URL, got ${shown}`);
  }
}
