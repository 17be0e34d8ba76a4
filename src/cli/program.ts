/** The `jobvisor` program: commander set up so that every error is one line on stderr and
 *  every exit code is one of EXIT's. */
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { classify, EXIT, type ExitCode, oneLine } from './cli-error.js';

const EXIT_CODES_HELP = `
Exit codes:
    0  ok
    1  failure (a query failed, a worker module threw on import, the demo did not finish)
    2  usage error (unknown command or option, bad value, payload not JSON, database URL not
       postgres://, unknown queue or kind)
    3  no job with that id
    4  store unavailable (database unreachable or not migrated, data directory in use)
    5  not applied (the job's state does not allow it: retry a pending or completed job, cancel a
       finished one, signal an ended one; cancelling a running job asks its worker and exits 0)
  130  interrupted (Ctrl-C during the demo, a second signal while the worker stops)

Store: --database-url, else --data-dir, else $DATABASE_URL, else the embedded store in ./.jobvisor/data.`;

export function createProgram(commands: readonly Command[]): Command {
  const program = new Command('jobvisor')
    .description('Background jobs out of Postgres on the actor model.')
    .version(packageVersion(), '-V, --version')
    .showSuggestionAfterError()
    .exitOverride()
    .configureOutput({
      // "error: unknown command 'stat'\n(Did you mean stats?)" → one line, prefixed like ours.
      outputError: (text, write) => write(`jobvisor: ${oneLine(text.replace(/^error: /, ''))}\n`),
    })
    .addHelpText('after', EXIT_CODES_HELP);
  for (const command of commands) {
    // Commands built on their own do not inherit the program's exit and output settings.
    program.addCommand(command.copyInheritedSettings(program));
    for (const sub of command.commands) sub.copyInheritedSettings(command);
  }
  return program;
}

/** Runs the command line and resolves with the exit code; errors are printed, not thrown. */
export async function runProgram(program: Command, argv: readonly string[]): Promise<ExitCode> {
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (error) {
    const { exitCode, line } = classify(error);
    // A message may quote the command line (a file name) or a library's error: neither is
    // sure to be one line.
    if (line !== undefined) process.stderr.write(`jobvisor: ${oneLine(line)}\n`);
    return exitCode;
  }
}

function packageVersion(): string {
  // Two levels up from src/cli and from dist/cli alike.
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}
