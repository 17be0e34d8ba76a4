/** Where the CLI writes: results on stdout (text or `--json`), notices and errors on stderr,
 *  so that `--json` output can be piped as it is. */

export function print(line = ''): void {
  process.stdout.write(`${line}\n`);
}

/** One JSON document on stdout; Dates become ISO strings. A job's lease token (the right to
 *  write its outcome) is left out wherever it appears. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, (key, field: unknown) => (key === 'leaseToken' ? undefined : field), 2)}\n`);
}

/** Something the user should know that is not the command's result (a migration applied). */
export function notice(line: string): void {
  process.stderr.write(`jobvisor: ${line}\n`);
}

let onStdoutGone: () => void = () => process.exit(process.exitCode ?? 0);

/**
 * `jobvisor jobs | head -1`: the reader went away, and what is left to print has nowhere to
 * go. Node reports that as an EPIPE 'error' on stdout, which would end the process with a
 * stack trace; like other Unix tools we end quietly instead, with the exit code so far. A
 * command that must not stop at once (the worker) says what to do with `whenStdoutGone`.
 */
export function endQuietlyWhenStdoutCloses(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    onStdoutGone();
  });
}

export function whenStdoutGone(handler: () => void): void {
  onStdoutGone = handler;
}
