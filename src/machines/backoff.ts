import { InvalidOptionError } from '../errors.js';

/** Milliseconds to wait before the next attempt, given the attempt that just failed (1-based). */
export type BackoffFn = (attempt: number) => number;

export interface ExponentialBackoffOptions {
  /** Delay after the first failure, before jitter. Default 1,000 ms. */
  baseMs?: number;
  /** Upper bound of any delay. Default 3,600,000 ms (one hour). */
  capMs?: number;
  /** Fraction of the delay drawn at random, 0..1. Default 0.5 ("equal jitter"). */
  jitter?: number;
  /** Source of randomness in [0, 1); tests pass a fixed one. Default Math.random. */
  random?: () => number;
}

/**
 * Exponential backoff with jitter and a cap: base·2^(attempt−1), capped, then the top
 * `jitter` fraction of it drawn at random so that many jobs failing together (a database
 * blip) do not come back in lockstep.
 */
export function exponentialBackoff(options: ExponentialBackoffOptions = {}): BackoffFn {
  const baseMs = options.baseMs ?? 1_000;
  const capMs = options.capMs ?? 3_600_000;
  const jitter = options.jitter ?? 0.5;
  const random = options.random ?? Math.random;
  if (!(baseMs > 0)) throw new InvalidOptionError('backoff.baseMs', `must be > 0, got ${baseMs}`);
  if (!(capMs >= baseMs)) throw new InvalidOptionError('backoff.capMs', `must be >= baseMs (${baseMs}), got ${capMs}`);
  if (!(jitter >= 0 && jitter <= 1)) throw new InvalidOptionError('backoff.jitter', `must be within 0..1, got ${jitter}`);
  return (attempt) => {
    const exponent = Math.min(Math.max(attempt - 1, 0), 52);
    const delay = Math.min(capMs, baseMs * 2 ** exponent);
    return Math.round(delay * (1 - jitter) + delay * jitter * random());
  };
}
