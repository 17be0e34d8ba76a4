import { setTimeout as sleep } from 'node:timers/promises';

export interface UntilOptions {
  timeoutMs: number;
  /** Default 100 ms. */
  intervalMs?: number;
  /** Called before each try; throws to end the wait at once (a worker died). */
  guard?: () => void;
}

/**
 * Polls `check` until it returns a value other than undefined or false, and returns that.
 * A check that throws counts as not yet (the database may be down). Past the deadline it
 * throws, saying what was awaited and the last error seen.
 */
export async function until<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, options: UntilOptions): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError: unknown;
  for (;;) {
    options.guard?.();
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const why = lastError === undefined ? '' : ` (last error: ${lastError instanceof Error ? lastError.message : String(lastError)})`;
      throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${what}${why}`);
    }
    await sleep(options.intervalMs ?? 100);
  }
}
