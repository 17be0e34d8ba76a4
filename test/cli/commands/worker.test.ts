/** `jobvisor worker`'s stop flags, parsed as the command reads them (its action not run). */
import { describe, expect, it } from 'vitest';
import { workerCommand } from '../../../src/cli/commands/worker.js';

function parse(args: string[]): Record<string, unknown> {
  const command = workerCommand()
    .exitOverride()
    .configureOutput({ writeErr: () => {} })
    .action(() => {});
  command.parse(['worker.js', ...args], { from: 'user' });
  return command.opts();
}

describe('worker: stop flags', () => {
  it('reads the grace period and the store wait as durations, 30 s each by default', () => {
    expect(parse([])).toMatchObject({ grace: 30_000, storeWait: 30_000 });
    expect(parse(['--grace', '5s', '--store-wait', '250ms'])).toMatchObject({ grace: 5_000, storeWait: 250 });
  });

  it('refuses a store wait that is not a duration', () => {
    expect(() => parse(['--store-wait', 'soon'])).toThrow(/--store-wait/);
  });
});
