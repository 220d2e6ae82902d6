import type { Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { collectPageErrors, consoleSuite, screenshots } from '../helpers/browser.ts';
import { TOP_UP_RECEIVER } from '../helpers/console-host.ts';
import { newWallet } from '../helpers/wallets.ts';

/**
 * Wallet sign-in in chromium: a viem test wallet injected as the EIP-1193 provider (window.ethereum, its signing
 * done in Node through page.exposeFunction), the SIGN-IN-WITH-X flow, then the Wallet page's credit, transactions
 * and x402 top-up requirements.
 */
describe('web console: wallet sign-in and the wallet page (browser)', () => {
  const wallet = newWallet();
  const suite = consoleSuite('browser-wallet');

  const withWallet = async () => {
    const page = await suite.browser.newPage();
    const requests: string[] = [];
    await page.exposeFunction('testWalletRequest', async (method: string, params: unknown[]) => {
      requests.push(method);
      if (method === 'eth_requestAccounts' || method === 'eth_accounts') return [wallet.address];
      if (method === 'personal_sign') return wallet.signMessage({ message: { raw: params[0] as Hex } });
      throw new Error(`unsupported method ${method}`);
    });
    await page.addInitScript(() => {
      const call = (window as unknown as { testWalletRequest: (m: string, p: unknown[]) => Promise<unknown> })
        .testWalletRequest;
      (window as unknown as { ethereum: unknown }).ethereum = {
        request: ({ method, params }: { method: string; params?: unknown[] }) => call(method, params ?? []),
      };
    });
    return { page, requests };
  };

  it('signs in with the injected wallet and shows credit, transactions and top-up requirements', async () => {
    const { page, requests } = await withWallet();
    const errors = collectPageErrors(page);
    await page.goto(`${suite.lagoon.url}/dashboard/`);
    await page.getByRole('button', { name: 'Connect a wallet' }).click();
    await page.getByRole('navigation', { name: 'Pages' }).waitFor({ state: 'attached' });
    expect(requests).toEqual(['eth_requestAccounts', 'personal_sign']);
    expect(await page.locator('.who').textContent()).toContain(wallet.address.toLowerCase());

    // The first sign-in made the wallet's account; the operator gives it credit (a REFUND ledger entry).
    await suite.lagoon.cli(['wallets', 'refund', wallet.address, '2.5', '--note', 'browser test']);
    await page.goto(`${suite.lagoon.url}/dashboard/wallet`);
    await expect.poll(() => page.getByTestId('wallet-balance').textContent()).toContain('$2.50');
    const transactions = page.getByTestId('wallet-transactions');
    expect(await transactions.textContent()).toContain('REFUND');
    const requirements = page.getByTestId('top-up-requirements');
    expect(await requirements.textContent()).toContain(TOP_UP_RECEIVER);
    expect(await requirements.textContent()).toContain('eip155:8453');
    await screenshots(page, 'wallet-page', () => page.getByTestId('wallet-balance').waitFor());
    expect(errors).toEqual([]);
    await page.close();
  });

  it('says so when the wallet refuses to sign, and stays signed out', async () => {
    const page = await suite.browser.newPage();
    await page.addInitScript(() => {
      (window as unknown as { ethereum: unknown }).ethereum = {
        request: ({ method }: { method: string }) =>
          method === 'eth_requestAccounts'
            ? Promise.resolve(['0x1111111111111111111111111111111111111111'])
            : Promise.reject(new Error('User rejected the request.')),
      };
    });
    await page.goto(`${suite.lagoon.url}/dashboard/`);
    await page.getByRole('button', { name: 'Connect a wallet' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('User rejected');
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.close();
  });
});
