// `npm run build` (and `prepare`, so that a git install and `npm pack` get dist/ too): a
// clean dist/, the compiled code, and the files the code reads at run time beside it.
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';

// Files of modules since renamed or removed must not ship.
rmSync('dist', { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
cpSync('src/adapters/sql/migrations', 'dist/adapters/sql/migrations', { recursive: true });
cpSync('src/inspector/public', 'dist/inspector/public', { recursive: true });
