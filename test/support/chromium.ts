/**
 * Headless Chromium for the browser tests: Debian's `chromium` (installed by .ci/run when
 * missing), driven by playwright-core, each launch in a fresh profile and with everything that
 * would reach the network switched off. `describeBrowser` runs its body when Chromium is
 * there, fails on CI when it is not, and otherwise skips loudly; the body gets a
 * `BrowserSession`, so no test file launches, closes or stops anything itself.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, it } from 'vitest';
import { startInspector, type Inspector, type InspectorOptions } from '../../src/inspector/index.js';
import { createSupervisor, type Supervisor, type SupervisorOptions } from '../../src/index.js';

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

interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

async function launch(executablePath: string, extraArgs: readonly string[]): Promise<Browser> {
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
}

/**
 * What a browser test uses: one browser for the whole describe, and what each test opens
 * through it (pages, inspectors, supervisors, or anything given to `afterTest`) closed when the
 * test ends, pass or fail, the last opened first.
 */
export interface BrowserSession {
  /** A new page in the describe's browser. */
  newPage(): Promise<Page>;
  startInspector(options: InspectorOptions): Promise<Inspector>;
  /** A supervisor (not started), stopped with `graceMs: 0` after the test. */
  supervisor(options: SupervisorOptions): Supervisor;
  /** Runs `close` when the test ends. */
  afterTest(close: () => unknown): void;
}

export interface BrowserOptions {
  /** Chromium flags added to the defaults (e.g. `--host-resolver-rules`). */
  args?: readonly string[];
}

export function describeBrowser(title: string, body: (session: BrowserSession) => void): void;
export function describeBrowser(title: string, options: BrowserOptions, body: (session: BrowserSession) => void): void;
export function describeBrowser(
  title: string,
  bodyOrOptions: BrowserOptions | ((session: BrowserSession) => void),
  maybeBody?: (session: BrowserSession) => void,
): void {
  const [options, body] = typeof bodyOrOptions === 'function' ? [{}, bodyOrOptions] : [bodyOrOptions, maybeBody!];
  const executablePath = findChromium();
  if (executablePath) {
    describe(title, () => {
      let browser: Browser | undefined;
      const closers: Array<() => unknown> = [];
      const afterTest = (close: () => unknown) => void closers.push(close);
      beforeAll(async () => {
        browser = await launch(executablePath, options.args ?? []);
      });
      afterAll(async () => {
        await browser?.close();
      });
      afterEach(async () => {
        // Every closer runs even when one throws.
        const errors: unknown[] = [];
        for (const close of closers.splice(0).reverse()) {
          try {
            await close();
          } catch (error) {
            errors.push(error);
          }
        }
        if (errors.length === 1) throw errors[0];
        if (errors.length > 1) throw new AggregateError(errors, `${errors.length} things opened by the test failed to close`);
      });
      body({
        async newPage() {
          if (!browser) throw new Error('describeBrowser: the browser opens pages only inside a test');
          const page = await browser.context.newPage();
          afterTest(() => page.close());
          return page;
        },
        async startInspector(inspectorOptions) {
          const inspector = await startInspector(inspectorOptions);
          afterTest(() => inspector.close());
          return inspector;
        },
        supervisor(supervisorOptions) {
          const supervisor = createSupervisor(supervisorOptions);
          afterTest(() => supervisor.stop({ graceMs: 0 }));
          return supervisor;
        },
        afterTest,
      });
    });
  } else if (process.env.CI === 'true') {
    describe(title, () => {
      it('finds chromium', () => {
        throw new Error('CI=true and `which chromium` finds nothing: .ci/run installs it with apt-get');
      });
    });
  } else {
    console.warn(`[jobvisor tests] SKIPPED "${title}": no chromium on PATH (apt-get install -y chromium)`);
    const unavailable = (): never => {
      throw new Error('describeBrowser: no chromium');
    };
    describe.skip(title, () => body({ newPage: unavailable, startInspector: unavailable, supervisor: unavailable, afterTest: unavailable }));
  }
}
