/**
 * A JSON value parsed in Node, with every object's keys in the order PostgreSQL's jsonb keeps
 * them (shorter keys first by their UTF-8 bytes, then byte by byte): the value a read of the
 * stored jsonb would give. A bulk enqueue builds its records from its own input instead of
 * reading each payload back (sql/queries/enqueue-new-jobs.ts), and those records must equal
 * getJob's; the memory store keeps its JSON values this way too, so that every store gives
 * back the same value, key for key.
 * Objects already in that order, as most small payloads are, are kept; others are rebuilt.
 * The value must be one of the caller's own (a fresh JSON.parse): it is changed in place.
 */
export function inJsonbOrder(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = inJsonbOrder(value[i]);
    return value;
  }
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object);
  let ordered = true;
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k]!;
    object[key] = inJsonbOrder(object[key]);
    if (k > 0 && compareJsonbKeys(keys[k - 1]!, key) > 0) ordered = false;
  }
  if (ordered) return object;
  // fromEntries defines each key as an own property, as JSON.parse does ("__proto__" too).
  return Object.fromEntries(keys.sort(compareJsonbKeys).map((key) => [key, object[key]]));
}

const ASCII = /^[\x00-\x7f]*$/;

/** jsonb's order of object keys: by length in UTF-8 bytes, then by those bytes. */
export function compareJsonbKeys(a: string, b: string): number {
  if (ASCII.test(a) && ASCII.test(b)) return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length - y.length || Buffer.compare(x, y);
}
