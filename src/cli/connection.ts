/**
 * Which store a command uses, and opening it:
 *
 * 1. `--database-url <url>` → the Postgres store;
 * 2. `--data-dir <dir>` → the embedded PGlite store in that directory;
 * 3. `DATABASE_URL` in the environment → the Postgres store (not for `demo`);
 * 4. otherwise the embedded store in ./.jobvisor/data.
 *
 * A database URL, from the option or the environment, is checked as the library checks it
 * (a postgres:// or postgresql:// URL) before anything connects: a usage error (exit 2).
 *
 * The embedded store is migrated on open (it is local and private). A Postgres schema is
 * migrated only by `migrate`, `demo` and `worker --migrate`; other commands refuse a schema
 * that lacks migrations rather than fail on a missing table.
 *
 * The drivers are imported when a store is opened, so that `--help` and bad input are
 * answered without loading pg or PGlite.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { redactUrl } from '../adapters/postgres/connection-failure.js';
import { assertPostgresUrl } from '../adapters/postgres/connection-string.js';
import { DEFAULT_SCHEMA, sqlSchema } from '../adapters/sql/sql-schema.js';
import type { SqlJobStore } from '../adapters/sql/sql-store.js';
import { PeerDependencyMissingError, SchemaVersionError } from '../errors.js';
import type { Logger } from '../types.js';
import { CliError, describeError, EXIT } from './cli-error.js';
import { importOptionalPeer } from './optional-peer.js';
import { notice } from './output.js';
import { parsePoolSize, parsePositiveInteger, parseSchema } from './parse.js';

const DEFAULT_DATA_DIR = '.jobvisor/data';
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
const DEFAULT_POOL_SIZE = 10;

export interface ConnectionOptions {
  databaseUrl?: string;
  dataDir?: string;
  schema: string;
  connectTimeout: number;
  poolSize: number;
  /** The Postgres store's `pooler`. */
  pooler: 'session' | 'transaction';
  /** The Postgres store's `listenConnectionString`. */
  listenDatabaseUrl?: string;
}

export interface OpenedStore {
  store: SqlJobStore;
  /** Where the store is, for messages: `./.jobvisor/data` or a URL without its password. */
  label: string;
  /** Migration versions applied while opening. */
  applied: number[];
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Read DATABASE_URL from the environment. Default true. */
  useEnv?: boolean;
  /** Apply pending migrations on Postgres too (the embedded store is always migrated). */
  migrate?: boolean;
  /** Tell the user on stderr about migrations applied (`migrate` reports them itself). Default true. */
  announce?: boolean;
  /** For the Postgres store's LISTEN connection messages. */
  logger?: Logger;
}

export function addConnectionOptions(command: Command, { useEnv = true } = {}): Command {
  return command
    .option('--database-url <url>', `PostgreSQL connection string${useEnv ? ' (default: $DATABASE_URL)' : ''}`)
    .option('--data-dir <dir>', `embedded store directory, used when no database URL is given (default: ./${DEFAULT_DATA_DIR})`)
    .addOption(new Option('--schema <name>', 'schema of the jobvisor tables').default('jobvisor').argParser(parseSchema))
    .addOption(
      new Option('--connect-timeout <ms>', 'give up connecting to PostgreSQL after this long')
        .default(DEFAULT_CONNECT_TIMEOUT_MS)
        .argParser(parsePositiveInteger),
    )
    .addOption(
      new Option('--pool-size <n>', 'PostgreSQL connections the command may open (a worker listens on one of them)')
        .default(DEFAULT_POOL_SIZE)
        .argParser(parsePoolSize),
    )
    .addOption(
      new Option('--pooler <mode>', "what is between the command and PostgreSQL: 'session' (a direct connection or a session-mode pooler) or 'transaction' (a transaction-mode pooler such as PgBouncer's)")
        .choices(['session', 'transaction'])
        .default('session'),
    )
    .option('--listen-database-url <url>', 'a direct PostgreSQL connection for wake-ups (LISTEN), which a transaction-mode pooler cannot carry');
}

export async function openStore(options: ConnectionOptions, open: OpenOptions = {}): Promise<OpenedStore> {
  if (options.databaseUrl !== undefined && options.dataDir !== undefined) {
    throw new CliError(EXIT.usage, 'give --database-url or --data-dir, not both');
  }
  const envUrl = (open.useEnv ?? true) ? process.env.DATABASE_URL || undefined : undefined;
  const url = options.databaseUrl ?? (options.dataDir === undefined ? envUrl : undefined);
  if (url === undefined && (options.pooler === 'transaction' || options.listenDatabaseUrl !== undefined)) {
    throw new CliError(EXIT.usage, `${options.pooler === 'transaction' ? '--pooler transaction' : '--listen-database-url'} applies to PostgreSQL: give --database-url or DATABASE_URL`);
  }
  if (url === undefined) return openEmbedded(options.dataDir ?? DEFAULT_DATA_DIR, options.schema, open);
  const givenBy = options.databaseUrl !== undefined ? '--database-url' : 'DATABASE_URL';
  assertPostgresUrl(givenBy, url);
  if (options.listenDatabaseUrl !== undefined) assertPostgresUrl('--listen-database-url', options.listenDatabaseUrl);
  return openPostgres(url, givenBy, options, open);
}

/** Opens a store, runs `use`, and closes the store whatever happens. */
export async function withStore<T>(
  options: ConnectionOptions,
  use: (opened: OpenedStore) => Promise<T>,
  open?: OpenOptions,
): Promise<T> {
  const opened = await openStore(options, open);
  try {
    return await use(opened);
  } finally {
    await opened.close();
  }
}

async function openEmbedded(dataDir: string, schema: string, open: OpenOptions): Promise<OpenedStore> {
  const dir = resolve(dataDir);
  const label = displayPath(dir);
  const announce = open.announce ?? true;
  const fresh = !existsSync(join(dir, 'PG_VERSION'));
  const unavailable = (error: unknown) =>
    new CliError(EXIT.unavailable, `cannot open the embedded database in ${label}: ${describeError(error)}`);
  const { pgliteStore, DataDirLockedError } = await importOptionalPeer(
    '@electric-sql/pglite',
    'the embedded database (no --database-url)',
    () => import('../adapters/pglite/index.js'),
  ).catch((error: unknown) => {
    if (!(error instanceof PeerDependencyMissingError)) throw unavailable(error);
    throw new CliError(EXIT.unavailable, `${error.message}; or use PostgreSQL with --database-url`);
  });
  await mkdir(dir, { recursive: true }).catch((error: unknown) => {
    throw unavailable(error);
  });
  let store: SqlJobStore;
  try {
    // Locks the directory while open: one process at a time.
    store = pgliteStore({ dataDir: dir, schema });
  } catch (error) {
    if (!(error instanceof DataDirLockedError)) throw unavailable(error);
    const holder = error.holder === 'another host' ? `process ${error.holderPid} on host ${error.holderHost}` : `process ${error.holderPid}`;
    throw new CliError(
      EXIT.unavailable,
      `the embedded database in ${label} is in use by ${holder}; it serves one process at a time ` +
        '(stop that process, or use PostgreSQL with --database-url)',
    );
  }
  if (fresh) notice(`creating the embedded database in ${label} (only the first time; a few seconds)`);
  const close = () => store.close();
  let applied: number[];
  try {
    applied = await store.migrate();
  } catch (error) {
    await close().catch(() => {});
    throw unavailable(error);
  }
  if (applied.length > 0 && announce) notice(`applied ${migrationList(applied)} to schema "${schema}" in ${label}`);
  return { store, label, applied, close };
}

async function openPostgres(
  url: string,
  givenBy: '--database-url' | 'DATABASE_URL',
  options: ConnectionOptions,
  open: OpenOptions,
): Promise<OpenedStore> {
  const label = redactUrl(url);
  const [{ default: pg }, { postgresStore }] = await Promise.all([import('pg'), import('../adapters/postgres/index.js')]);
  const pool = new pg.Pool({ connectionString: url, connectionTimeoutMillis: options.connectTimeout, max: options.poolSize });
  // An idle connection the server closes emits 'error' on the pool; the pool replaces it.
  pool.on('error', () => {});
  try {
    await pool.query('select 1');
  } catch (error) {
    await pool.end().catch(() => {});
    throw new CliError(EXIT.unavailable, `cannot connect to the database at ${label}: ${describeError(error)}`);
  }
  const store = postgresStore({
    pool,
    schema: options.schema,
    pooler: options.pooler,
    ...(options.listenDatabaseUrl !== undefined ? { listenConnectionString: options.listenDatabaseUrl } : {}),
    ...(open.logger ? { logger: open.logger } : {}),
  });
  const close = async () => {
    await store.close();
    await pool.end();
  };
  try {
    let applied: number[] = [];
    if (open.migrate) {
      applied = await store.migrate();
      if (applied.length > 0 && (open.announce ?? true)) notice(`applied ${migrationList(applied)} to schema "${options.schema}" at ${label}`);
    } else {
      await store.checkSchema().catch((error: unknown) => {
        throw error instanceof SchemaVersionError ? schemaUnfit(error, label, migrateCommand(label, givenBy, options.schema)) : error;
      });
    }
    return { store, label, applied, close };
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
}

/** A schema that does not fit this build, as one line naming what to run (exit 4). */
function schemaUnfit(error: SchemaVersionError, label: string, migrate: string): CliError {
  const where = `schema "${error.schema}" at ${label}`;
  switch (error.reason) {
    case 'unmigrated':
      return new CliError(EXIT.unavailable, `${where} holds no jobvisor tables: run \`${migrate}\` first`);
    case 'outdated':
      return new CliError(EXIT.unavailable, `${where} lacks ${error.missing.join(', ')}: run \`${migrate}\` first`);
    case 'newer':
      return new CliError(
        EXIT.unavailable,
        `${where} was migrated by a newer jobvisor (${error.breaking.join(', ')}), which this one cannot run against: upgrade jobvisor`,
      );
  }
}

/** The `migrate` command for the same database and schema: the URL as the user gave it (with
 *  its password masked: they type that in), the schema unless it is the default. */
function migrateCommand(label: string, givenBy: '--database-url' | 'DATABASE_URL', schema: string): string {
  const url = givenBy === '--database-url' ? [`--database-url '${label.replaceAll("'", "'\\''")}'`] : [];
  return ['jobvisor migrate', ...url, ...(schema === DEFAULT_SCHEMA ? [] : [`--schema ${schema}`])].join(' ');
}

function migrationList(versions: number[]): string {
  return `migration${versions.length === 1 ? '' : 's'} ${versions.join(', ')}`;
}

/** `./.jobvisor/data` under the working directory, else the absolute path. */
function displayPath(dir: string): string {
  const rel = relative(process.cwd(), dir);
  return rel && !rel.startsWith('..') && !rel.startsWith('/') ? `./${rel}` : dir;
}
