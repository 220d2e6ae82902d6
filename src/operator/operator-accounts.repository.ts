import { sql } from 'kysely';
import type { Database } from '../db/database.ts';

export interface AccountRow {
  readonly id: string;
  readonly name: string;
  readonly kind: string;
  readonly wallet_address: string | null;
  readonly created_at: Date;
}

/** Where a page starts: after this account in the order (newest first, then by id). */
export interface AccountCursor {
  readonly createdAt: Date;
  readonly id: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Accounts newest first, optionally those a search matches: the account id, its name, a wallet address, or one of
 * its keys (id, last six characters, description).
 */
export async function searchAccounts(
  db: Database,
  input: { search: string | undefined; after: AccountCursor | undefined; limit: number },
): Promise<AccountRow[]> {
  let query = db.selectFrom('accounts').select(['id', 'name', 'kind', 'wallet_address', 'created_at']);
  const search = input.search?.trim();
  if (search) {
    const like = `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const isId = UUID.test(search);
    query = query.where((eb) =>
      eb.or([
        ...(isId ? [eb('id', '=', search)] : []),
        eb('name', 'ilike', like),
        eb('wallet_address', '=', search.toLowerCase()),
        eb.exists(
          eb
            .selectFrom('api_keys')
            .select(sql`1`.as('one'))
            .whereRef('api_keys.account_id', '=', 'accounts.id')
            .where((keys) =>
              keys.or([
                ...(isId ? [keys('api_keys.id', '=', search)] : []),
                keys('api_keys.last6', '=', search.slice(-6)),
                keys('api_keys.description', 'ilike', like),
              ]),
            ),
        ),
      ]),
    );
  }
  const after = input.after;
  if (after)
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '<', after.createdAt),
        eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)]),
      ]),
    );
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(input.limit).execute();
}

/** Active (not revoked) keys per account. */
export async function activeKeyCounts(db: Database, accountIds: readonly string[]): Promise<Map<string, number>> {
  if (accountIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('api_keys')
    .select(['account_id', db.fn.countAll<string>().as('keys')])
    .where('account_id', 'in', [...accountIds])
    .where('revoked_at', 'is', null)
    .groupBy('account_id')
    .execute();
  return new Map(rows.map((row) => [row.account_id, Number(row.keys)]));
}

export interface SpendRow {
  readonly accountId: string;
  readonly currency: string;
  readonly today: bigint;
  readonly last30Days: bigint;
}

/** Spend per account and currency today and over the 30 UTC days up to today, from the daily rollups. */
export async function spendOf(db: Database, accountIds: readonly string[], today: string): Promise<SpendRow[]> {
  if (accountIds.length === 0) return [];
  const { rows } = await sql<{ account_id: string; currency: string; today: bigint; last30: bigint }>`
    select account_id, currency,
      coalesce(sum(amount) filter (where day = ${today}::date), 0)::int8 as today,
      sum(amount)::int8 as last30
    from usage_daily_key
    where account_id in (${sql.join(accountIds.map((id) => sql`${id}::uuid`))})
      and day > ${today}::date - 30 and day <= ${today}::date
    group by account_id, currency`.execute(db);
  return rows.map((row) => ({
    accountId: row.account_id,
    currency: row.currency,
    today: BigInt(row.today),
    last30Days: BigInt(row.last30),
  }));
}

export interface QueueDepthRow {
  readonly status: string;
  readonly kind: string;
  readonly modelId: string;
  readonly jobs: number;
  readonly oldestCreatedAt: Date;
}

/** Unfinished jobs per state, kind and model, with the oldest one's creation time. */
export async function queueDepth(db: Database): Promise<QueueDepthRow[]> {
  const rows = await db
    .selectFrom('jobs')
    .select(['status', 'kind', 'model_id', db.fn.countAll<string>().as('jobs'), db.fn.min('created_at').as('oldest')])
    .where('status', 'in', ['QUEUED', 'PROCESSING'])
    .where('deleted_at', 'is', null)
    .groupBy(['status', 'kind', 'model_id'])
    .orderBy('status')
    .orderBy('kind')
    .orderBy('model_id')
    .execute();
  return rows.map((row) => ({
    status: row.status,
    kind: row.kind,
    modelId: row.model_id,
    jobs: Number(row.jobs),
    oldestCreatedAt: new Date(row.oldest),
  }));
}
