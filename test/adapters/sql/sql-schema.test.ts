import { describe, expect, it } from 'vitest';
import { sqlSchema } from '../../../src/adapters/sql/sql-schema.js';
import { InvalidOptionError } from '../../../src/errors.js';

describe('sqlSchema', () => {
  it('defaults to jobvisor, double-quoted, with its own NOTIFY channel', () => {
    expect(sqlSchema()).toEqual({ name: 'jobvisor', quoted: '"jobvisor"', channel: 'jobvisor:jobvisor' });
    expect(sqlSchema('Tenant_7')).toMatchObject({ quoted: '"Tenant_7"', channel: 'jobvisor:Tenant_7' });
  });

  it('accepts a name of 63 characters, with a channel name that fits in 63 too', () => {
    const name = `s${'x'.repeat(62)}`;
    const schema = sqlSchema(name);
    expect(schema.quoted).toBe(`"${name}"`);
    expect(schema.channel.length).toBeLessThanOrEqual(63);
    expect(sqlSchema(`s${'y'.repeat(62)}`).channel).not.toBe(schema.channel);
  });

  it.each([
    ['a quote', 'x"; drop table jobs; --'],
    ['a dot', 'public.jobs'],
    ['a space', 'job visor'],
    ['a leading digit', '1jobs'],
    ['a dollar sign', 'jobs$'],
    ['non-ASCII letters', 'jöbs'],
    ['the empty string', ''],
    ['64 characters', 'a'.repeat(64)],
    ['the reserved pg_ prefix', 'pg_jobs'],
    ['the reserved PG_ prefix', 'PG_Jobs'],
    ['a number', 42],
    ['null', null],
  ])('refuses %s', (_what, name) => {
    expect(() => sqlSchema(name)).toThrow(InvalidOptionError);
    try {
      sqlSchema(name);
    } catch (error) {
      expect(error).toMatchObject({ code: 'invalid_option', option: 'schema' });
    }
  });
});
