/**
 * Runs a fast-check property so that a failure can be replayed: the seed comes from
 * `<PREFIX>_SEED` when set (with `<PREFIX>_PATH`, straight to the shrunk counterexample),
 * else a fresh one; on failure the error starts with the environment to set to run exactly
 * that case again, and that line is appended to test-results/property-seeds.log (not in git),
 * so a failure seen once in a long log is not lost.
 */
import { appendFile, mkdir } from 'node:fs/promises';
import fc from 'fast-check';

export async function assertReplayable<T>(
  prefix: string,
  property: fc.IAsyncPropertyWithHooks<T> | fc.IAsyncProperty<T>,
  numRuns: number,
): Promise<void> {
  const env = (name: string) => process.env[`${prefix}_${name}`];
  const seed = env('SEED') === undefined ? Date.now() ^ (Math.random() * 0x100000000) : Number(env('SEED'));
  const details = await fc.check(property, { numRuns, seed, path: env('PATH'), endOnFailure: env('PATH') !== undefined });
  if (!details.failed) return;
  const replay = `${prefix}_SEED=${details.seed} ${prefix}_PATH=${details.counterexamplePath ?? ''}`;
  await mkdir('test-results', { recursive: true });
  await appendFile('test-results/property-seeds.log', `${new Date().toISOString()} ${replay}\n`);
  throw new Error(`replay with ${replay}\n${fc.defaultReportMessage(details)}`, { cause: details.errorInstance });
}
