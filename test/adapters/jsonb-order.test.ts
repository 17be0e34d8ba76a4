import fc from 'fast-check';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareJsonbKeys, inJsonbOrder } from '../../src/adapters/jsonb-order.js';
import { describePostgres, testPool } from '../support/postgres.js';
import { assertReplayable } from '../support/replayable-property.js';

describe('compareJsonbKeys: jsonb keeps an object\'s keys shorter first, then byte by byte', () => {
  it.each([
    ['b', 'aa'],
    ['B', 'a'],
    ['a', 'ab'],
    ['', 'a'],
    // By UTF-8 bytes, not by UTF-16 code units: é is two bytes, so it is longer than "zz"...
    ['zz', 'é'],
    // ...and U+FFFF (three bytes, one code unit) comes before U+10000 (four bytes, two units).
    ['\uffff', '\u{10000}'],
    // Same byte length: the bytes decide, where UTF-16 would not agree (EE 80 80 61 before
    // F0 90 80 80; in code units, D800 DC00 comes before E000 0061).
    ['\ue000a', '\u{10000}'],
    ['a\u00e9', '\u00e9a'],
  ])('%j before %j', (first, second) => {
    expect(compareJsonbKeys(first, second)).toBeLessThan(0);
    expect(compareJsonbKeys(second, first)).toBeGreaterThan(0);
    expect(compareJsonbKeys(first, first)).toBe(0);
  });
});

describe('inJsonbOrder', () => {
  it('orders the keys of nested objects and objects in arrays', () => {
    const value = inJsonbOrder(JSON.parse('{"zebra":1,"a":{"long_key":[1,{"yy":2,"x":3}],"b":null},"":true}'));
    expect(JSON.stringify(value)).toBe('{"":true,"a":{"b":null,"long_key":[1,{"x":3,"yy":2}]},"zebra":1}');
  });

  it('keeps an object already in order, and defines "__proto__" as an own key, as JSON.parse does', () => {
    const ordered = JSON.parse('{"a":1,"bb":2}');
    expect(inJsonbOrder(ordered)).toBe(ordered);
    const value = inJsonbOrder(JSON.parse('{"__proto__":{"polluted":true},"a":1}')) as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['a', '__proto__']);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('leaves scalars and null as they are', () => {
    for (const value of [null, 0, -1.5, 'text', true, false]) expect(inJsonbOrder(value)).toBe(value);
  });
});

describePostgres('inJsonbOrder gives what PostgreSQL reads back from jsonb', (url) => {
  let pool: pg.Pool;
  beforeAll(() => {
    pool = testPool(url, { max: 1 });
  });
  afterAll(async () => {
    await pool.end();
  });

  it('for any JSON value with keys of any Unicode text', async () => {
    // jsonb cannot hold \u0000; the library refuses it before sending (validation.ts).
    const json = fc.jsonValue({ stringUnit: 'grapheme', maxDepth: 3 }).filter((value) => !JSON.stringify(value).includes('\\u0000'));
    await assertReplayable(
      'JSONB_ORDER',
      fc.asyncProperty(json, async (value) => {
        const text = JSON.stringify(value);
        const { rows } = await pool.query<{ stored: string }>('select $1::jsonb::text as stored', [text]);
        expect(JSON.stringify(inJsonbOrder(JSON.parse(text)))).toBe(JSON.stringify(JSON.parse(rows[0]!.stored)));
      }),
      300,
    );
  });
});
