import { findOrCreateWalletAccount } from '../accounts/account.repository.ts';
import { operator, type AuthContext } from '../auth/auth-context.ts';
import { requireOperator, requireWallet } from '../auth/permissions.ts';
import type { BillingService } from '../billing/billing.service.ts';
import { nanoToNumber, type Nano } from '../billing/money.ts';
import type { X402Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import { ForbiddenError, NotFoundError, ValidationError } from '../errors.ts';
import type { EventBus } from '../events/event-bus.ts';
import { discoveryBody, signInChallenge, topUpRequiredBody } from './challenge.ts';
import { paymentRequired, paymentRequirements, type PaymentRequirement } from './payment-requirements.ts';
import type { SignInSite } from './sign-in-site.ts';
import {
  findWalletAccount,
  listWalletAccounts,
  listWalletLedger,
  type WalletLedgerRow,
} from './wallet-ledger.repository.ts';

const ADDRESS = /^0x[a-fA-F0-9]{40}$/;

/** The contract's wallet balance record. */
export interface WalletBalance {
  readonly walletAddress: string;
  readonly balanceUsd: number;
  readonly canConsume: boolean;
  readonly minimumTopUpUsd: number;
  readonly suggestedTopUpUsd: number;
  readonly diemBalanceUsd: number;
}

/** The contract's wallet ledger entry. */
export interface WalletLedgerEntry {
  readonly id: string;
  readonly amount: number;
  readonly balanceAfter: number;
  readonly type: string;
  readonly createdAt: string;
  readonly requestId: string;
  readonly modelId: string;
}

export interface WalletLedgerPage {
  readonly walletAddress: string;
  readonly currentBalance: number;
  readonly transactions: WalletLedgerEntry[];
  readonly pagination: { readonly limit: number; readonly offset: number; readonly hasMore: boolean };
}

/**
 * Wallet callers' accounts: their credit and ledger, the 402 bodies that tell them how to
 * sign in and top up, and the operator's view (list, show, refund). Charges go through the billing service like
 * any key's; this service only reads them.
 */
export class WalletService {
  constructor(
    private readonly deps: {
      db: Database;
      billing: BillingService;
      events: EventBus;
      x402: X402Config;
      /** The configured site every challenge names (never the request's Host). */
      site: SignInSite;
    },
  ) {}

  /** The x402 `accepts` list of a top-up (empty while no receiver is configured). */
  requirements(): PaymentRequirement[] {
    return paymentRequirements(this.deps.x402);
  }

  /** A fresh sign-in challenge (GET /x402/nonce). */
  challenge() {
    return signInChallenge(this.deps.site.origin);
  }

  /** The 402 to a request without credentials; `path` is the route it asked for (the resource, on the site's origin). */
  discovery(path: string) {
    const where = this.deps.site.origin;
    return discoveryBody(this.deps.x402, where, `${where.origin}${path}`);
  }

  /**
   * The 402 of a wallet out of credit, for REST and GraphQL alike: the body (balance, top-up instructions, a fresh
   * sign-in challenge) and the x402 requirements, `{x402Version, accepts}`, that REST sends base64 in its
   * PAYMENT-REQUIRED header and GraphQL beside the body in the error's extensions.
   */
  async topUpRequired(accountId: string) {
    const body = topUpRequiredBody(this.deps.x402, this.deps.site.origin, await this.usdBalance(accountId));
    return { body, requirements: paymentRequired(this.deps.x402) };
  }

  /** GET /x402/balance/{address}: the signed-in wallet's own credit only. */
  async balance(auth: AuthContext, address: string): Promise<WalletBalance> {
    const wallet = this.ownWallet(auth, address);
    return this.balanceOf(wallet.accountId, wallet.walletAddress);
  }

  /** GET /x402/transactions/{address}: the signed-in wallet's own ledger, newest first. */
  async transactions(
    auth: AuthContext,
    address: string,
    page: { limit: number; offset: number },
  ): Promise<WalletLedgerPage> {
    const wallet = this.ownWallet(auth, address);
    return this.ledgerOf(wallet.accountId, wallet.walletAddress, page);
  }

  /** The signed-in wallet (GraphQL `wallet`): its account and address. */
  current(auth: AuthContext): { readonly accountId: string; readonly walletAddress: string } {
    const { accountId, walletAddress } = requireWallet(auth);
    return { accountId, walletAddress };
  }

  /**
   * The signed-in wallet's balance now, then again after each change: a settled charge (usage events) or a credit
   * (top-up, refund). Bursts of changes give one reading. Events cross processes with REDIS_URL.
   */
  async *watchBalance(auth: AuthContext): AsyncGenerator<WalletBalance> {
    const { accountId, walletAddress } = requireWallet(auth);
    const sources = [
      this.deps.events.subscribe('lagoon:usage', accountId),
      this.deps.events.subscribe('lagoon:wallet', accountId),
    ];
    let changed = false;
    let wake: (() => void) | undefined;
    const pump = async (source: AsyncIterableIterator<unknown>) => {
      for await (const _event of source) {
        changed = true;
        wake?.();
      }
    };
    for (const source of sources) void pump(source).catch(() => undefined);
    try {
      yield await this.balanceOf(accountId, walletAddress);
      for (;;) {
        if (!changed) await new Promise<void>((resolve) => (wake = resolve));
        changed = false;
        yield await this.balanceOf(accountId, walletAddress);
      }
    } finally {
      await Promise.all(sources.map((source) => source.return?.()));
    }
  }

  /** Operator: every wallet account and its credit. */
  async list(auth: AuthContext) {
    requireOperator(auth);
    await this.deps.billing.flush();
    return listWalletAccounts(this.deps.db);
  }

  /** Operator: one wallet's balance and latest ledger entries. */
  async show(auth: AuthContext, address: string, page = { limit: 20, offset: 0 }) {
    requireOperator(auth);
    const account = await findWalletAccount(this.deps.db, checkAddress(address));
    if (!account) throw new NotFoundError(`No wallet account for ${address}`);
    const walletAddress = account.wallet_address ?? address.toLowerCase();
    return {
      balance: await this.balanceOf(account.id, walletAddress),
      ledger: await this.ledgerOf(account.id, walletAddress, page),
    };
  }

  /** Operator: gives a wallet USD credit back (a REFUND ledger entry); the account is made if it has none yet. */
  async refund(auth: AuthContext, address: string, amount: Nano, note?: string) {
    requireOperator(auth);
    if (amount <= 0n) throw new ValidationError('A refund must be a positive amount');
    const account = await findOrCreateWalletAccount(this.deps.db, checkAddress(address));
    const entry = await this.deps.billing.credit(operator(auth.requestId), {
      accountId: account.id,
      currency: 'USD',
      amount,
      type: 'REFUND',
      note: note ?? 'operator refund',
    });
    this.balanceChanged(account.id);
    return entry;
  }

  /** Tells `walletBalance` subscribers (in every process with Redis) to read the balance again. */
  balanceChanged(accountId: string): void {
    this.deps.events.publish('lagoon:wallet', accountId, { changedAt: Date.now() });
  }

  async balanceOf(accountId: string, walletAddress: string): Promise<WalletBalance> {
    const balance = await this.usdBalance(accountId);
    const { x402 } = this.deps;
    return {
      walletAddress,
      balanceUsd: nanoToNumber(balance),
      canConsume: balance > 0n && balance >= x402.minBalanceNano,
      minimumTopUpUsd: nanoToNumber(x402.minTopUpNano),
      suggestedTopUpUsd: nanoToNumber(x402.minTopUpNano > 10_000_000_000n ? x402.minTopUpNano : 10_000_000_000n),
      diemBalanceUsd: 0,
    };
  }

  async ledgerOf(
    accountId: string,
    walletAddress: string,
    page: { limit: number; offset: number },
  ): Promise<WalletLedgerPage> {
    await this.deps.billing.flush(accountId);
    const [rows, balance] = await Promise.all([
      listWalletLedger(this.deps.db, accountId, page),
      this.usdBalance(accountId),
    ]);
    return {
      walletAddress,
      currentBalance: nanoToNumber(balance),
      transactions: rows.slice(0, page.limit).map(toEntry),
      pagination: { limit: page.limit, offset: page.offset, hasMore: rows.length > page.limit },
    };
  }

  /** Free USD credit: the balance less what running calls hold. */
  private async usdBalance(accountId: string): Promise<Nano> {
    const usd = (await this.deps.billing.balancesOf(accountId)).find((snapshot) => snapshot.currency === 'USD');
    return usd ? usd.amount - usd.reserved : 0n;
  }

  private ownWallet(auth: AuthContext, address: string) {
    const wallet = requireWallet(auth);
    if (checkAddress(address).toLowerCase() !== wallet.walletAddress)
      throw new ForbiddenError('A wallet may read only its own balance and transactions');
    return wallet;
  }
}

function checkAddress(address: string): string {
  if (!ADDRESS.test(address)) throw new ValidationError('walletAddress must match ^0x[a-fA-F0-9]{40}$');
  return address;
}

function toEntry(row: WalletLedgerRow): WalletLedgerEntry {
  return {
    id: row.id,
    amount: nanoToNumber(row.amount),
    balanceAfter: nanoToNumber(row.balanceAfter),
    type: row.type,
    createdAt: row.createdAt.toISOString(),
    requestId: row.requestId ?? '',
    modelId: row.modelId ?? '',
  };
}
