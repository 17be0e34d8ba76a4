/**
 * The payload limit is a number of bytes of the payload's JSON text in UTF-8, as the SQL
 * enqueue counts it (`octet_length`): a payload of multibyte characters reaches it at a third
 * or half of its length in characters.
 */
import { expect, it } from 'vitest';
import { InvalidPayloadError } from '../src/errors.js';
import { assertJsonPayload } from '../src/validation.js';

it('counts the payload limit in UTF-8 bytes, not characters', () => {
  // {"s":"ééé…"}: 8 characters of JSON around 40 two-byte characters: 48 characters, 88 bytes.
  const twoByte = { s: 'é'.repeat(40) };
  expect(assertJsonPayload(twoByte, 88)).toBe(88);
  expect(() => assertJsonPayload(twoByte, 87)).toThrow(new InvalidPayloadError('payload is 88 bytes of JSON, over the limit of 87'));
  expect(() => assertJsonPayload(twoByte, 48)).toThrow(InvalidPayloadError);
  // A character outside the BMP: two UTF-16 units, four bytes.
  const fourByte = { s: '😀'.repeat(10) };
  expect(() => assertJsonPayload(fourByte, 47)).toThrow(new InvalidPayloadError('payload is 48 bytes of JSON, over the limit of 47'));
  expect(() => assertJsonPayload(fourByte, 28)).toThrow(InvalidPayloadError);
});
