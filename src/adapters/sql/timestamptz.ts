/**
 * PostgreSQL's text form of a `timestamptz` (DateStyle ISO, what every session of the stores
 * uses), read exactly: `2026-06-01 09:00:00.123456+00`, years of more than four digits, ` BC`,
 * `infinity` and `-infinity`. PGlite's own parser reads years 1 to 99 as 1950 to 2049 (it
 * hands the text to `new Date`) and BC years as an Invalid Date; `pg`'s reads
 * them right, and this reads them as `pg` does: ±Infinity for the infinities, a Date
 * otherwise (an Invalid Date past the years a Date holds, or for text it cannot read).
 */
const TIMESTAMPTZ = /^(\d{4,})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?(?:([+-])(\d\d)(?::(\d\d))?(?::(\d\d))?)?( BC)?$/;

export function parseTimestamptz(text: string): Date | number {
  if (text === 'infinity') return Infinity;
  if (text === '-infinity') return -Infinity;
  const m = TIMESTAMPTZ.exec(text);
  if (!m) return new Date(Number.NaN);
  const [, y, mo, d, h, mi, s, fraction = '', sign, oh = '0', om = '0', os = '0', bc] = m;
  // 1 BC is year 0 of the proleptic Gregorian calendar a Date counts in.
  const year = bc ? 1 - Number(y) : Number(y);
  const ms = Number(fraction.padEnd(3, '0').slice(0, 3));
  // Date.UTC reads years 0 to 99 as 1900 to 1999: set the year apart.
  const date = new Date(Date.UTC(2000, Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms));
  date.setUTCFullYear(year);
  const offsetMs = ((Number(oh) * 60 + Number(om)) * 60 + Number(os)) * 1000;
  return new Date(date.getTime() - (sign === '-' ? -offsetMs : offsetMs));
}
