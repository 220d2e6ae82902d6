import { request } from 'node:http';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { collectPageErrors, consoleSuite, screenshots, signIn } from '../helpers/browser.ts';

/** A GET with the path sent exactly as written (fetch would resolve `..` first). */
function rawGet(url: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(url);
    const req = request({ hostname, port, path, method: 'GET' }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * The console's shell in chromium against a server process: signing in with a key (and refusing a wrong one in
 * words), the nav at 1280 px and 390 px, the first Overview, signing out, and the files served under /dashboard.
 */
describe('web console: sign-in, shell and overview (browser)', () => {
  // A long name: the top bar cuts it rather than widening the page at 390 px.
  const suite = consoleSuite('browser-console, an account with a rather long name', { creditUsd: '5' });

  const openSignedIn = async (): Promise<{ page: Page; errors: string[] }> => {
    const page = await suite.browser.newPage();
    const errors = collectPageErrors(page);
    await signIn(page, suite.lagoon.url, suite.lagoon.adminKey);
    return { page, errors };
  };

  it('signs in with an API key and shows the balance and spend on the overview', async () => {
    const { page, errors } = await openSignedIn();
    expect(new URL(page.url()).pathname).toBe('/dashboard/overview');
    await expect.poll(() => page.getByTestId('balance').textContent()).toContain('$5.00');
    expect(await page.getByTestId('spend-today').textContent()).toContain('$0.00');
    expect(await page.getByTestId('spend-30d').textContent()).toContain('$0.00');
    const nav = page.getByRole('navigation', { name: 'Pages' }).getByRole('link');
    expect(await nav.allTextContents()).toEqual([
      'Overview',
      'Keys',
      'Usage',
      'Models',
      'Jobs',
      'Playground',
      'Wallet',
    ]);
    await screenshots(page, 'console-overview', () => page.getByTestId('balance').waitFor());
    // The CSP lets the console run as built: nothing refused, nothing thrown.
    expect(errors).toEqual([]);
    // The redirect from /dashboard/ took that history entry's place: Back leaves the console instead of bouncing
    // back to the overview.
    await page.goBack();
    expect(page.url()).toBe('about:blank');
    await page.close();
  });

  it('refuses a wrong key in words and keeps the sign-in page', async () => {
    const page = await suite.browser.newPage();
    await page.goto(`${suite.lagoon.url}/dashboard/`);
    await page.getByLabel('API key or operator token').fill('not-a-real-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('refused');
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.close();
  });

  it('keeps the key for the tab only, follows client-side routes on reload, and signs out', async () => {
    const { page } = await openSignedIn();
    await page.getByRole('link', { name: 'Models' }).click();
    await page.getByRole('heading', { name: 'Models', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/dashboard/models');
    await page.reload();
    await page.getByRole('heading', { name: 'Models', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key or operator token').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    // Another tab (a new context shares nothing) starts signed out.
    const other = await suite.browser.newPage();
    await other.goto(`${suite.lagoon.url}/dashboard/overview`);
    await other.getByLabel('API key or operator token').waitFor();
    await Promise.all([page.close(), other.close()]);
  });

  it('collapses the nav behind a menu button at 390 px', async () => {
    const { page } = await openSignedIn();
    await page.setViewportSize({ width: 390, height: 800 });
    const menu = page.getByRole('button', { name: 'Menu' });
    const keys = page.getByRole('link', { name: 'Keys' });
    expect(await keys.isVisible()).toBe(false);
    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    await keys.click();
    await page.getByRole('heading', { name: 'Keys', level: 1 }).waitFor();
    expect(await keys.isVisible()).toBe(false);
    expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(390);
    await page.close();
  });

  it('serves only the built files: no path leaves the console folder', async () => {
    for (const path of [
      '/dashboard/assets/../../package.json',
      '/dashboard/assets/..%2f..%2fpackage.json',
      '/dashboard/assets/%2e%2e/%2e%2e/package.json',
      '/dashboard/assets/main.ts',
      '/dashboard/assets/nope-ABC123.js',
    ]) {
      expect(await rawGet(suite.lagoon.url, path), path).toBe(404);
    }
    // Any other path below /dashboard is a client-side route: the console's html.
    expect(await rawGet(suite.lagoon.url, '/dashboard/../package.json')).toBe(200);
  });
});
