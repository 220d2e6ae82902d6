import { sql, type Selectable, type Transaction } from 'kysely';
import { addToBalance, insertLedgerEntry } from '../billing/billing.repository.ts';
import type { Nano } from '../billing/money.ts';
import type { Database } from '../db/database.ts';
import type { DB } from '../db/types.generated.ts';

/*
 * The x402_payments table (migrations/0011_x402_payments.ts, 0018_x402_payer_nonce.ts):
 * one row per (token, payer, nonce), as EIP-3009 nonces are per authorizer. Every status change is one guarded
 * UPDATE; `settled` (credited) is final, and `failed` rows stay open to the sweep until `closed_at` is set.
 */

export interface NewPayment {
  asset: string;
  nonce: string;
  payer: string;
  /** The authorization's `to` (the receiver it pays). */
  payTo: string;
  accountId: string;
  amountUnits: bigint;
  amountNano: Nano;
  validBefore: Date;
}

/** Inserts the pending row; undefined when its (asset, payer, nonce) already has one. */
export async function insertPending(db: Database, payment: NewPayment): Promise<string | undefined> {
  const row = await db
    .insertInto('x402_payments')
    .values({
      asset: payment.asset.toLowerCase(),
      nonce: payment.nonce.toLowerCase(),
      payer: payment.payer.toLowerCase(),
      pay_to: payment.payTo.toLowerCase(),
      account_id: payment.accountId,
      amount_units: payment.amountUnits,
      amount_nano: payment.amountNano,
      valid_before: payment.validBefore,
    })
    .onConflict((oc) => oc.columns(['asset', 'payer', 'nonce']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return row?.id;
}

export type PaymentRow = Selectable<DB['x402_payments']>;

/** The row of one payer's authorization nonce. */
export async function findPayment(
  db: Database,
  key: { asset: string; payer: string; nonce: string },
): Promise<PaymentRow | undefined> {
  return db
    .selectFrom('x402_payments')
    .selectAll()
    .where('asset', '=', key.asset.toLowerCase())
    .where('payer', '=', key.payer.toLowerCase())
    .where('nonce', '=', key.nonce.toLowerCase())
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

/** pending → failed: nothing credited for now, but the sweep keeps looking until the row is closed. */
export async function markFailed(db: Database, id: string, reason: string, txHash?: string): Promise<void> {
  await db
    .updateTable('x402_payments')
    .set({
      status: 'failed',
      failure_reason: reason.slice(0, 500),
      updated_at: sql`now()`,
      ...(txHash ? { tx_hash: sql<string>`coalesce(tx_hash, ${txHash.toLowerCase()})` } : {}),
    })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .execute();
}

/** Failed for good (the chain can no longer pay it): the sweep stops looking at it. */
export async function close(db: Database, id: string, reason: string): Promise<void> {
  await db
    .updateTable('x402_payments')
    .set({ status: 'failed', failure_reason: reason.slice(0, 500), closed_at: sql`now()`, updated_at: sql`now()` })
    .where('id', '=', id)
    .where('status', '<>', 'settled')
    .where('closed_at', 'is', null)
    .execute();
}

/** A credited top-up, as its listeners are told (the wallet balance subscription, webhooks). */
export interface CreditedTopUp {
  readonly paymentId: string;
  readonly amount: Nano;
  readonly balanceAfter: Nano | null;
  readonly payer: string;
  readonly transaction: string | null;
}

/**
 * pending or failed → settled, the USD credit and its TOP_UP ledger entry, in one transaction: only the caller whose
 * UPDATE moved the row credits (a second one waits on the row lock and then matches nothing), so a payment is
 * credited once however many requests and sweeps in however many processes finish it. `txHash` is the
 * transaction the chain shows paying it.
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
      .set({
        status: 'settled',
        closed_at: sql`now()`,
        updated_at: sql`now()`,
        ...(txHash ? { tx_hash: txHash.toLowerCase() } : {}),
      })
      .where('id', '=', id)
      .where('status', '<>', 'settled')
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

/**
 * Rows the sweep still watches (not credited, not closed), least recently checked first, and marks them checked:
 * a backlog longer than `limit` rotates instead of starving the newest rows.
 */
export async function takeOpen(db: Database, limit: number): Promise<PaymentRow[]> {
  const rows = await db
    .selectFrom('x402_payments')
    .selectAll()
    .where('status', '<>', 'settled')
    .where('closed_at', 'is', null)
    .orderBy(sql`checked_at asc nulls first`)
    .orderBy('created_at')
    .limit(limit)
    .execute();
  if (rows.length > 0)
    await db
      .updateTable('x402_payments')
      .set({ checked_at: sql`now()` })
      .where(
        'id',
        'in',
        rows.map((row) => row.id),
      )
      .execute();
  return rows;
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
