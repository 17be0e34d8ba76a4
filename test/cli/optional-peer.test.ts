import { describe, expect, it } from 'vitest';
import { importOptionalPeer } from '../../src/cli/optional-peer.js';
import { PeerDependencyMissingError } from '../../src/errors.js';

/** What Node throws for an import of a package that is not installed. */
function notFound(name: string, code = 'ERR_MODULE_NOT_FOUND'): Error {
  return Object.assign(new Error(`Cannot find package '${name}' imported from /app/node_modules/jobvisor/dist/cli/x.js`), { code });
}

describe('importOptionalPeer', () => {
  it('resolves with what the module exports', async () => {
    await expect(importOptionalPeer('pino-pretty', 'readable log lines', async () => ({ default: 1 }))).resolves.toEqual({ default: 1 });
  });

  it.each(['ERR_MODULE_NOT_FOUND', 'MODULE_NOT_FOUND'])('turns %s of the package into an error naming what to install', async (code) => {
    const failed = importOptionalPeer('@electric-sql/pglite', 'the embedded database', () => Promise.reject(notFound('@electric-sql/pglite', code)));
    await expect(failed).rejects.toBeInstanceOf(PeerDependencyMissingError);
    await expect(failed).rejects.toMatchObject({
      code: 'peer_dependency_missing',
      packageName: '@electric-sql/pglite',
      message: 'the embedded database needs @electric-sql/pglite, which is not installed: npm install @electric-sql/pglite',
    });
  });

  it('passes on any other failure as it is, a missing package of another name too', async () => {
    const other = notFound('left-pad');
    await expect(importOptionalPeer('pino-pretty', 'readable log lines', () => Promise.reject(other))).rejects.toBe(other);
    const broken = new SyntaxError('Unexpected token');
    await expect(importOptionalPeer('pino-pretty', 'readable log lines', () => Promise.reject(broken))).rejects.toBe(broken);
  });
});
