/**
 * Query parameters and path segments of the inspector's API, checked before any store call:
 * a bad one is a 400 naming it, never an exception further down.
 */
import type { ScanJobsParams } from '../adapters/store.js';
import { JOB_STATES, type JobState } from '../types.js';
import { HttpError } from './http.js';

/** As validation.ts checks queue and kind names at enqueue. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
/** Ids of the bundled stores are decimal; a custom store may use uuids or the like. */
const JOB_ID = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_SEARCH = 256;
const MAX_LIMIT = 200;

/** What a search looks in: an id or a unique key (through indexes), a payload's JSON
 *  (containment), an error's message (text). */
export const SEARCH_IN = ['key', 'payload', 'error'] as const;
export type SearchIn = (typeof SEARCH_IN)[number];

export interface JobListQuery {
  filters: Pick<ScanJobsParams, 'queue' | 'state' | 'kind'>;
  /** An id or a unique key, a payload's JSON or an error's text, as `searchIn` says. */
  search: string | undefined;
  searchIn: SearchIn;
  beforeId: string | undefined;
  limit: number;
}

/** Only the names given, each at most once. */
function single(query: URLSearchParams, allowed: readonly string[]): Map<string, string> {
  const values = new Map<string, string>();
  for (const [name, value] of query) {
    if (!allowed.includes(name)) {
      const expected = allowed.length === 0 ? 'this endpoint takes none' : `expected one of ${allowed.join(', ')}`;
      throw new HttpError(400, `unknown parameter "${name}"; ${expected}`);
    }
    if (values.has(name)) throw new HttpError(400, `parameter "${name}" given twice`);
    values.set(name, value);
  }
  return values;
}

export function parseJobListQuery(query: URLSearchParams): JobListQuery {
  const values = single(query, ['queue', 'state', 'kind', 'q', 'in', 'before', 'limit']);
  const optional = (name: string) => {
    const value = values.get(name);
    return value === undefined || value === '' ? undefined : value;
  };
  const queue = optional('queue');
  const kind = optional('kind');
  for (const [name, value] of [['queue', queue], ['kind', kind]] as const) {
    if (value !== undefined && !NAME.test(value)) {
      throw new HttpError(400, `${name}: must be 1-128 letters, digits, "_", ".", ":" or "-"`);
    }
  }
  const state = optional('state');
  if (state !== undefined && !(JOB_STATES as readonly string[]).includes(state)) {
    throw new HttpError(400, `state: must be one of ${JOB_STATES.join(', ')}`);
  }
  const search = optional('q')?.trim() || undefined;
  if (search !== undefined && search.length > MAX_SEARCH) {
    throw new HttpError(400, `q: at most ${MAX_SEARCH} characters`);
  }
  const searchIn = optional('in') ?? 'key';
  if (!(SEARCH_IN as readonly string[]).includes(searchIn)) throw new HttpError(400, `in: must be one of ${SEARCH_IN.join(', ')}`);
  const before = optional('before');
  if (before !== undefined && !JOB_ID.test(before)) throw new HttpError(400, 'before: must be a job id');
  const limitText = optional('limit');
  const limit = limitText === undefined ? 50 : Number(limitText);
  if (!/^\d+$/.test(limitText ?? '50') || limit < 1 || limit > MAX_LIMIT) {
    throw new HttpError(400, `limit: must be an integer from 1 to ${MAX_LIMIT}`);
  }
  return {
    filters: {
      ...(queue === undefined ? {} : { queue }),
      ...(state === undefined ? {} : { state: state as JobState }),
      ...(kind === undefined ? {} : { kind }),
    },
    search,
    searchIn: searchIn as SearchIn,
    beforeId: before,
    limit,
  };
}

/** For endpoints that take no parameters: anything given is a mistake worth saying. */
export function parseNoQuery(query: URLSearchParams): void {
  single(query, []);
}

/** A job id (or a flow id, shaped alike: a bigint in SQL, a counter in memory) from a path
 *  segment; `what` names it in the error. */
export function parseJobId(segment: string, what: 'job id' | 'flow id' = 'job id'): string {
  let id: string;
  try {
    id = decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, `${what}: not a valid URL segment`);
  }
  if (!JOB_ID.test(id)) throw new HttpError(400, `${what}: must be 1-64 letters, digits, "_" or "-"`);
  return id;
}

export function isJobId(text: string): boolean {
  return JOB_ID.test(text);
}

/** A queue name from a path segment, as the library checks queue names. */
export function parseQueueName(segment: string, what: 'queue' | 'schedule' = 'queue'): string {
  let name: string;
  try {
    name = decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, `${what}: not a valid URL segment`);
  }
  if (!NAME.test(name)) throw new HttpError(400, `${what}: must be 1-128 letters, digits, "_", ".", ":" or "-", starting with a letter or digit`);
  return name;
}

/** The filters of a bulk action or a count: queue, state and kind only. */
export function parseFilters(query: URLSearchParams): JobListQuery['filters'] {
  single(query, ['queue', 'state', 'kind']);
  return parseJobListQuery(query).filters;
}
