import type { RescueParams } from './store.js';
import { assertPositiveInt } from '../validation.js';

/** Rows one `rescueExpiredJobs` call changes at most, unless told. */
export const DEFAULT_RESCUE_LIMIT = 1_000;

/** The checked `limit` of a rescue. */
export function rescueLimit(params: RescueParams): number {
  const limit = params.limit ?? DEFAULT_RESCUE_LIMIT;
  assertPositiveInt('limit', limit);
  return limit;
}
