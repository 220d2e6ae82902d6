import { formatNano } from '../../src/billing/money.ts';
import { BASE_CHAIN_ID, usdcUnitsToNano, type PaymentRequirement } from '../../src/wallets/payment-requirements.ts';
import type { WalletBalance, WalletLedgerEntry } from '../../src/wallets/wallet.service.ts';
import { builder } from '../builder.ts';

/* Wallet callers (signed in with SIGN-IN-WITH-X): their credit, ledger and live balance; top-up requirements. */

const WalletBalanceRef = builder.objectRef<WalletBalance>('WalletBalance').implement({
  description: 'A wallet’s USD credit (what running calls hold is not counted).',
  fields: (t) => ({
    walletAddress: t.exposeString('walletAddress', { description: 'Lower-case 0x address.' }),
    balanceUsd: t.field({ type: 'Decimal', resolve: (b) => String(b.balanceUsd) }),
    canConsume: t.exposeBoolean('canConsume', { description: 'Whether the credit reaches the minimum balance.' }),
    minimumTopUpUsd: t.field({ type: 'Decimal', resolve: (b) => String(b.minimumTopUpUsd) }),
    suggestedTopUpUsd: t.field({ type: 'Decimal', resolve: (b) => String(b.suggestedTopUpUsd) }),
  }),
});

const WalletLedgerEntryRef = builder.objectRef<WalletLedgerEntry>('WalletLedgerEntry').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    amount: t.field({ type: 'Decimal', description: 'USD; negative for a charge.', resolve: (e) => String(e.amount) }),
    balanceAfter: t.field({ type: 'Decimal', resolve: (e) => String(e.balanceAfter) }),
    type: t.exposeString('type', { description: 'TOP_UP, CHARGE, REFUND or ADJUSTMENT.' }),
    createdAt: t.field({ type: 'DateTime', resolve: (e) => new Date(e.createdAt) }),
    requestId: t.exposeString('requestId'),
    modelId: t.exposeString('modelId'),
  }),
});

interface SignedInWallet {
  readonly accountId: string;
  readonly walletAddress: string;
}

const offsetCursor = (offset: number): string => Buffer.from(`offset:${offset}`).toString('base64url');
function offsetOf(cursor: string | null | undefined): number {
  if (!cursor) return 0;
  const match = /^offset:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString());
  return match?.[1] ? Number(match[1]) + 1 : 0;
}

const WalletRef = builder.objectRef<SignedInWallet>('Wallet').implement({
  description: 'The signed-in wallet.',
  fields: (t) => ({
    address: t.exposeString('walletAddress'),
    balance: t.field({
      type: WalletBalanceRef,
      resolve: (wallet, _args, context) => context.services.wallets.balanceOf(wallet.accountId, wallet.walletAddress),
    }),
    ledger: t.connection({
      type: WalletLedgerEntryRef,
      description: 'TOP_UP, CHARGE and REFUND entries, newest first (first: 1 to 100, default 50).',
      resolve: async (wallet, args, context) => {
        const limit = Math.min(Math.max(args.first ?? 50, 1), 100);
        const offset = offsetOf(args.after);
        const page = await context.services.wallets.ledgerOf(wallet.accountId, wallet.walletAddress, { limit, offset });
        const edges = page.transactions.map((node, index) => ({ cursor: offsetCursor(offset + index), node }));
        return {
          edges,
          pageInfo: {
            hasNextPage: page.pagination.hasMore,
            hasPreviousPage: offset > 0,
            startCursor: edges[0]?.cursor ?? null,
            endCursor: edges.at(-1)?.cursor ?? null,
          },
        };
      },
    }),
  }),
});

const PaymentRequirementRef = builder.objectRef<PaymentRequirement>('PaymentRequirement').implement({
  description: 'One x402 `accepts` entry: an EIP-3009 USDC transfer on Base that tops a wallet up.',
  fields: (t) => ({
    scheme: t.exposeString('scheme'),
    network: t.exposeString('network', { description: 'CAIP-2, eip155:8453.' }),
    amount: t.exposeString('amount', { description: 'Smallest top-up in USDC base units (6 decimals).' }),
    amountUsd: t.field({ type: 'Decimal', resolve: (r) => formatNano(usdcUnitsToNano(BigInt(r.amount))) }),
    asset: t.exposeString('asset', { description: 'The USDC contract.' }),
    payTo: t.exposeString('payTo'),
    maxTimeoutSeconds: t.exposeInt('maxTimeoutSeconds'),
  }),
});

/** The fields of a SIGN-IN-WITH-X message the wallet signs (EIP-4361), as GET /x402/nonce hands them out. */
interface SignInChallenge {
  readonly domain: string;
  readonly uri: string;
  readonly version: string;
  readonly nonce: string;
  readonly issuedAt: string;
  readonly expirationTime: string;
  readonly statement: string;
}

const SignInChallengeRef = builder.objectRef<SignInChallenge>('WalletSignInChallenge').implement({
  description: 'What a wallet signs to sign in (REST GET /x402/nonce): an EIP-4361 message on chain 8453.',
  fields: (t) => ({
    domain: t.exposeString('domain', { description: 'The configured sign-in site (never the request’s Host).' }),
    uri: t.exposeString('uri'),
    version: t.exposeString('version'),
    nonce: t.exposeString('nonce', { description: 'Fresh, 16 hex characters; usable once.' }),
    issuedAt: t.exposeString('issuedAt'),
    expirationTime: t.exposeString('expirationTime'),
    statement: t.exposeString('statement'),
    chainId: t.int({ description: 'Base (8453), the only chain accepted.', resolve: () => BASE_CHAIN_ID }),
  }),
});

builder.queryFields((t) => ({
  walletSignInChallenge: t.field({
    type: SignInChallengeRef,
    description:
      'A fresh sign-in challenge (REST GET /x402/nonce): sign its EIP-4361 message and send it base64 in the ' +
      'SIGN-IN-WITH-X header. Public.',
    resolve: (_root, _args, context) => context.services.wallets.challenge().info,
  }),
  wallet: t.field({
    type: WalletRef,
    description: 'The wallet signed in with SIGN-IN-WITH-X (401 for anything else).',
    resolve: (_root, _args, context) => context.services.wallets.current(context.auth),
  }),
  topUpRequirements: t.field({
    type: [PaymentRequirementRef],
    description: 'What POST /api/v1/x402/top-up accepts (empty while no receiver is configured). Public.',
    resolve: (_root, _args, context) => context.services.wallets.requirements(),
  }),
}));

builder.subscriptionFields((t) => ({
  walletBalance: t.field({
    type: WalletBalanceRef,
    description:
      'The signed-in wallet’s balance now, then after every charge, top-up or refund (SSE at /graphql/stream).',
    subscribe: (_root, _args, context) => context.services.wallets.watchBalance(context.auth),
    resolve: (balance) => balance,
  }),
}));
