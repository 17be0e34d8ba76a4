/** `jobvisor worker`'s supervisor timing flags and a worker module's `supervisor` export. */
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { CliError } from '../../src/cli/cli-error.js';
import { addTuningOptions, moduleTuning, tuningFrom } from '../../src/cli/supervisor-tuning.js';

function parse(args: string[]): Record<string, unknown> {
  const command = addTuningOptions(new Command('worker')).exitOverride();
  command.parse(args, { from: 'user' });
  return command.opts();
}

describe('worker: supervisor options', () => {
  it('reads durations and counts from flags, over what the module exports', () => {
    const flags = parse(['--reaper-interval', '2s', '--poll-interval', '250ms', '--prefetch-window', '1s', '--max-prefetch', '0', '--alert-throttle', '10m']);
    expect(tuningFrom(flags, { reaperIntervalMs: 60_000, errorBackoffMs: 500 })).toEqual({
      reaperIntervalMs: 2_000,
      pollIntervalMs: 250,
      prefetchWindowMs: 1_000,
      maxPrefetch: 0,
      alertThrottleMs: 600_000,
      errorBackoffMs: 500,
    });
    expect(tuningFrom(parse([]), {})).toEqual({});
  });

  it('refuses a bad flag value, and a module `supervisor` that is not an object of known options', () => {
    expect(() => parse(['--reaper-interval', 'soon'])).toThrow();
    expect(moduleTuning('w.js', { reaperIntervalMs: 5_000 })).toEqual({ reaperIntervalMs: 5_000 });
    expect(moduleTuning('w.js', undefined)).toEqual({});
    expect(() => moduleTuning('w.js', 5)).toThrow(CliError);
    expect(() => moduleTuning('w.js', { reaperInterval: 5 })).toThrow('not reaperInterval');
  });
});
