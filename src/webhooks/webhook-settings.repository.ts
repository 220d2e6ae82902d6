import { sql } from 'kysely';
import type { Database } from '../db/database.ts';

/* The account's balance-low threshold and its arming, and the spend-limit levels each key crossed per period. */

export function settingsOf(db: Database, accountId: string) {
  return db.selectFrom('webhook_settings').selectAll().where('account_id', '=', accountId).executeTakeFirst();
}

/** A new threshold re-arms the event: the next fall under it is told. */
export async function setThreshold(db: Database, accountId: string, threshold: bigint | null): Promise<void> {
  await db
    .insertInto('webhook_settings')
    .values({ account_id: accountId, balance_low_threshold: threshold, balance_low_armed: true })
    .onConflict((oc) =>
      oc
        .column('account_id')
        .doUpdateSet({ balance_low_threshold: threshold, balance_low_armed: true, updated_at: new Date() }),
    )
    .execute();
}

/** Of these accounts, those with a threshold set. */
export function thresholds(db: Database, accountIds: readonly string[]) {
  if (accountIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('webhook_settings')
    .select(['account_id', 'balance_low_threshold', 'balance_low_armed'])
    .where('account_id', 'in', accountIds)
    .where('balance_low_threshold', 'is not', null)
    .execute();
}

/** Disarms (true: this call did, so it tells) or re-arms (after the balance rose to the threshold again). */
export async function setArmed(db: Database, accountId: string, armed: boolean): Promise<boolean> {
  const result = await db
    .updateTable('webhook_settings')
    .set({ balance_low_armed: armed })
    .where('account_id', '=', accountId)
    .where('balance_low_armed', '=', !armed)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Of these keys, those with a spend limit, and what they spent in their current period (`periodStarts` by key). */
export function limitedKeys(db: Database, keyIds: readonly string[]) {
  if (keyIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('api_keys')
    .select(['id', 'account_id', 'description', 'limit_usd', 'limit_diem', 'limit_period'])
    .where('id', 'in', keyIds)
    .where((eb) => eb.or([eb('limit_usd', 'is not', null), eb('limit_diem', 'is not', null)]))
    .execute();
}

export function spendOf(db: Database, keyId: string, periodStart: Date) {
  return db
    .selectFrom('api_key_spend')
    .select(['spent_usd', 'spent_diem'])
    .where('api_key_id', '=', keyId)
    .where('period_start', '=', periodStart)
    .executeTakeFirst();
}

/** True the first time this key crosses `level` in this period. */
export async function firstCrossing(db: Database, keyId: string, periodStart: Date, level: number): Promise<boolean> {
  const inserted = await db
    .insertInto('webhook_key_alerts')
    .values({ api_key_id: keyId, period_start: periodStart, level })
    .onConflict((oc) => oc.doNothing())
    .returning(sql<number>`1`.as('one'))
    .executeTakeFirst();
  return inserted !== undefined;
}
