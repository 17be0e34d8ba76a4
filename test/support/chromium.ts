/**
 * Headless Chromium for the browser tests: Debian's `chromium` (installed by .ci/run when
 * missing), driven by playwright-core, each launch in a fresh profile and with everything that
 * would reach the network switched off. `describeBrowser` runs its body when Chromium is
 * there, fails on CI when it is not, and otherwise skips loudly.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { describe, it } from 'vitest';

function findChromium(): string | undefined {
  try {
    return execFileSync('which', ['chromium'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** `launch(args)` adds Chromium flags to the defaults (e.g. `--host-resolver-rules`). */
export function describeBrowser(title: string, body: (launch: (args?: readonly string[]) => Promise<Browser>) => void): void {
  const executablePath = findChromium();
  if (executablePath) {
    describe(title, () =>
      body(async (extraArgs: readonly string[] = []) => {
        const profile = await mkdtemp(join(tmpdir(), 'jobvisor-chromium-'));
        const context = await chromium.launchPersistentContext(profile, {
          executablePath,
          headless: true,
          args: [...ARGS, ...extraArgs],
          viewport: { width: 1360, height: 900 },
        });
        return {
          context,
          async close() {
            await context.close();
            await rm(profile, { recursive: true, force: true });
          },
        };
      }),
    );
  } else if (process.env.CI === 'true') {
    describe(title, () => {
      it('finds chromium', () => {
        throw new Error('CI=true and `which chromium` finds nothing: .ci/run installs it with apt-get');
      });
    });
  } else {
    console.warn(`[jobvisor tests] SKIPPED "${title}": no chromium on PATH (apt-get install -y chromium)`);
    describe.skip(title, () => body(async () => ({}) as Browser));
  }
}
