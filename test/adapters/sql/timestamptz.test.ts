import { describe, expect, it } from 'vitest';
import { parseTimestamptz } from '../../../src/adapters/sql/timestamptz.js';

describe('parseTimestamptz: PostgreSQL text of a timestamptz, as pg reads it', () => {
  it.each([
    ['2026-06-01 09:00:00+00', '2026-06-01T09:00:00.000Z'],
    ['2026-06-01 09:00:00.123456+00', '2026-06-01T09:00:00.123Z'],
    ['2026-06-01 09:00:00.5+00', '2026-06-01T09:00:00.500Z'],
    ['2026-06-01 11:30:00+02:30', '2026-06-01T09:00:00.000Z'],
    ['2026-06-01 02:00:00-07', '2026-06-01T09:00:00.000Z'],
    ['1883-11-18 12:00:00-04:56:02', '1883-11-18T16:56:02.000Z'],
    ['0001-01-01 00:00:00+00', '0001-01-01T00:00:00.000Z'],
    ['0050-06-15 12:34:56.789+00', '0050-06-15T12:34:56.789Z'],
    ['0099-12-31 23:59:59.999+00', '0099-12-31T23:59:59.999Z'],
    ['2024-02-29 00:00:00+00', '2024-02-29T00:00:00.000Z'],
    ['9999-12-31 23:59:59.999+00', '9999-12-31T23:59:59.999Z'],
    ['10000-01-01 00:00:00+00', '+010000-01-01T00:00:00.000Z'],
    ['0001-01-01 00:00:00+00 BC', '0000-01-01T00:00:00.000Z'],
    ['0044-03-15 00:00:00+00 BC', '-000043-03-15T00:00:00.000Z'],
  ])('%s is %s', (text, iso) => {
    expect((parseTimestamptz(text) as Date).toISOString()).toBe(iso);
  });

  it('reads the infinities as pg does, ±Infinity', () => {
    expect(parseTimestamptz('infinity')).toBe(Infinity);
    expect(parseTimestamptz('-infinity')).toBe(-Infinity);
  });

  it('gives an Invalid Date past the years a Date holds, and for text it cannot read', () => {
    for (const text of ['294276-12-31 23:59:59+00', 'not a time', '2026-06-01T09:00:00Z', '']) {
      expect(Number.isNaN((parseTimestamptz(text) as Date).getTime()), text).toBe(true);
    }
  });
});
