/**
 * JSON.parse's complaint about text it refused, as one line that says where. V8 quotes the
 * text it refused as it is (`Unexpected token 'x', "{\n  x}" is not valid JSON`): its line
 * breaks and other control characters are escaped here, not printed. Node 20 gives only the
 * position where Node 22 adds the line and column; the line and column are added here.
 */
export function describeJsonError(error: unknown, text: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const position = /at position (\d+)$/.exec(message);
  const where = position ? ` (${lineAndColumn(text, Number(position[1]))})` : '';
  return `${escapeControls(message)}${where}`;
}

/** 1-based, as V8 counts them. */
function lineAndColumn(text: string, position: number): string {
  const before = text.slice(0, position);
  const lineStart = before.lastIndexOf('\n') + 1;
  return `line ${before.split('\n').length} column ${position - lineStart + 1}`;
}

const ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeControls(text: string): string {
  return text.replace(
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g,
    (char) => ESCAPES[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
