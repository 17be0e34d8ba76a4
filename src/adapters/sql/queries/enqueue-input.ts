import { InvalidPayloadError } from '../../../errors.js';
import type { EnqueueJob } from '../../store.js';

/** A job's input columns, in `COLUMNS_INPUT`'s order: each its value (undefined: not given),
 *  and whether the column is JSON (read whole) or text (read as its string). */
const COLUMNS = [
  ['queue', 'text', (job) => job.queue],
  ['kind', 'text', (job) => job.kind],
  ['payload', 'json', (job) => (job.payload === undefined ? {} : job.payload)],
  ['priority', 'text', (job) => job.priority],
  ['run_at', 'text', (job) => job.runAt],
  ['run_in_ms', 'text', (job) => job.runIn],
  ['max_attempts', 'text', (job) => job.maxAttempts],
  ['unique_key', 'text', (job) => job.uniqueKey ?? undefined],
  ['concurrency_key', 'text', (job) => job.concurrencyKey ?? undefined],
  ['expires_at', 'text', (job) => job.expiresAt ?? undefined],
  ['expires_in_ms', 'text', (job) => job.expiresIn],
  ['trace_context', 'json', (job) => job.traceContext ?? undefined],
] as const satisfies readonly (readonly [string, 'text' | 'json', (job: EnqueueJob) => unknown])[];

/** One job of an enqueue as the statements that take a jsonb document read it
 *  (jsonb_to_recordset's columns; enqueue-new-jobs.ts resolves its times), `i` its place in
 *  the call: a fair queue's, a replacing or debounced key's, a schedule's, a flow's and a
 *  waiting job's children. Plain and unique-key calls send `toColumns` instead.
 *  An option not given is left out (`undefined` is not written as JSON), not written as null:
 *  every reader takes a missing key as null, and the server parses the whole text (to jsonb,
 *  then to records), which for a call of many jobs was half nulls. */
export function toInput(i: number, job: EnqueueJob): Record<string, unknown> {
  const input: Record<string, unknown> = { i };
  for (const [name, , value] of COLUMNS) input[name] = value(job);
  return input;
}

/**
 * The jobs of an enqueue as one JSON array a column ($2-$14 of `COLUMNS_INPUT`): first `at`,
 * each job's place in the call (`i`, by which an answer maps back to its input), then each
 * job's value of every column of `COLUMNS` (null where it gives none; a Date as its ISO
 * text). A column no job gives is null, not an array of nulls.
 */
export function toColumns(jobs: readonly EnqueueJob[], at: readonly number[]): (string | null)[] {
  return [
    JSON.stringify(at),
    ...COLUMNS.map(([, , value]) => {
      let given = false;
      const column = jobs.map((job) => {
        const v = value(job);
        if (v === undefined) return null;
        given = true;
        return v;
      });
      return given ? columnText(column) : null;
    }),
  ];
}

/** The values of one of `COLUMNS` as `toColumns` sent them (parsed from its text, so a Date
 *  is its ISO text), a job's place in the call its index; null when no job gave one. */
export function sentColumn(columns: readonly (string | null)[], name: (typeof COLUMNS)[number][0]): unknown[] | null {
  const text = columns[1 + COLUMNS.findIndex(([column]) => column === name)];
  return text == null ? null : (JSON.parse(text) as unknown[]);
}

/** A column as JSON text; a call too large for one string (V8's cap, about 512 MB) is refused
 *  as a payload error before anything is sent. */
function columnText(column: unknown[]): string {
  try {
    return JSON.stringify(column);
  } catch (error) {
    if (!(error instanceof RangeError) || !/Invalid string length/.test(error.message)) throw error;
    throw new InvalidPayloadError(
      `the ${column.length} jobs of this call come to more than one statement can carry (a JavaScript string of about 512 MB): enqueue them in smaller calls`,
      { cause: error },
    );
  }
}

/**
 * insertJobsCtes' `input` from the arrays of `toColumns`, a row a job. One JSON array a column,
 * not one jsonb document of objects: the server parses a jsonb document into a tree it holds
 * whole until the statement ends (about 55 MB of fresh memory for 20,000 small jobs, most of
 * a new connection's time in the call), where `json_array_elements` only scans the text and
 * each value is parsed a row at a time.
 */
export const COLUMNS_INPUT = `
  select i::int as i, queue, kind, payload::jsonb as payload, priority::int as priority, run_at::timestamptz as run_at,
    run_in_ms::float8 as run_in_ms, max_attempts::int as max_attempts, unique_key, concurrency_key,
    expires_at::timestamptz as expires_at, expires_in_ms::float8 as expires_in_ms,
    case when json_typeof(trace_context) = 'object' then trace_context::jsonb end as trace_context
  from rows from (json_array_elements_text($2::json), ${COLUMNS.map(([, kind], n) => `json_array_elements${kind === 'text' ? '_text' : ''}($${n + 3}::json)`).join(', ')})
    as x(i, ${COLUMNS.map(([name]) => name).join(', ')})
`;
