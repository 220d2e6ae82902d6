import { z } from 'zod';
import { json, parseQuery } from '../http.ts';
import type { Route } from '../router.ts';

/* Wallet callers: a fresh sign-in nonce, and a signed-in wallet's own credit and ledger. */

const tags = ['Wallet (x402)'];

export const WalletLedgerQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  offset: z.preprocess(
    (value) => (value === '' || value === 'null' ? undefined : value),
    z.coerce.number().int().min(0).default(0),
  ),
});

export const walletRoutes: Route[] = [
  {
    method: 'GET',
    path: '/x402/nonce',
    access: 'public',
    doc: { summary: 'A fresh nonce (16 hex characters) and sign-in challenge for a SIGN-IN-WITH-X message', tags },
    handler(call) {
      const challenge = call.services.wallets.challenge();
      return json({ nonce: challenge.info.nonce, ...challenge });
    },
  },
  {
    method: 'GET',
    path: '/x402/balance/:walletAddress',
    access: 'wallet',
    doc: { summary: "The signed-in wallet's USD credit (wallet sign-in header only; another address is 403)", tags },
    async handler({ services, auth, params }) {
      const data = await services.wallets.balance(auth, params.walletAddress ?? '');
      return json({ success: true, data: { ...data } });
    },
  },
  {
    method: 'GET',
    path: '/x402/transactions/:walletAddress',
    access: 'wallet',
    doc: {
      summary:
        "The signed-in wallet's ledger, newest first: TOP_UP, CHARGE and REFUND entries with the balance after each",
      tags,
      query: WalletLedgerQuery,
    },
    async handler({ services, auth, params, url }) {
      const page = parseQuery(WalletLedgerQuery, url);
      const data = await services.wallets.transactions(auth, params.walletAddress ?? '', page);
      return json({ success: true, data: { ...data, transactions: data.transactions.map((entry) => ({ ...entry })) } });
    },
  },
];
