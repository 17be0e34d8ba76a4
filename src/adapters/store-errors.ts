/**
 * Which store failures can never succeed on a retry. A write that fails this way is not tried
 * again (its job actor ends, and the reaper gives the row back when the lease ends), and a
 * batched write that fails this way is split so that the one bad write does not hold back the
 * others batched with it. Everything else (the database unreachable, a timeout, a
 * serialization failure, an injected fault) is taken as passing and retried.
 */
import { DatabaseUnavailableError, InvalidOptionError, InvalidPayloadError, InvalidResultError } from '../errors.js';

/** SQLSTATE classes a statement fails with whatever the server's state: 22 data exception,
 *  23 integrity constraint violation, 42 syntax error or access rule violation, 54 program
 *  limit exceeded (a value too large for an index row, say). */
const PERMANENT_SQLSTATE = /^(22|23|42|54)[0-9A-Z]{3}$/;

export function isPermanentStoreError(error: unknown): boolean {
  try {
    if (error instanceof DatabaseUnavailableError) return false;
    if (error instanceof InvalidOptionError || error instanceof InvalidPayloadError || error instanceof InvalidResultError) return true;
    const code = (error as { code?: unknown } | null)?.code;
    return typeof code === 'string' && PERMANENT_SQLSTATE.test(code);
  } catch {
    return false;
  }
}
