/**
 * Loads a module that imports an optional peer dependency (`@electric-sql/pglite`,
 * `pino-pretty`): a Postgres-only install has neither, and the CLI's commands load them only
 * on the paths that use them.
 */
import { PeerDependencyMissingError } from '../errors.js';

export async function importOptionalPeer<T>(packageName: string, neededFor: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isMissing(error, packageName)) throw new PeerDependencyMissingError(packageName, neededFor, { cause: error });
    throw error;
  }
}

/** Node's "Cannot find package 'name' imported from …" (ESM) or "Cannot find module 'name'" (CJS). */
function isMissing(error: unknown, packageName: string): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && error.message.includes(`'${packageName}'`);
}
