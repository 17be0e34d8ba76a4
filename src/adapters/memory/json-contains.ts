/**
 * PostgreSQL's jsonb containment (`a @> b`) for the memory store's search, so that a search
 * answers the same on every store: an object contains another when each of the other's keys
 * is in it with a contained value; an array contains another when each of the other's
 * elements is contained in some element of it (order and repeats do not matter); scalars are
 * equal. As in PostgreSQL, an array at the top level also contains a scalar among its
 * elements, but no deeper (`{"a": [1]}` does not contain `{"a": 1}`).
 */
import type { JsonValue } from '../../types.js';

export function jsonContains(value: unknown, pattern: JsonValue | undefined): boolean {
  if (Array.isArray(value) && pattern !== null && typeof pattern !== 'object') return value.some((item) => item === pattern);
  return contains(value, pattern);
}

function contains(value: unknown, pattern: JsonValue | undefined): boolean {
  if (Array.isArray(pattern)) {
    return Array.isArray(value) && pattern.every((wanted) => value.some((item) => contains(item, wanted)));
  }
  if (pattern !== null && typeof pattern === 'object') {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
    const object = value as Record<string, unknown>;
    return Object.entries(pattern).every(([key, wanted]) => wanted === undefined || (Object.hasOwn(object, key) && contains(object[key], wanted)));
  }
  return value === pattern;
}
