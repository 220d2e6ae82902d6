import { describe, expect, it } from 'vitest';
import { collectPageErrors, consoleSuite, screenshots, signIn } from '../helpers/browser.ts';
import { scaled } from '../helpers/time-scale.ts';

/**
 * The Overview and Models pages in chromium against a server process: a charge made through the API (as any
 * client would, with the same key) appears live in the overview (usageUpdated over graphql-sse) and moves the
 * spend figures; the catalog lists prices, traits and capabilities and filters by type.
 */
describe('web console: overview live charges and models (browser)', () => {
  const suite = consoleSuite('browser-overview', { creditUsd: '5' });

  const chat = async () => {
    const response = await fetch(`${suite.lagoon.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${suite.lagoon.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'lagoon-sim-chat', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 8 }),
    });
    expect(response.status, await response.clone().text()).toBe(200);
  };

  // Its waits run one after another, each up to 15 s on a quiet host: room for all of them, so a wait that fails
  // reports its own assertion rather than the test's timeout.
  it('shows a charge made through the API live, and the balance after it', { timeout: scaled(90_000) }, async () => {
    const page = await suite.browser.newPage();
    const errors = collectPageErrors(page);
    // The subscription's stream answers once the server has subscribed it: a charge after that is not missed.
    const subscribed = page.waitForResponse((r) => r.url().endsWith('/graphql/stream') && r.status() === 200);
    await signIn(page, suite.lagoon.url, suite.lagoon.adminKey);
    await page.getByTestId('live-empty').waitFor();
    await subscribed;
    expect(await page.getByTestId('spend-today').textContent()).toContain('$0.00');
    expect(await page.getByTestId('balance').textContent()).toContain('$5.00');

    await chat();
    const live = page.getByTestId('live-charges');
    const rows = live.locator('tbody tr');
    // A chat is charged in two lines, its input and its output tokens, each a row.
    await expect
      .poll(() => rows.allTextContents(), { timeout: scaled(15_000) })
      .toEqual([expect.stringMatching(/lagoon-sim-chat\s*Output/), expect.stringMatching(/lagoon-sim-chat\s*Input/)]);
    // The balance is read again after the charge (usage analytics are cached by the API for up to 10 minutes).
    await expect
      .poll(() => page.getByTestId('balance').textContent(), { timeout: scaled(15_000) })
      .toMatch(/\$4\.9\d+/);
    expect(await page.getByTestId('chart-model').locator('canvas').count()).toBe(1);
    expect(await page.getByTestId('chart-key').locator('canvas').count()).toBe(1);

    await chat();
    await expect.poll(() => rows.count(), { timeout: scaled(15_000) }).toBe(4);
    await screenshots(page, 'overview', () => page.getByTestId('chart-model').waitFor());
    expect(errors).toEqual([]);
    await page.close();
  });

  it('lists the catalog with prices, traits and capabilities, and filters by type', async () => {
    const page = await suite.browser.newPage();
    await signIn(page, suite.lagoon.url, suite.lagoon.adminKey);
    await page.getByRole('link', { name: 'Models' }).click();
    const table = page.getByTestId('models');
    await table.waitFor();
    const chatRow = table.locator('tr[data-model="lagoon-sim-chat"]');
    expect(await chatRow.getByText('TEXT', { exact: true }).count()).toBe(1);
    expect(await chatRow.getByRole('list', { name: 'Prices' }).textContent()).toMatch(/input: \$/);
    const all = await table.locator('tbody tr').count();

    await page.getByLabel('Type').selectOption('IMAGE');
    await expect.poll(() => table.locator('tbody tr[data-model="lagoon-sim-chat"]').count()).toBe(0);
    const types = await table.locator('tbody tr td:nth-child(2)').allTextContents();
    expect(types.length).toBeGreaterThan(0);
    expect(types.length).toBeLessThan(all);
    expect(new Set(types)).toEqual(new Set(['IMAGE']));
    await screenshots(page, 'models');
    await page.close();
  });
});
