import { sql, type Transaction } from 'kysely';
import { addToBalance, insertLedgerEntry } from '../billing/billing.repository.ts';
import type { Nano } from '../billing/money.ts';
import type { Database } from '../db/database.ts';
import type { DB } from '../db/types.generated.ts';

/* The x402_payments table (migrations/2026-11-30T13-00-00_x402_payments.ts): every status change is one guarded UPDATE. */

export interface NewPayment {
  asset: string;
  nonce: string;
  payer: string;
  accountId: string;
  amountUnits: bigint;
  amountNano: Nano;
  validBefore: Date;
}

/** Inserts the pending row; undefined when the (asset, nonce) pair already has one. */
export async function insertPending(db: Database, payment: NewPayment): Promise<string | undefined> {
  const row = await db
    .insertInto('x402_payments')
    .values({
      asset: payment.asset.toLowerCase(),
      nonce: payment.nonce.toLowerCase(),
      payer: payment.payer.toLowerCase(),
      account_id: payment.accountId,
      amount_units: payment.amountUnits,
      amount_nano: payment.amountNano,
      valid_before: payment.validBefore,
    })
    .onConflict((oc) => oc.columns(['asset', 'nonce']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return row?.id;
}

export async function findByNonce(db: Database, asset: string, nonce: string) {
  return db
    .selectFrom('x402_payments')
    .selectAll()
    .where('asset', '=', asset.toLowerCase())
    .where('nonce', '=', nonce.toLowerCase())
    .executeTakeFirst();
}

export async function recordTxHash(db: Database, id: string, txHash: string): Promise<void> {
  await db
    .updateTable('x402_payments')
    .set({ tx_hash: txHash.toLowerCase(), updated_at: sql`now()` })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .execute();
}

export async function markFailed(db: Database, id: string, reason: string): Promise<void> {
  await db
    .updateTable('x402_payments')
    .set({ status: 'failed', failure_reason: reason.slice(0, 500), updated_at: sql`now()` })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .execute();
}

/**
 * pending → settled, the USD credit and its TOP_UP ledger entry, in one transaction: only the caller whose UPDATE
 * moved the row credits, so a payment is credited once however many processes finish it.
 */
export async function creditSettled(
  db: Database,
  id: string,
  txHash: string | null,
  requestId: string | null,
): Promise<{ credited: boolean; balanceAfter?: Nano; ledgerEntryId?: string }> {
  return db.transaction().execute(async (trx: Transaction<DB>) => {
    const row = await trx
      .updateTable('x402_payments')
      .set({ status: 'settled', updated_at: sql`now()`, ...(txHash ? { tx_hash: txHash.toLowerCase() } : {}) })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .returning(['account_id', 'amount_nano', 'tx_hash', 'payer'])
      .executeTakeFirst();
    if (!row) return { credited: false };
    const balanceAfter = await addToBalance(trx, row.account_id, 'USD', row.amount_nano);
    if (balanceAfter === undefined) throw new Error('a positive credit always has a balance after');
    const entry = await insertLedgerEntry(trx, {
      accountId: row.account_id,
      currency: 'USD',
      amount: row.amount_nano,
      balanceAfter,
      type: 'TOP_UP',
      requestId,
      note: `x402 top-up${row.tx_hash ? ` ${row.tx_hash}` : ''}`,
    });
    await trx.updateTable('x402_payments').set({ ledger_entry_id: entry.id }).where('id', '=', id).execute();
    return { credited: true, balanceAfter, ledgerEntryId: entry.id };
  });
}

/** Rows a crash may have left pending (oldest first). */
export async function listPending(db: Database, limit = 500) {
  return db
    .selectFrom('x402_payments')
    .selectAll()
    .where('status', '=', 'pending')
    .orderBy('created_at')
    .limit(limit)
    .execute();
}

export async function usdBalance(db: Database, accountId: string): Promise<Nano> {
  const row = await db
    .selectFrom('balances')
    .select('amount')
    .where('account_id', '=', accountId)
    .where('currency', '=', 'USD')
    .executeTakeFirst();
  return row?.amount ?? 0n;
}
