/**
 * The code blocks of the README and docs/ pages, as the doc-examples test checks them.
 *
 * Every ```ts block is a module that must type-check. A block that continues the page's story
 * (it uses a `store` or a queue defined earlier) gets what it needs from a hidden
 * `<!-- example-context … -->` comment right before it, as rustdoc's hidden lines do. A block
 * whose fence says `ts run` is also executed, after its context and before an optional
 * `<!-- example-check … -->` comment right after it, which asserts what the block did.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface DocExample {
  /** Where it is, for messages: `docs/control.md:42`. */
  readonly at: string;
  /** A file name for it: `docs-control-42`. */
  readonly name: string;
  readonly run: boolean;
  readonly context: string;
  readonly code: string;
  readonly check: string;
}

const FENCE = /^(`{3,})(\S*)(.*)$/;
const COMMENT = (kind: string) => new RegExp(`^<!-- example-${kind}\\n([\\s\\S]*?)\\n-->$`);

/** The pages whose examples are checked: the README and every page under docs/. */
export function docPages(root: string): string[] {
  const docs = readdirSync(join(root, 'docs')).filter((file) => file.endsWith('.md')).map((file) => join(root, 'docs', file));
  return [join(root, 'README.md'), ...docs.sort()];
}

export function examplesIn(root: string, page: string): DocExample[] {
  const lines = readFileSync(page, 'utf8').split('\n');
  const file = relative(root, page);
  const examples: DocExample[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = FENCE.exec(lines[i]!);
    if (!fence) continue;
    // A block ends at a line of the same backticks; a longer fence may hold shorter ones.
    const end = lines.indexOf(fence[1]!, i + 1);
    if (end < 0) throw new Error(`${file}:${i + 1}: a code block that never ends`);
    if (fence[2] === 'ts') {
      const words = fence[3]!.trim().split(/\s+/).filter(Boolean);
      const unknown = words.filter((word) => word !== 'run');
      if (unknown.length > 0) throw new Error(`${file}:${i + 1}: unknown fence words ${unknown.join(', ')} (only "run")`);
      examples.push({
        at: `${file}:${i + 1}`,
        name: `${file.replace(/\.md$/, '').replace(/[^\w]+/g, '-')}-${i + 1}`,
        run: words.includes('run'),
        context: commentBefore(lines, i, 'context'),
        code: lines.slice(i + 1, end).join('\n'),
        check: commentAfter(lines, end, 'check'),
      });
    }
    i = end;
  }
  return examples;
}

function commentBefore(lines: string[], fence: number, kind: string): string {
  let start = fence - 1;
  while (start >= 0 && lines[start]!.trim() === '') start--;
  if (start < 0 || lines[start] !== '-->') return '';
  const open = lines.lastIndexOf(`<!-- example-${kind}`, start);
  if (open < 0) return '';
  return COMMENT(kind).exec(lines.slice(open, start + 1).join('\n'))?.[1] ?? '';
}

function commentAfter(lines: string[], fence: number, kind: string): string {
  let open = fence + 1;
  while (open < lines.length && lines[open]!.trim() === '') open++;
  if (lines[open] !== `<!-- example-${kind}`) return '';
  const close = lines.indexOf('-->', open);
  return COMMENT(kind).exec(lines.slice(open, close + 1).join('\n'))?.[1] ?? '';
}

/** The module a block becomes: its context, the block, its check; imports hoisted by ESM. */
export function moduleOf(example: DocExample): string {
  return [example.context, example.code, example.check, 'export {};'].filter(Boolean).join('\n');
}
