/**
 * The README's and docs/ pages' code blocks cannot go stale: every ```ts block type-checks
 * against the public API with the project's strict settings, and every `ts run` block runs
 * as a user's script would (stripped of its types, in plain Node, importing `jobvisor` from
 * the built package) to the end of its `example-check`. See doc-examples.ts for the markup.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { docPages, examplesIn, moduleOf } from './doc-examples.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// Inside the package, so that `import 'jobvisor'` resolves to the package itself (its exports
// and dist/), and `pg` and the rest to its node_modules, as in a user's project.
const OUT = join(ROOT, '.doc-examples');
const EXAMPLES = docPages(ROOT).flatMap((page) => examplesIn(ROOT, page));

const SUBPATHS: Record<string, string> = {
  jobvisor: 'src/index.ts',
  'jobvisor/memory': 'src/adapters/memory/index.ts',
  'jobvisor/postgres': 'src/adapters/postgres/index.ts',
  'jobvisor/pglite': 'src/adapters/pglite/index.ts',
  'jobvisor/inspector': 'src/inspector/index.ts',
  'jobvisor/prometheus': 'src/telemetry/prometheus.ts',
  'jobvisor/testing': 'src/testing/index.ts',
};

beforeAll(() => mkdirSync(OUT, { recursive: true }));
afterAll(() => rmSync(OUT, { recursive: true, force: true }));

it('finds the examples, and each has a place of its own', () => {
  expect(EXAMPLES.length).toBeGreaterThanOrEqual(15);
  expect(new Set(EXAMPLES.map((example) => example.name)).size).toBe(EXAMPLES.length);
  expect(EXAMPLES.filter((example) => example.run).length).toBeGreaterThanOrEqual(3);
});

it('type-checks every TypeScript block against the public API', () => {
  const files = EXAMPLES.map((example) => {
    const file = join(OUT, `${example.name}.ts`);
    writeFileSync(file, moduleOf(example));
    return { file, example };
  });
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
  const program = ts.createProgram(
    [...files.map(({ file }) => file), fileURLToPath(new URL('third-party.d.ts', import.meta.url))],
    {
      ...config.options,
      noEmit: true,
      module: ts.ModuleKind.Preserve,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      paths: Object.fromEntries(Object.entries(SUBPATHS).map(([name, path]) => [name, [join(ROOT, path)]])),
    },
  );
  const errors = ts.getPreEmitDiagnostics(program).filter((diagnostic) => diagnostic.file?.fileName.startsWith(OUT));
  const where = (file: string) => files.find((entry) => entry.file === file)!.example.at;
  expect(
    errors.map((diagnostic) => `${where(diagnostic.file!.fileName)} (${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')})`),
  ).toEqual([]);
}, 120_000);

describe('runs every `ts run` block as a script', () => {
  beforeAll(() => {
    const build = inject('distBuild');
    if ('error' in build) throw new Error(build.error);
  });
  for (const example of EXAMPLES.filter((candidate) => candidate.run)) {
    it(example.at, async () => {
      const file = join(OUT, `${example.name}.mjs`);
      const js = ts.transpileModule(moduleOf(example), {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false },
      }).outputText;
      writeFileSync(file, js);
      // A script that leaves a timer or a socket open would hang: the timeout fails it instead.
      const { stderr } = await promisify(execFile)(process.execPath, [file], { cwd: ROOT, timeout: 30_000 });
      expect(stderr).toBe('');
    }, 40_000);
  }
});
