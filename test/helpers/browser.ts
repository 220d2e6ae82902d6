import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { ROOT, runCliProcess, serverStorage, startServer, type ServerProcess } from './server-process.ts';
import { scaled } from './time-scale.ts';

/*
 * The browser tests (test/browser/*.test.ts): Debian's chromium driven by playwright-core (no browser download),
 * against a server process started as `npm start` runs it, serving the console that test/global-setup.ts built once
 * for the run. With LAGOON_TEST_SCREENSHOTS=1, screenshots go to test-results/screenshots/<name>-<width>.png.
 */

export const WIDTHS = [1280, 390] as const;
const SCREENSHOTS = join(ROOT, 'test-results', 'screenshots');

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Debian's chromium, or an error saying how to install it (.ci/run installs it when missing). */
export function chromiumPath(): string {
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      const path = execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
      if (path) return path;
    } catch {
      // not on PATH under this name
    }
  }
  if (existsSync('/usr/bin/chromium')) return '/usr/bin/chromium';
  throw new Error(
    "The browser tests need Debian's chromium, which is not installed: run `apt-get install -y chromium` " +
      '(.ci/run installs it when `command -v chromium` fails).',
  );
}

export interface TestBrowser {
  readonly context: BrowserContext;
  newPage(width?: number): Promise<Page>;
  close(): Promise<void>;
}

/** Chromium with a fresh profile directory of its own, removed on close. */
export async function launchBrowser(): Promise<TestBrowser> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'lagoon-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath(),
    args: CHROMIUM_ARGS,
    headless: true,
    viewport: { width: WIDTHS[0], height: 900 },
    timeout: scaled(60_000),
  });
  context.setDefaultTimeout(scaled(15_000));
  return {
    context,
    async newPage(width = WIDTHS[0]) {
      const page = await context.newPage();
      await page.setViewportSize({ width, height: 900 });
      return page;
    },
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

export interface ConsoleServer {
  readonly server: ServerProcess;
  readonly url: string;
  readonly adminKey: string;
  readonly env: Record<string, string>;
  /** Runs the operator CLI against this server's storage. */
  cli(args: string[]): Promise<string>;
  stop(): Promise<void>;
}

/** A server process on fresh storage with a known ADMIN key, serving the console. */
export async function startConsoleServer(prefix: string, env: Record<string, string> = {}): Promise<ConsoleServer> {
  const storage = await serverStorage(`lagoon-${prefix}-`);
  const adminKey = `${prefix}-admin-key`;
  const serverEnv = { ...storage.env, LAGOON_BOOTSTRAP_ADMIN_KEY: adminKey, ...env };
  const server = await startServer(serverEnv);
  return {
    server,
    url: server.url,
    adminKey,
    env: serverEnv,
    async cli(args) {
      const result = await runCliProcess(args, serverEnv);
      expect(result.code, result.stderr).toBe(0);
      return result.stdout;
    },
    async stop() {
      if (server.child.exitCode === null) await server.stop();
      await storage.remove();
    },
  };
}

/** Opens the console and signs in by pasting `secret`, as a person would; waits for the first page's heading. */
export async function signIn(page: Page, url: string, secret: string): Promise<void> {
  await page.goto(`${url}/dashboard/`);
  await page.getByLabel('API key or operator token').fill(secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Pages' }).waitFor({ state: 'attached' });
}

/** Whether screenshots() saves pictures: only when asked, since nothing checks them (some 10 s of CPU a run). */
const TAKE_SCREENSHOTS = process.env.LAGOON_TEST_SCREENSHOTS === '1';

/**
 * The page laid out at each width of WIDTHS (`ready` runs after each resize) and, with LAGOON_TEST_SCREENSHOTS=1,
 * pictured: test-results/screenshots/<name>-<width>.png, the paths returned. Restores the page's width afterwards.
 */
export async function screenshots(page: Page, name: string, ready?: () => Promise<void>): Promise<string[]> {
  if (TAKE_SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
  const before = page.viewportSize() ?? { width: WIDTHS[0], height: 900 };
  const paths: string[] = [];
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await ready?.();
    if (!TAKE_SCREENSHOTS) continue;
    const path = join(SCREENSHOTS, `${name}-${width}.png`);
    await page.screenshot({ path, fullPage: true });
    paths.push(path);
  }
  await page.setViewportSize(before);
  return paths;
}

/** Problems the page reported while the test ran: uncaught errors and console errors (CSP refusals among them). */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  return errors;
}

/** A browser suite's console server and chromium (read them inside the suite's hooks and tests). */
export interface ConsoleSuite {
  readonly lagoon: ConsoleServer;
  readonly browser: TestBrowser;
}

/**
 * Registers a browser suite's set-up and tear-down: a console server (`env` added to its environment) and chromium,
 * started together before the suite's tests, the ADMIN key's account credited `creditUsd` when given, then
 * `prepare`; both stopped after the tests.
 */
export function consoleSuite(
  prefix: string,
  options: { env?: Record<string, string>; creditUsd?: string; prepare?: (suite: ConsoleSuite) => Promise<void> } = {},
): ConsoleSuite {
  let lagoon: ConsoleServer | undefined;
  let browser: TestBrowser | undefined;
  const started = <T>(part: T | undefined): T => {
    if (part === undefined) throw new Error(`${prefix}: the suite's server and browser start in its beforeAll`);
    return part;
  };
  const suite: ConsoleSuite = {
    get lagoon() {
      return started(lagoon);
    },
    get browser() {
      return started(browser);
    },
  };
  beforeAll(async () => {
    // Both kept even when the other fails to start, so that afterAll stops what did start.
    const [server, launched] = await Promise.allSettled([startConsoleServer(prefix, options.env), launchBrowser()]);
    if (server.status === 'fulfilled') lagoon = server.value;
    if (launched.status === 'fulfilled') browser = launched.value;
    for (const part of [server, launched]) if (part.status === 'rejected') throw part.reason;
    if (lagoon === undefined) throw new Error(`${prefix}: the server did not start`);
    if (options.creditUsd !== undefined)
      await lagoon.cli([
        'accounts',
        'credit',
        '--key',
        lagoon.adminKey,
        '--currency',
        'USD',
        '--amount',
        options.creditUsd,
      ]);
    await options.prepare?.(suite);
  }, scaled(180_000));
  afterAll(async () => {
    await browser?.close();
    await lagoon?.stop();
  });
  return suite;
}
