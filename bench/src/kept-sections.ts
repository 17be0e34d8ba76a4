/**
 * BENCHMARKS.md is one file written by several runs: the full run's sections, and sections
 * that come from a scenario run on its own (schedules, flows, durable jobs, keys, steady
 * traffic) or from a script with notes added by hand (inspector reads, retention). A run
 * rewrites the sections it measured and keeps every other one as the file holds it.
 */

/** `markdown` with the section headed `title` replaced by `section`, or inserted before the first
 *  heading that starts with one of `before` (else at the end). */
export function spliceSection(markdown: string, section: string[], title: string, before: string[]): string {
  const lines = markdown.split('\n');
  const start = lines.indexOf(title);
  if (start >= 0) {
    const next = lines.findIndex((line, i) => i > start && line.startsWith('## '));
    return [...lines.slice(0, start), ...section, ...(next < 0 ? [] : lines.slice(next))].join('\n');
  }
  const at = lines.findIndex((line) => before.some((heading) => line.startsWith(heading)));
  return at < 0 ? [...lines, ...section].join('\n') : [...lines.slice(0, at), ...section, ...lines.slice(at)].join('\n');
}

/** Every `## ` section of `previous` whose title is not in `renewed`, put into `next` in place of
 *  its namesake, or (a section `next` lacks) before the heading that followed it in `previous`. */
export function keepSections(previous: string, next: string, renewed: readonly string[]): string {
  const lines = previous.split('\n');
  const starts = lines.flatMap((line, i) => (line.startsWith('## ') ? [i] : []));
  let out = next;
  starts.forEach((start, k) => {
    const title = lines[start]!;
    if (renewed.includes(title)) return;
    const end = starts[k + 1] ?? lines.length;
    const following = starts[k + 1] === undefined ? [] : [lines[starts[k + 1]!]!];
    out = spliceSection(out, lines.slice(start, end), title, following);
  });
  return out;
}
