import { Command } from 'commander';
import { addConnectionOptions, type ConnectionOptions, withStore } from '../connection.js';
import { print, printJson } from '../output.js';

interface MigrateOptions extends ConnectionOptions {
  json?: boolean;
}

export function migrateCommand(): Command {
  return addConnectionOptions(new Command('migrate'))
    .summary('create or upgrade the jobvisor tables')
    .description('Create or upgrade the jobvisor tables in the schema. Safe to run from many processes at once.')
    .option('--json', 'print {"schema", "applied": [versions]}')
    .action((options: MigrateOptions) =>
      withStore(
        options,
        async ({ applied, label }) => {
          if (options.json) printJson({ schema: options.schema, applied });
          else if (applied.length > 0) print(`applied migration${applied.length === 1 ? '' : 's'} ${applied.join(', ')} to schema "${options.schema}" at ${label}`);
          else print(`schema "${options.schema}" at ${label} is up to date`);
        },
        { migrate: true, announce: false },
      ),
    );
}
