import { describe, expect, it } from 'vitest';
import { collectPageErrors, consoleSuite, screenshots, signIn } from '../helpers/browser.ts';

/**
 * The operator view in chromium: signed in with a `lagoonop_` token made by the CLI, it finds an account,
 * credits it with a reason (the ledger entry is shown, and the account's balance reads it), and shows usage,
 * upstream health and the job queue.
 */
describe('web console: operator view (browser)', () => {
  let token: string;
  const suite = consoleSuite('browser-operator', {
    prepare: async () => {
      await suite.lagoon.cli(['accounts', 'create', '--name', 'Acme Studio', '--json']);
      ({ token } = JSON.parse(await suite.lagoon.cli(['operator-tokens', 'create', '--name', 'console', '--json'])) as {
        token: string;
      });
    },
  });

  it('credits an account with a reason: its balance shows it and the ledger entry is listed', async () => {
    const page = await suite.browser.newPage();
    const errors = collectPageErrors(page);
    await signIn(page, suite.lagoon.url, token);
    await page.getByRole('link', { name: 'Operator' }).click();
    await page.getByRole('heading', { name: 'Operator', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/dashboard/operator');

    await page.getByLabel('Search accounts').fill('Acme');
    await page.getByRole('button', { name: 'Search' }).click();
    const row = page.getByTestId('operator-accounts').getByRole('row', { name: /Acme Studio/ });
    await expect.poll(() => page.getByTestId('operator-accounts').getByRole('row').count()).toBe(2);
    expect(await row.getByTestId('account-balance').textContent()).toContain('$0.00');

    await row.getByRole('button', { name: 'Adjust Acme Studio' }).click();
    await page.getByLabel('Amount').fill('12.5');
    await page.getByLabel('Reason (kept in the ledger)').fill('goodwill credit for the outage');
    await page.getByRole('button', { name: 'Credit account' }).click();

    const ledger = page.getByTestId('adjustments');
    await expect.poll(() => ledger.textContent()).toContain('goodwill credit for the outage');
    expect(await ledger.textContent()).toContain('$12.50');
    await expect.poll(() => row.getByTestId('account-balance').textContent()).toContain('$12.50');

    await page.getByTestId('upstream-health').or(page.getByText('No upstream called')).first().waitFor();
    await page.getByTestId('queue-queued').waitFor();
    await page.getByTestId('operator-spend-30d').waitFor();
    await screenshots(page, 'operator-credit', () => ledger.waitFor());
    expect(errors).toEqual([]);
    await page.close();
  });

  it('refuses a debit past the balance in words', async () => {
    const page = await suite.browser.newPage();
    await signIn(page, suite.lagoon.url, token);
    await page.goto(`${suite.lagoon.url}/dashboard/operator`);
    await page.getByLabel('Search accounts').fill('Acme');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('button', { name: 'Adjust Acme Studio' }).click();
    await page.getByLabel('Operation').selectOption('debit');
    await page.getByLabel('Amount').fill('1000');
    await page.getByLabel('Reason (kept in the ledger)').fill('too much');
    await page.getByRole('button', { name: 'Debit account' }).click();
    await expect.poll(() => page.getByRole('alert').first().getAttribute('data-code')).toBe('INSUFFICIENT_BALANCE');
    await page.close();
  });
});
