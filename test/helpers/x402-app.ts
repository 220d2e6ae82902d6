import type { Address, Hex } from 'viem';
import { afterAll, beforeAll } from 'vitest';
import { findOrCreateWalletAccount } from '../../src/accounts/account.repository.ts';
import type { Nano } from '../../src/billing/money.ts';
import * as repo from '../../src/wallets/top-up.repository.ts';
import { createTestApp, type TestApp } from './app.ts';
import { startUsdcChain, type UsdcChain } from './usdc-chain.ts';
import { usdc, type SignedPayment } from './x402-payment.ts';

/*
 * The set-up the x402 top-up suites share: a local chain with the test USDC, its payers funded, and Lagoon taking
 * top-ups paid to the chain's receiver in that token (settled as `env` says), started once per file.
 */

export interface X402Setup {
  readonly chain: UsdcChain;
  readonly t: TestApp;
  /** The receiver every requirement names (LAGOON_X402_RECEIVER). */
  readonly receiver: Address;
  /** POST /x402/top-up with a payment in header `name` (default PAYMENT-SIGNATURE), no key. */
  topUp(header: string, name?: string): Promise<Response>;
  /** The wallet's account id, if it has one. */
  accountOf(address: string): Promise<string | undefined>;
  /** The wallet's USD credit (0 without an account). */
  creditOf(address: string): Promise<Nano>;
  /** The payments row of an authorization (keyed by token, payer and nonce). */
  paymentRow(payment: SignedPayment): Promise<repo.PaymentRow | undefined>;
  /** Records an authorization as `pending` (what a crash left behind), making its payer's account; its row id. */
  insertPending(payment: SignedPayment, usd: number, validBefore: Date): Promise<string>;
}

/**
 * Starts the chain and the app in the file's beforeAll (stops them in its afterAll); `env` adds the settlement
 * settings once the chain is up. The returned object is filled when beforeAll has run.
 */
export function useX402App(options: {
  payers: readonly ('payer' | 'payer2')[];
  env: (chain: UsdcChain) => Record<string, string> | Promise<Record<string, string>>;
}): X402Setup {
  const setup = {} as { -readonly [K in keyof X402Setup]: X402Setup[K] };
  beforeAll(async () => {
    const chain = await startUsdcChain();
    for (const payer of options.payers) await chain.mint(chain.account(payer).address, usdc(1000));
    const receiver = chain.account('receiver').address;
    const t = await createTestApp({
      LAGOON_X402_RECEIVER: receiver,
      LAGOON_X402_USDC_ADDRESS: chain.token,
      ...(await options.env(chain)),
    });
    const db = t.app.database.db;
    const accountOf = async (address: string) =>
      (
        await db
          .selectFrom('accounts')
          .select('id')
          .where('wallet_address', '=', address.toLowerCase())
          .executeTakeFirst()
      )?.id;
    Object.assign(setup, {
      chain,
      t,
      receiver,
      topUp: (header: string, name = 'payment-signature') =>
        t.call('/api/v1/x402/top-up', { method: 'POST', key: null, headers: { [name]: header } }),
      accountOf,
      async creditOf(address: string) {
        const id = await accountOf(address);
        return id ? repo.usdBalance(db, id) : 0n;
      },
      paymentRow: (payment: SignedPayment) =>
        db
          .selectFrom('x402_payments')
          .selectAll()
          .where('asset', '=', chain.token.toLowerCase())
          .where('payer', '=', (payment.authorization.from ?? '').toLowerCase())
          .where('nonce', '=', payment.nonce.toLowerCase())
          .executeTakeFirst(),
      async insertPending(payment: SignedPayment, usd: number, validBefore: Date) {
        const payer = payment.authorization.from as Address;
        const { id: accountId } = await findOrCreateWalletAccount(db, payer);
        const id = await repo.insertPending(db, {
          asset: chain.token,
          nonce: payment.nonce as Hex,
          payer,
          payTo: payment.authorization.to as Address,
          accountId,
          amountUnits: usdc(usd),
          amountNano: usdc(usd) * 1000n,
          validBefore,
        });
        if (!id) throw new Error('the pending row was not inserted');
        return id;
      },
    } satisfies X402Setup);
  });
  afterAll(async () => {
    await setup.t?.close();
    await setup.chain?.close();
  });
  return setup;
}
