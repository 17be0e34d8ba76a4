// `npm run build` (and `prepare`, so that a git install and `npm pack` get dist/ too): the
// compiled code and the files the code reads at run time beside it, in a fresh directory
// that then takes dist/'s place. Files of modules since renamed or removed do not ship, and
// a build started while tests run the CLI from dist/ (another vitest run) does not pull
// dist/ from under them for the seconds tsc takes: the swap is two renames.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';

const next = `dist.next-${process.pid}`;
const old = `dist.old-${process.pid}`;
rmSync(next, { recursive: true, force: true });
try {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--outDir', next], { stdio: 'inherit' });
  cpSync('src/adapters/sql/migrations', `${next}/adapters/sql/migrations`, { recursive: true });
  cpSync('src/inspector/public', `${next}/inspector/public`, { recursive: true });
  if (existsSync('dist')) renameSync('dist', old);
  renameSync(next, 'dist');
} finally {
  rmSync(next, { recursive: true, force: true });
  rmSync(old, { recursive: true, force: true });
}
