/**
 * Exit codes and the one error type the commands throw. Scripts can rely on the codes; each
 * failure is reported as one line on stderr (`jobvisor: …`).
 */
import { CommanderError } from 'commander';
import {
  FlowNotFoundError,
  InvalidOptionError,
  InvalidPayloadError,
  JobEndedError,
  JobNotFoundError,
  MigrationLockError,
  SchemaVersionError,
  TransactionPoolerError,
  UnknownQueueError,
} from '../errors.js';

export const EXIT = {
  ok: 0,
  /** Anything else went wrong (a query failed, a worker module threw on import, the demo failed). */
  failure: 1,
  /** The command line is wrong: unknown command or option, bad value, payload not JSON, database URL not postgres://, unknown queue or kind. */
  usage: 2,
  /** No job with that id. */
  notFound: 3,
  /** The store cannot be used: database unreachable or not migrated, embedded data directory in use, a migration kept
   *  from its locks by an open transaction. */
  unavailable: 4,
  /** The job exists but its state does not allow the action (retry a pending or completed job, cancel a finished one,
   *  signal one that has ended). */
  notApplied: 5,
  /** Stopped by Ctrl-C (the demo), or by a second signal while the worker was stopping. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export class CliError extends Error {
  constructor(
    readonly exitCode: ExitCode,
    message: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** The exit code for an error, and the line to print (undefined: commander already printed it). */
export function classify(error: unknown): { exitCode: ExitCode; line: string | undefined } {
  if (error instanceof CliError) return { exitCode: error.exitCode, line: error.message };
  // Help and --version end in a CommanderError too, with exit code 0.
  if (error instanceof CommanderError) return { exitCode: error.exitCode === 0 ? EXIT.ok : EXIT.usage, line: undefined };
  if (error instanceof InvalidOptionError || error instanceof InvalidPayloadError || error instanceof UnknownQueueError) {
    return { exitCode: EXIT.usage, line: error.message };
  }
  if (error instanceof JobNotFoundError || error instanceof FlowNotFoundError) return { exitCode: EXIT.notFound, line: error.message };
  if (error instanceof JobEndedError) return { exitCode: EXIT.notApplied, line: error.message };
  // A worker's supervisor refusing the schema on start (connection.ts words the commands' own).
  if (error instanceof SchemaVersionError || error instanceof MigrationLockError) return { exitCode: EXIT.unavailable, line: error.message };
  if (error instanceof TransactionPoolerError) return { exitCode: EXIT.unavailable, line: error.message };
  if (isConnectionError(error)) return { exitCode: EXIT.unavailable, line: `lost the database connection: ${describeError(error)}` };
  return { exitCode: EXIT.failure, line: describeError(error) };
}

/** One line for any thrown value. Node reports a refused connection to a name with several
 *  addresses (localhost: ::1 and 127.0.0.1) as an AggregateError with an empty message. */
export function describeError(error: unknown): string {
  if (error instanceof AggregateError && !error.message) {
    return [...new Set(error.errors.map(describeError))].join('; ');
  }
  const text = error instanceof Error ? error.message || error.name : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  const withCode = typeof code === 'string' && text && !text.includes(code) && /^E[A-Z]+$/.test(code) ? `${code}: ${text}` : text;
  return oneLine(withCode);
}

/** Text on one line: each line break, with the blanks around it, becomes one space. For
 *  messages in prose (a server's, with its DETAIL on a line of its own); text quoted from the
 *  user's input keeps its line breaks, escaped (json-error.ts). */
export function oneLine(text: string): string {
  return text.replace(/\s*[\n\r\u2028\u2029]\s*/g, ' ').trim();
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH', 'EAI_AGAIN', '57P01', '08006', '08001']);

function isConnectionError(error: unknown): boolean {
  if (error instanceof AggregateError) return error.errors.some(isConnectionError);
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && CONNECTION_CODES.has(code);
}
