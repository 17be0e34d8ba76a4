/** Escaping for text that comes from a job or a machine and ends up in markup or JSON. */

const XML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** For SVG/HTML text and attribute values. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => XML_ENTITIES[c]!);
}

/** JSON that stays inert even if a browser were made to read it as HTML: `<`, `>` and `&`
 *  as \u escapes (still the same JSON), and the two line separators JavaScript chokes on. */
export function safeJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
