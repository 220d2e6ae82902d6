import type { Database } from '../db/database.ts';
import type { Nano } from '../billing/money.ts';

/* A wallet's USD ledger (account_ledger rows of its account) and the wallet accounts, for the x402 routes and the CLI. */

export interface WalletLedgerRow {
  readonly id: string;
  readonly amount: Nano;
  readonly balanceAfter: Nano;
  readonly type: string;
  readonly createdAt: Date;
  readonly requestId: string | null;
  readonly modelId: string | null;
  readonly note: string | null;
}

/** Newest first (in the order written); one row more than `limit` is asked for so the caller knows whether there are more. */
export async function listWalletLedger(
  db: Database,
  accountId: string,
  page: { limit: number; offset: number },
): Promise<WalletLedgerRow[]> {
  const rows = await db
    .selectFrom('account_ledger')
    .select(['id', 'amount', 'balance_after', 'type', 'created_at', 'request_id', 'model_id', 'note'])
    .where('account_id', '=', accountId)
    .where('currency', '=', 'USD')
    // seq, not created_at: entries settled in one batch share their time (migrations/0017_ledger_sequence.ts).
    .orderBy('seq', 'desc')
    .limit(page.limit + 1)
    .offset(page.offset)
    .execute();
  return rows.map((row) => ({
    id: row.id,
    amount: BigInt(row.amount),
    balanceAfter: BigInt(row.balance_after),
    type: row.type,
    createdAt: row.created_at,
    requestId: row.request_id,
    modelId: row.model_id,
    note: row.note,
  }));
}

export async function findWalletAccount(db: Database, address: string) {
  return db
    .selectFrom('accounts')
    .select(['id', 'wallet_address', 'created_at'])
    .where('wallet_address', '=', address.toLowerCase())
    .executeTakeFirst();
}

/** Every wallet account with its USD balance, oldest first. */
export async function listWalletAccounts(db: Database) {
  const rows = await db
    .selectFrom('accounts')
    .leftJoin('balances', (join) =>
      join.onRef('balances.account_id', '=', 'accounts.id').on('balances.currency', '=', 'USD'),
    )
    .select(['accounts.id', 'accounts.wallet_address', 'accounts.created_at', 'balances.amount'])
    .where('accounts.kind', '=', 'wallet')
    .orderBy('accounts.created_at')
    .orderBy('accounts.id')
    .execute();
  return rows.map((row) => ({
    accountId: row.id,
    walletAddress: row.wallet_address ?? '',
    createdAt: row.created_at,
    balance: BigInt(row.amount ?? 0),
  }));
}
