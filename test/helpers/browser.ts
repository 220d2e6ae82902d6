import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, inject } from 'vitest';
import { sharedConsole } from './console-host.ts';
import { ROOT, runCliProcess } from './server-process.ts';
import { scaled } from './time-scale.ts';

/*
 * The browser tests (test/browser/*.test.ts): Debian's Chromium (chromiumPath) driven by playwright-core (no download),
 * against the run's one console server (a process started as `npm start` runs it, serving the console that
 * test/global-setup.ts built; test/helpers/console-host.ts), each file in an account and a browser context of its
 * own. With LAGOON_TEST_SCREENSHOTS=1, screenshots go to test-results/screenshots/<name>-<width>.png.
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

/**
 * Debian's Chromium: by default its headless shell (package chromium-headless-shell, the build Playwright itself runs
 * headless: the same Blink and V8 without the full browser around them; test/browser took 61 core-seconds of CPU
 * with it and 94 with the full chromium), else the full browser; or an error saying how to install them (.ci/run
 * installs the shell when missing). `names`: the commands to look for, in order.
 */
export function chromiumPath(
  names: readonly string[] = ['chromium-headless-shell', 'chromium', 'chromium-browser'],
): string {
  for (const name of names) {
    try {
      const path = execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
      if (path) return path;
    } catch {
      // not on PATH under this name
    }
  }
  throw new Error(
    "The browser tests need Debian's chromium-headless-shell (or chromium), which is not installed: run " +
      '`apt-get install -y chromium-headless-shell` (.ci/run installs it when `command -v chromium-headless-shell` fails).',
  );
}

export interface TestBrowser {
  readonly context: BrowserContext;
  newPage(width?: number): Promise<Page>;
  close(): Promise<void>;
}

/**
 * This worker's chromium, launched by its first browser file and used by the next ones (a launch costs some 2 s of
 * CPU); Playwright closes it when the worker exits, and chromium exits by itself when its pipe to the worker closes.
 */
let workerChromium: Promise<Browser> | undefined;

function chromiumOfThisWorker(): Promise<Browser> {
  if (workerChromium) return workerChromium;
  const launching = chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS, timeout: scaled(60_000) });
  // A browser that crashed, or never started, is launched again by the next file.
  launching.then(
    (browser) => browser.once('disconnected', () => (workerChromium = undefined)),
    () => (workerChromium = undefined),
  );
  return (workerChromium = launching);
}

/** A fresh browser context (its own storage, permissions and pages, as a new profile has), closed by `close`. */
export async function launchBrowser(): Promise<TestBrowser> {
  const browser = await chromiumOfThisWorker();
  const context = await browser.newContext({ viewport: { width: WIDTHS[0], height: 900 } });
  context.setDefaultTimeout(scaled(15_000));
  return {
    context,
    async newPage(width = WIDTHS[0]) {
      const page = await context.newPage();
      await page.setViewportSize({ width, height: 900 });
      return page;
    },
    close: () => context.close(),
  };
}

/** A browser file's account on the run's console server (test/helpers/console-host.ts). */
export interface ConsoleAccount {
  readonly url: string;
  /** The account's first ADMIN key. */
  readonly adminKey: string;
  /** The environment that reaches the server's storage, for the operator CLI. */
  readonly env: Record<string, string>;
  /** Runs the operator CLI against the server, through its control socket. */
  cli(args: string[]): Promise<string>;
}

/** A new account named `name` on the run's console server, which starts if no file has asked for it yet. */
export async function consoleAccount(name: string): Promise<ConsoleAccount> {
  const { url, env } = await sharedConsole(inject('lagoonConsoleHost'));
  const cli = async (args: string[]) => {
    const result = await runCliProcess(args, env);
    expect(result.code, result.stderr).toBe(0);
    return result.stdout;
  };
  const created = JSON.parse(await cli(['accounts', 'create', '--name', name, '--json'])) as {
    adminKey: { apiKey: string };
  };
  return { url, adminKey: created.adminKey.apiKey, env, cli };
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

/** A browser suite's account on the console server, and its chromium (read them inside its hooks and tests). */
export interface ConsoleSuite {
  readonly lagoon: ConsoleAccount;
  readonly browser: TestBrowser;
}

/**
 * Registers a browser suite's set-up and tear-down: an account named `name` on the run's console server and a
 * browser context, made together before the suite's tests, the account credited `creditUsd` when given, then
 * `prepare`; the context closed after the tests.
 */
export function consoleSuite(
  name: string,
  options: { creditUsd?: string; prepare?: (suite: ConsoleSuite) => Promise<void> } = {},
): ConsoleSuite {
  let lagoon: ConsoleAccount | undefined;
  let browser: TestBrowser | undefined;
  const started = <T>(part: T | undefined): T => {
    if (part === undefined) throw new Error(`${name}: the suite's account and browser are made in its beforeAll`);
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
    // The browser kept even when the account fails, so that afterAll closes it.
    const [account, launched] = await Promise.allSettled([consoleAccount(name), launchBrowser()]);
    if (account.status === 'fulfilled') lagoon = account.value;
    if (launched.status === 'fulfilled') browser = launched.value;
    for (const part of [account, launched]) if (part.status === 'rejected') throw part.reason;
    if (lagoon === undefined) throw new Error(`${name}: no account was made`);
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
  });
  return suite;
}
