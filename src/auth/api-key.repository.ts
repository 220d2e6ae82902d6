import { sql } from 'kysely';
import type { Database } from '../db/database.ts';

const keyColumns = [
  'id',
  'account_id',
  'last6',
  'api_key_type',
  'description',
  'expires_at',
  'limit_usd',
  'limit_diem',
  'limit_vcu',
  'limit_period',
  'model_privacy',
  'created_at',
  'last_used_at',
  'revoked_at',
  'rate_limits',
] as const;

export type ApiKeyRow = Awaited<ReturnType<typeof getKeyById>> & object;

export async function insertKey(
  db: Database,
  values: {
    accountId: string;
    keyHash: string;
    last6: string;
    type: string;
    description: string;
    expiresAt: Date | null;
    limitUsd: bigint | null;
    limitDiem: bigint | null;
    limitVcu: bigint | null;
    limitPeriod: string;
    modelPrivacy: string;
  },
) {
  return db
    .insertInto('api_keys')
    .values({
      account_id: values.accountId,
      key_hash: values.keyHash,
      last6: values.last6,
      api_key_type: values.type,
      description: values.description,
      expires_at: values.expiresAt,
      limit_usd: values.limitUsd,
      limit_diem: values.limitDiem,
      limit_vcu: values.limitVcu,
      limit_period: values.limitPeriod,
      model_privacy: values.modelPrivacy,
    })
    .returning(keyColumns)
    .executeTakeFirstOrThrow();
}

export async function getKeyById(db: Database, id: string) {
  return db.selectFrom('api_keys').select(keyColumns).where('id', '=', id).executeTakeFirst();
}

/** The account's key by id; undefined for another account's key (ownership is part of the query). */
export async function getOwnKey(db: Database, accountId: string, id: string) {
  return db
    .selectFrom('api_keys')
    .select(keyColumns)
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

export async function getOwnKeysByIds(db: Database, accountId: string, ids: readonly string[]) {
  if (ids.length === 0) return [];
  return db
    .selectFrom('api_keys')
    .select(keyColumns)
    .where('id', 'in', ids)
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .execute();
}

export async function getActiveKeyByHash(db: Database, keyHash: string) {
  return db
    .selectFrom('api_keys')
    .select(keyColumns)
    .where('key_hash', '=', keyHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

export async function listActiveKeys(db: Database, accountId: string) {
  return db
    .selectFrom('api_keys')
    .select(keyColumns)
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function countActiveKeys(db: Database, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<bigint>().as('n'))
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function updateOwnKey(
  db: Database,
  accountId: string,
  id: string,
  patch: Partial<{
    description: string;
    expires_at: Date | null;
    limit_usd: bigint | null;
    limit_diem: bigint | null;
    limit_vcu: bigint | null;
    limit_period: string;
    model_privacy: string;
  }>,
) {
  if (Object.keys(patch).length === 0) return getOwnKey(db, accountId, id);
  return db
    .updateTable('api_keys')
    .set(patch)
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .returning(keyColumns)
    .executeTakeFirst();
}

/** Revokes and returns the hash so the caller can drop it from caches. */
export async function revokeOwnKey(db: Database, accountId: string, id: string): Promise<string | undefined> {
  const row = await db
    .updateTable('api_keys')
    .set({ revoked_at: sql`now()` })
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .returning('key_hash')
    .executeTakeFirst();
  return row?.key_hash;
}

/** One statement for a whole batch of last-used times; never moves a time backwards. */
export async function recordLastUsed(db: Database, entries: ReadonlyArray<{ id: string; at: Date }>): Promise<void> {
  if (entries.length === 0) return;
  const values = sql.join(entries.map((e) => sql`(${e.id}::uuid, ${e.at}::timestamptz)`));
  await sql`
    update api_keys set last_used_at = v.at
    from (values ${values}) as v(id, at)
    where api_keys.id = v.id and (api_keys.last_used_at is null or api_keys.last_used_at < v.at)`.execute(db);
}

/** Spend per key in its current period and over the trailing seven days, for a batch of keys. */
export async function usageForKeys(
  db: Database,
  keys: ReadonlyArray<{ id: string; periodStart: Date }>,
  since: string,
) {
  if (keys.length === 0) return { current: [], trailing: [] };
  const pairs = sql.join(keys.map((k) => sql`(${k.id}::uuid, ${k.periodStart}::timestamptz)`));
  const current = await sql<{ api_key_id: string; spent_usd: bigint; spent_diem: bigint }>`
    select s.api_key_id, s.spent_usd, s.spent_diem
    from api_key_spend s join (values ${pairs}) as p(id, period_start)
      on s.api_key_id = p.id and s.period_start = p.period_start`.execute(db);
  const trailing = await db
    .selectFrom('usage_daily')
    .select(['api_key_id', 'currency', sql<bigint>`sum(amount)::int8`.as('amount')])
    .where(
      'api_key_id',
      'in',
      keys.map((k) => k.id),
    )
    .where('day', '>=', since)
    .groupBy(['api_key_id', 'currency'])
    .execute();
  return { current: current.rows, trailing };
}

/** Sets (or with null clears) a key's own rate limits; the key's id and secret hash, or undefined when unknown. */
export async function setKeyRateLimits(db: Database, id: string, limits: object | null) {
  return db
    .updateTable('api_keys')
    .set({ rate_limits: limits === null ? null : JSON.stringify(limits) })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .returning(['id', 'key_hash'])
    .executeTakeFirst();
}
