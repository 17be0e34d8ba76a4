/**
 * Error classes. Each carries a stable `code` that scripts and stored rows can rely on, and
 * the data that explains it; messages name what was wrong.
 */

export class JobvisorError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Thrown by a handler: the job goes to `dead` at once, with no retry. */
export class PermanentJobError extends JobvisorError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('permanent_error', message, options);
  }
}

/** Thrown by a handler: the job ends `skipped` (it has nothing to do), not failed. */
export class SkipJobError extends JobvisorError {
  constructor(message: string) {
    super('skipped', message);
  }
}

/** The reason an attempt failed when it ran past its deadline. */
export class JobDeadlineExceeded extends JobvisorError {
  readonly deadlineMs: number;
  constructor(deadlineMs: number) {
    super('deadline_exceeded', `JobDeadlineExceeded: the attempt ran past its deadline of ${deadlineMs} ms`);
    this.deadlineMs = deadlineMs;
  }
}

/** Why a job is dead when its deadline across all attempts (`expiresAt`) passed. */
export class JobExpired extends JobvisorError {
  readonly expiresAt: Date;
  constructor(expiresAt: Date) {
    super('expired', `JobExpired: the deadline across all attempts (${expiresAt.toISOString()}) passed`);
    this.expiresAt = expiresAt;
  }
}

/**
 * The `reason` of a handler's `signal` when the attempt is taken from it. `code` says why, as
 * the row records it: `deadline_exceeded`, `expired`, `cancelled`, `worker_shutdown` (stop()
 * after its grace period) or `lease_lost`. Whatever the handler does after it is not written.
 */
export class JobAbortedError extends JobvisorError {
  constructor(code: string, message: string) {
    super(code, message);
    // As the DOMException an AbortController gives by default: code that checks
    // `error.name === 'AbortError'` (its own, or a library's such as fetch's callers) still works.
    this.name = 'AbortError';
  }
}

/** Thrown by a handler: the job runs again after `delayMs` without spending an attempt (its
 *  `maxAttempts` grows by one). Not a failure: the row goes back to `pending`. */
export class SnoozeJobError extends JobvisorError {
  readonly delayMs: number;
  constructor(delayMs: number) {
    if (!(Number.isFinite(delayMs) && delayMs >= 0 && delayMs <= MAX_SNOOZE_MS)) {
      throw new InvalidOptionError('snooze delayMs', `must be a number of ms from 0 to ${MAX_SNOOZE_MS}, got ${String(delayMs)}`);
    }
    super('snoozed', `snoozed for ${delayMs} ms`);
    this.delayMs = delayMs;
  }
}

/** A hundred years: a later `runAt` could not be written. */
const MAX_SNOOZE_MS = 100 * 365.25 * 86_400_000;

/** An option or argument is out of range or of the wrong type. Nothing was written. */
export class InvalidOptionError extends JobvisorError {
  readonly option: string;
  constructor(option: string, message: string, options?: { cause?: unknown }) {
    super('invalid_option', `${option}: ${message}`, options);
    this.option = option;
  }
}

/** A payload cannot be stored as JSON (BigInt, cycle, function …) or is too large. */
export class InvalidPayloadError extends JobvisorError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('invalid_payload', message, options);
  }
}

/** A handler returned a result the store cannot hold (BigInt, cycle, NUL character …): the
 *  attempt fails with this error instead, rather than leave a write that can never apply. */
export class InvalidResultError extends JobvisorError {
  constructor(message: string) {
    super('invalid_result', message);
  }
}

/** The database cannot be reached: refused, unknown host, no answer within the connect
 *  timeout, authentication refused, no such database, the server shutting down, or the
 *  connection lost mid-call. The call did not complete (one whose connection dropped after the
 *  server received it may have applied). `database` names it, password hidden. */
export class DatabaseUnavailableError extends JobvisorError {
  readonly database: string;
  constructor(database: string, message: string, options?: { cause?: unknown }) {
    super('database_unavailable', `cannot reach the database at ${database}: ${message}`, options);
    this.database = database;
  }
}

/** The PostgreSQL store was reached through a pooler in transaction mode (PgBouncer's
 *  `pool_mode = transaction`, most managed poolers) while set for a session of its own per
 *  connection (the default `pooler: 'session'`): its prepared statements and LISTEN would
 *  land on whichever server connection the pooler picks. `database` names it, password
 *  hidden. Set `pooler: 'transaction'` (and `listenConnectionString`, a direct connection
 *  for wake-ups), or connect directly or through a session-mode pooler. */
export class TransactionPoolerError extends JobvisorError {
  readonly database: string;
  constructor(database: string, found: string, options?: { cause?: unknown }) {
    super(
      'transaction_pooler',
      `the database at ${database} looks like a transaction-mode pooler (${found}): ` +
        "set `pooler: 'transaction'` on postgresStore (CLI: --pooler transaction), with `listenConnectionString` " +
        '(--listen-database-url) a direct connection for wake-ups; or connect directly or through a session-mode pooler',
      options,
    );
    this.database = database;
  }
}

/** An optional peer dependency that a feature needs is not installed: `@electric-sql/pglite`
 *  for the embedded store (the CLI without a database URL, the demo), `pino-pretty` for
 *  readable log lines. `packageName` names it; the message says how to install it. */
export class PeerDependencyMissingError extends JobvisorError {
  readonly packageName: string;
  constructor(packageName: string, neededFor: string, options?: { cause?: unknown }) {
    super('peer_dependency_missing', `${neededFor} needs ${packageName}, which is not installed: npm install ${packageName}`, options);
    this.packageName = packageName;
  }
}

/** A queue or kind was named that no registered queue knows. */
export class UnknownQueueError extends JobvisorError {
  readonly queue: string;
  constructor(queue: string) {
    super('unknown_queue', `unknown queue "${queue}"`);
    this.queue = queue;
  }
}

/** A job id that the store does not hold. */
export class JobNotFoundError extends JobvisorError {
  readonly jobId: string;
  constructor(jobId: string) {
    super('job_not_found', `no job with id ${jobId}`);
    this.jobId = jobId;
  }
}

/** A PGlite data directory is open in another process (or another store of this one): PGlite
 *  serves one process at a time, and two would corrupt it. `holderPid` on `holderHost` holds
 *  it through `lockFile`; `holder` says whether that is this process, another one on this
 *  host, or one on another host (which cannot be checked). */
export class DataDirLockedError extends JobvisorError {
  readonly dataDir: string;
  readonly lockFile: string;
  readonly holderPid: number;
  readonly holderHost: string;
  readonly holder: 'this process' | 'this host' | 'another host';
  constructor(lock: Pick<DataDirLockedError, 'dataDir' | 'lockFile' | 'holderPid' | 'holderHost' | 'holder'>) {
    const who = {
      'this process': `this process (pid ${lock.holderPid})`,
      'this host': `process ${lock.holderPid}`,
      'another host': `process ${lock.holderPid} on host ${lock.holderHost}`,
    }[lock.holder];
    const todo =
      lock.holder === 'this process'
        ? 'close the other store first, or share one store'
        : 'stop that process, share one store in one process, or use PostgreSQL for several processes' +
          (lock.holder === 'another host' ? `; if that process is gone, delete ${lock.lockFile}` : '');
    super('data_dir_locked', `the PGlite data directory ${lock.dataDir} is in use by ${who}; PGlite serves one process at a time: ${todo}`);
    this.dataDir = lock.dataDir;
    this.lockFile = lock.lockFile;
    this.holderPid = lock.holderPid;
    this.holderHost = lock.holderHost;
    this.holder = lock.holder;
  }
}

/** The PGlite data directory cannot be used: it cannot be created or written (a read-only
 *  path, a regular file where a directory should be). `dataDir` is the directory, `path` the
 *  one that failed (the directory, a parent of it or its lock file), `cause` the system error
 *  (`errno` its code, e.g. `ENOTDIR`, `EACCES`, `EROFS`). Nothing was written. */
export class DataDirUnusableError extends JobvisorError {
  readonly dataDir: string;
  readonly path: string;
  readonly errno: string;
  constructor(params: { dataDir: string; path: string; errno: string; reason: string; cause: unknown }) {
    super('data_dir_unusable', `the PGlite data directory ${params.dataDir} cannot be used: ${params.reason} (${params.errno} at ${params.path})`, {
      cause: params.cause,
    });
    this.dataDir = params.dataDir;
    this.path = params.path;
    this.errno = params.errno;
  }
}

/** A flow (src/flows) that cannot be enqueued: an unknown parent, a cycle, a name used twice,
 *  an option a flow job cannot take. Nothing was written. `node`: the job of the flow at
 *  fault, when one is. */
export class InvalidFlowError extends JobvisorError {
  readonly flow: string;
  readonly node: string | undefined;
  constructor(flow: string, message: string, node?: string) {
    super('invalid_flow', `flow "${flow}": ${message}`);
    this.flow = flow;
    this.node = node;
  }
}

/** A flow id that the store does not hold. */
export class FlowNotFoundError extends JobvisorError {
  readonly flowId: string;
  constructor(flowId: string) {
    super('flow_not_found', `no flow with id ${flowId}`);
    this.flowId = flowId;
  }
}

/** A signal sent to a job that has ended (completed, dead, skipped or cancelled): it can
 *  never be received. Nothing was written. */
export class JobEndedError extends JobvisorError {
  readonly jobId: string;
  readonly state: string;
  constructor(jobId: string, state: string) {
    super('job_ended', `job ${jobId} has ended (${state}): a signal to it could never be received`);
    this.jobId = jobId;
    this.state = state;
  }
}

/** A migration could not take the locks it needs: another session kept a table it alters in
 *  use (an open transaction) through every try. Nothing was applied: each try rolled back
 *  after waiting `lockTimeoutMs` at most, so the workers' statements never queued behind it
 *  for longer. The lock error of the last try is the `cause`. */
export class MigrationLockError extends JobvisorError {
  readonly schema: string;
  readonly tries: number;
  constructor(schema: string, tries: number, waitedMs: number, lockTimeoutMs: number, cause: unknown) {
    super(
      'migration_lock_timeout',
      `migrating schema "${schema}": another session held a table a migration alters through ${tries} tries over ${Math.round(waitedMs / 1000)} s (each waited ${lockTimeoutMs} ms for its lock, then gave way); nothing was applied. End the open transaction that holds it (pg_stat_activity: state 'idle in transaction'), then migrate again`,
      { cause },
    );
    this.schema = schema;
    this.tries = tries;
  }
}

/** The store's schema does not match this build of jobvisor: it was never migrated
 *  (`reason` 'unmigrated'), lacks migrations this build needs ('outdated': `missing` lists
 *  them), or holds a migration of a newer build that older builds cannot run against
 *  ('newer': `breaking` lists it). Nothing was run against it. */
export class SchemaVersionError extends JobvisorError {
  readonly schema: string;
  readonly reason: 'unmigrated' | 'outdated' | 'newer';
  readonly missing: readonly string[];
  readonly breaking: readonly string[];
  constructor(
    schema: string,
    reason: 'unmigrated' | 'outdated' | 'newer',
    found: { missing?: readonly string[]; breaking?: readonly string[] } = {},
  ) {
    super('schema_version', schemaVersionMessage(schema, reason, found));
    this.schema = schema;
    this.reason = reason;
    this.missing = found.missing ?? [];
    this.breaking = found.breaking ?? [];
  }
}

function schemaVersionMessage(
  schema: string,
  reason: 'unmigrated' | 'outdated' | 'newer',
  found: { missing?: readonly string[]; breaking?: readonly string[] },
): string {
  const migrate = 'run `jobvisor migrate` (or `await store.migrate()`) first';
  switch (reason) {
    case 'unmigrated':
      return `schema "${schema}" holds no jobvisor tables: ${migrate}`;
    case 'outdated':
      return `schema "${schema}" lacks ${found.missing?.join(', ')} of this jobvisor: ${migrate}`;
    case 'newer':
      return (
        `schema "${schema}" was migrated by a newer jobvisor (${found.breaking?.join(', ')}), ` +
        'which this build cannot run against: upgrade jobvisor in this process'
      );
  }
}
