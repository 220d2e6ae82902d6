import { sql, type Transaction } from 'kysely';
import type { Database } from '../db/database.ts';
import type { DB } from '../db/types.generated.ts';
import type { LimitGroup } from './billing.types.ts';
import type { Currency, Nano } from './money.ts';

type Tx = Transaction<DB>;
type Db = Database | Tx;

export async function listBalances(db: Db, accountId: string) {
  return db
    .selectFrom('balances')
    .select(['currency', 'amount', 'reserved'])
    .where('account_id', '=', accountId)
    .execute();
}

export async function unholdBalance(trx: Tx, accountId: string, currency: Currency, amount: Nano): Promise<void> {
  await trx
    .updateTable('balances')
    .set({ reserved: sql`reserved - ${amount}`, updated_at: sql`now()` })
    .where('account_id', '=', accountId)
    .where('currency', '=', currency)
    .execute();
}

/** Charges without a hold, only if the available balance covers it (a late settlement after the sweeper). */
export async function chargeIfAvailable(
  trx: Tx,
  accountId: string,
  currency: Currency,
  charge: Nano,
): Promise<Nano | undefined> {
  const row = await trx
    .updateTable('balances')
    .set({ amount: sql`amount - ${charge}`, updated_at: sql`now()` })
    .where('account_id', '=', accountId)
    .where('currency', '=', currency)
    .where(sql<boolean>`amount - reserved >= ${charge}`)
    .returning('amount')
    .executeTakeFirst();
  return row?.amount;
}

/**
 * Charges a settlement that the balance no longer covers (its hold was gone): recorded as debt, the balance may go
 * below what is held or below zero, and the row is marked (debt_since) as the only kind allowed to. Undefined when
 * the account has no balance of that currency.
 */
export async function chargeAsDebt(
  trx: Tx,
  accountId: string,
  currency: Currency,
  charge: Nano,
): Promise<Nano | undefined> {
  const row = await trx
    .updateTable('balances')
    .set({ amount: sql`amount - ${charge}`, debt_since: sql`coalesce(debt_since, now())`, updated_at: sql`now()` })
    .where('account_id', '=', accountId)
    .where('currency', '=', currency)
    .returning('amount')
    .executeTakeFirst();
  return row?.amount;
}

/** Adds to a balance (creating it); a negative amount only updates an existing balance that covers it. */
export async function addToBalance(
  trx: Tx,
  accountId: string,
  currency: Currency,
  amount: Nano,
): Promise<Nano | undefined> {
  if (amount < 0n) {
    // CHECK constraints apply to an INSERT's proposed row before ON CONFLICT, so a debit is a plain UPDATE. It never
    // takes a balance below what is held (the check allows that to a row in debt: only chargeAsDebt may).
    const row = await trx
      .updateTable('balances')
      .set({ amount: sql`amount + ${amount}`, updated_at: sql`now()` })
      .where('account_id', '=', accountId)
      .where('currency', '=', currency)
      .where(sql<boolean>`amount + ${amount} >= reserved`)
      .returning('amount')
      .executeTakeFirst();
    return row?.amount;
  }
  const row = await trx
    .insertInto('balances')
    .values({ account_id: accountId, currency, amount })
    .onConflict((oc) =>
      oc.columns(['account_id', 'currency']).doUpdateSet({
        amount: sql`balances.amount + ${amount}`,
        // A top-up that covers the holds again ends the debt.
        debt_since: sql`case when balances.amount + ${amount} >= balances.reserved then null else balances.debt_since end`,
        updated_at: sql`now()`,
      }),
    )
    .returning('amount')
    .executeTakeFirstOrThrow();
  return row.amount;
}

const spentColumn = (group: LimitGroup) => (group === 'usd' ? 'spent_usd' : 'spent_diem');
const reservedColumn = (group: LimitGroup) => (group === 'usd' ? 'reserved_usd' : 'reserved_diem');

export async function settleKeySpend(
  trx: Tx,
  apiKeyId: string,
  periodStart: Date,
  group: LimitGroup,
  charge: Nano,
  held: Nano,
): Promise<void> {
  await trx
    .updateTable('api_key_spend')
    .set({
      [spentColumn(group)]: sql`${sql.ref(spentColumn(group))} + ${charge}`,
      [reservedColumn(group)]: sql`greatest(${sql.ref(reservedColumn(group))} - ${held}, 0)`,
    })
    .where('api_key_id', '=', apiKeyId)
    .where('period_start', '=', periodStart)
    .execute();
}

/**
 * Moves a reservation from `from` (held, unless told) to its final status; undefined when it was not in `from`
 * (already settled or released).
 */
export async function finishReservation(
  trx: Tx,
  id: string,
  status: 'settled' | 'released',
  from: 'held' | 'released' = 'held',
) {
  return trx
    .updateTable('reservations')
    .set({ status, finished_at: sql`now()` })
    .where('id', '=', id)
    .where('status', '=', from)
    .returningAll()
    .executeTakeFirst();
}

/** Moves a call's held reservation's expiry (its call is still running); false when it is not held any more. */
export async function extendReservation(db: Db, id: string, expiresAt: Date): Promise<boolean> {
  const row = await db
    .updateTable('reservations')
    .set({ expires_at: expiresAt })
    .where('id', '=', id)
    .where('status', '=', 'held')
    .where('lease_holder', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

export async function reservationStatus(db: Db, id: string): Promise<string | undefined> {
  return (await db.selectFrom('reservations').select('status').where('id', '=', id).executeTakeFirst())?.status;
}

export async function listExpiredReservationIds(db: Db, now: Date, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('reservations')
    .select('id')
    .where('status', '=', 'held')
    .where('expires_at', '<', now)
    .orderBy('expires_at')
    .limit(limit)
    .execute();
  return rows.map((row) => row.id);
}

export async function insertLedgerEntry(
  trx: Tx,
  entry: {
    accountId: string;
    currency: Currency;
    amount: Nano;
    balanceAfter: Nano;
    type: 'TOP_UP' | 'CHARGE' | 'REFUND' | 'ADJUSTMENT';
    requestId?: string | null;
    modelId?: string | null;
    note?: string | null;
    /** The operator token that made an operator credit or debit (none: the CLI or the system). */
    operatorTokenId?: string | null;
    createdAt?: Date;
  },
) {
  return trx
    .insertInto('account_ledger')
    .values({
      account_id: entry.accountId,
      currency: entry.currency,
      amount: entry.amount,
      balance_after: entry.balanceAfter,
      type: entry.type,
      request_id: entry.requestId ?? null,
      model_id: entry.modelId ?? null,
      note: entry.note ?? null,
      ...(entry.operatorTokenId ? { operator_token_id: entry.operatorTokenId } : {}),
      ...(entry.createdAt ? { created_at: entry.createdAt } : {}),
    })
    .returning(['id', 'created_at'])
    .executeTakeFirstOrThrow();
}

export interface UsageEntryInsert {
  accountId: string;
  apiKeyId: string | null;
  reservationId: string | null;
  createdAt: Date;
  sku: string;
  modelId: string | null;
  modelType: string | null;
  unitType: string | null;
  lineType: string | null;
  pricePerUnitUsd: string;
  units: string;
  amount: Nano;
  currency: Currency;
  notes: string;
  requestId: string | null;
  inferenceDetails: { [key: string]: string | number } | null;
}

/** Inserts usage entries (with their ids when given, else generated); returns the ids. */
export async function insertUsageEntries(
  trx: Tx,
  entries: readonly (UsageEntryInsert & { readonly id?: string })[],
): Promise<string[]> {
  if (entries.length === 0) return [];
  const rows = await trx
    .insertInto('usage_entries')
    .values(
      entries.map((e) => ({
        ...(e.id ? { id: e.id } : {}),
        ...usageEntryColumns(e),
        inference_details: e.inferenceDetails === null ? null : JSON.stringify(e.inferenceDetails),
      })),
    )
    .returning('id')
    .execute();
  return rows.map((row) => row.id);
}

/**
 * The daily rollups and the dimensions each sums over: `usage_daily` per key and model, and the coarser two that
 * analytics read (per model without the key, per key without the model). Every dimension is part of the table's
 * unique key, so one upsert shape serves all three.
 */
const DAILY_ROLLUPS = [
  { table: 'usage_daily', dimensions: ['api_key_id', 'model_id', 'model_type'] },
  { table: 'usage_daily_model', dimensions: ['model_id', 'model_type'] },
  { table: 'usage_daily_key', dimensions: ['api_key_id'] },
] as const;

/** Adds entries to the daily rollups that analytics read (spend stored positive). */
export async function addToDailyRollups(trx: Tx, day: string, entries: readonly UsageEntryInsert[]): Promise<void> {
  for (const e of entries) {
    const values: Record<string, string> = {
      account_id: e.accountId,
      day,
      api_key_id: e.apiKeyId ?? '',
      model_id: e.modelId ?? '',
      model_type: e.modelType ?? '',
      unit_type: e.unitType ?? '',
      line_type: e.lineType ?? '',
      currency: e.currency,
    };
    for (const { table, dimensions } of DAILY_ROLLUPS) {
      const columns = ['account_id', 'day', ...dimensions, 'unit_type', 'line_type', 'currency'];
      const sum = (column: string) =>
        sql`${sql.ref(column)} = ${sql.ref(`${table}.${column}`)} + excluded.${sql.ref(column)}`;
      await sql`
        insert into ${sql.table(table)} (${sql.join(columns.map((column) => sql.ref(column)))}, amount, units, entries)
        values (${sql.join(columns.map((column) => values[column]))}, ${-e.amount}, ${e.units}, 1)
        on conflict (${sql.join(columns.map((column) => sql.ref(column)))})
        do update set ${sum('amount')}, ${sum('units')}, ${sum('entries')}`.execute(trx);
    }
  }
}

/** The columns of a usage entry row but its id and inference details (which each writer encodes its own way). */
export function usageEntryColumns(e: UsageEntryInsert) {
  return {
    account_id: e.accountId,
    api_key_id: e.apiKeyId,
    reservation_id: e.reservationId,
    created_at: e.createdAt,
    sku: e.sku,
    model_id: e.modelId,
    model_type: e.modelType,
    unit_type: e.unitType,
    line_type: e.lineType,
    price_per_unit_usd: e.pricePerUnitUsd,
    units: e.units,
    amount: e.amount,
    currency: e.currency,
    notes: e.notes,
    request_id: e.requestId,
  };
}
