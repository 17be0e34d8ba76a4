import { describe, expect, it } from 'vitest';
import { InvalidPayloadError } from '../../../../src/errors.js';
import type { EnqueueJob } from '../../../../src/adapters/store.js';
import { toColumns, toInput } from '../../../../src/adapters/sql/queries/enqueue-input.js';

const base = { queue: 'q', kind: 'k', maxAttempts: 3 };

describe('toColumns: the jobs of an enqueue as one JSON array a column', () => {
  it('puts each job at its place, the places first; a column no job gives is null', () => {
    const runAt = new Date(Date.UTC(2030, 0, 2, 3, 4, 5, 6));
    const jobs: EnqueueJob[] = [
      { ...base, payload: undefined, runAt },
      { ...base, payload: null, priority: 4, concurrencyKey: 'c', traceContext: { traceparent: 't' } },
    ];
    const [at, queue, kind, payload, priority, runAtColumn, runIn, maxAttempts, uniqueKey, concurrencyKey, expiresAt, expiresIn, trace] =
      toColumns(jobs, [5, 9]);
    expect(at).toBe('[5,9]');
    expect(queue).toBe('["q","q"]');
    expect(kind).toBe('["k","k"]');
    expect(payload).toBe('[{},null]');
    expect(priority).toBe('[null,4]');
    expect(runAtColumn).toBe(`["${runAt.toISOString()}",null]`);
    expect(maxAttempts).toBe('[3,3]');
    expect(concurrencyKey).toBe('[null,"c"]');
    expect(trace).toBe('[null,{"traceparent":"t"}]');
    for (const none of [runIn, uniqueKey, expiresAt, expiresIn]) expect(none).toBeNull();
  });

  it('refuses a call too large for one string as a payload error naming the call', () => {
    // What JSON.stringify throws past V8's string cap; a real call would need about 512 MB.
    const tooLong = { toJSON: () => { throw new RangeError('Invalid string length'); } };
    const jobs: EnqueueJob[] = [{ ...base, payload: 1 }, { ...base, payload: tooLong }];
    expect(() => toColumns(jobs, [0, 1])).toThrow(InvalidPayloadError);
    expect(() => toColumns(jobs, [0, 1])).toThrow(/the 2 jobs of this call come to more than one statement can carry/);
  });

  it('lets any other error of a payload through as it is', () => {
    const deep = { toJSON: () => { throw new RangeError('Maximum call stack size exceeded'); } };
    expect(() => toColumns([{ ...base, payload: deep }], [0])).toThrow(new RangeError('Maximum call stack size exceeded'));
  });

  it('toInput: the same columns as one object a job, options not given left out', () => {
    const runAt = new Date(Date.UTC(2030, 0, 2));
    expect(JSON.stringify(toInput(2, { ...base, payload: undefined }))).toBe('{"i":2,"queue":"q","kind":"k","payload":{},"max_attempts":3}');
    expect(JSON.stringify(toInput(0, { ...base, payload: [1], runAt, uniqueKey: null, concurrencyKey: 'c' }))).toBe(
      `{"i":0,"queue":"q","kind":"k","payload":[1],"run_at":"${runAt.toISOString()}","max_attempts":3,"concurrency_key":"c"}`,
    );
  });
});
