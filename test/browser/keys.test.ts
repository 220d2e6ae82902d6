import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { collectPageErrors, consoleSuite, screenshots, signIn } from '../helpers/browser.ts';

/** The page fits a 390 px screen: nothing wider than the viewport (the page never scrolls sideways). */
async function expectNoHorizontalOverflow(page: Page): Promise<void> {
  await page.setViewportSize({ width: 390, height: 800 });
  expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(390);
  await page.setViewportSize({ width: 1280, height: 900 });
}

/** POST /graphql with a bearer, as any client would: the HTTP status. */
async function graphqlStatus(url: string, bearer: string): Promise<number> {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
    body: JSON.stringify({ query: '{ rateLimits { tierId } }' }),
  });
  await response.body?.cancel();
  return response.status;
}

/**
 * The Keys page in chromium: a new key's secret shown once (and gone after a reload), its limit changed, a refused
 * change in words, and the key revoked (the API then refuses its secret).
 */
describe('web console: keys (browser)', () => {
  const suite = consoleSuite('browser-keys', {
    prepare: () =>
      suite.browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: suite.lagoon.url }),
  });

  it('creates a key, shows its secret once, changes its limit and revokes it', async () => {
    const page = await suite.browser.newPage();
    const errors = collectPageErrors(page);
    await signIn(page, suite.lagoon.url, suite.lagoon.adminKey);
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Keys' }).click();
    await page.getByRole('heading', { name: 'Keys', level: 1 }).waitFor();

    await page.getByLabel('Description').fill('browser test key');
    await page.getByLabel('USD limit').first().fill('2');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secretBox = page.getByTestId('new-secret');
    await secretBox.waitFor();
    const secret = (await secretBox.textContent())!.trim();
    expect(secret.length).toBeGreaterThan(20);
    expect(await graphqlStatus(suite.lagoon.url, secret)).toBe(200);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);

    const card = page.locator('li.key', { hasText: 'browser test key' });
    await expect.poll(() => card.getByTestId('key-spend').textContent()).toContain('of $2.00');
    await screenshots(page, 'keys-created', () => secretBox.waitFor());

    // The secret lived in the page only: after a reload it is nowhere.
    await page.reload();
    await card.waitFor();
    expect(await page.getByTestId('new-secret').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);

    // A valid limit change is shown; one the API refuses is said in words.
    await card.getByRole('button', { name: 'Change limits' }).click();
    await card.getByLabel('USD limit').fill('3.5');
    await card.getByRole('button', { name: 'Save limits' }).click();
    // The whole card, so that a refusal's words are in the failure message.
    await expect.poll(() => card.textContent()).toContain('of $3.50');
    await card.getByRole('button', { name: 'Change limits' }).click();
    await card.getByLabel('Expires on').fill('2001-01-01');
    await card.getByRole('button', { name: 'Save limits' }).click();
    await expect.poll(() => card.getByRole('alert').textContent()).toMatch(/expir|past|future/i);
    await card.getByRole('button', { name: 'Cancel' }).click();
    await screenshots(page, 'keys-list');
    await expectNoHorizontalOverflow(page);

    page.once('dialog', (dialog) => void dialog.accept());
    await card.getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => card.count()).toBe(0);
    await expect.poll(() => graphqlStatus(suite.lagoon.url, secret)).toBe(401);
    expect(errors).toEqual([]);
    await page.close();
  });
});
