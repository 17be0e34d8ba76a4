/** Where the CLI writes: results on stdout (text or `--json`), notices and errors on stderr,
 *  so that `--json` output can be piped as it is. */

export function print(line = ''): void {
  process.stdout.write(`${line}\n`);
}

/** One JSON document on stdout; Dates become ISO strings. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Something the user should know that is not the command's result (a migration applied). */
export function notice(line: string): void {
  process.stderr.write(`jobvisor: ${line}\n`);
}
