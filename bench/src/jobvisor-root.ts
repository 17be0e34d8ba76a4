/** The jobvisor under test: the src/ of the checkout the bench was pointed at (`--jobvisor-root`),
 *  loaded through tsx, so that two checkouts can be run side by side. */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as JobvisorApi from '../../src/index.js';
import type * as JobvisorPostgres from '../../src/adapters/postgres/index.js';

export async function loadJobvisor(root: string): Promise<{ api: typeof JobvisorApi; postgresStore: typeof JobvisorPostgres.postgresStore }> {
  const load = (path: string) => import(pathToFileURL(join(root, path)).href);
  const api = (await load('src/index.ts')) as typeof JobvisorApi;
  const { postgresStore } = (await load('src/adapters/postgres/index.ts')) as typeof JobvisorPostgres;
  return { api, postgresStore };
}
