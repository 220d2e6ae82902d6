import type { Database } from '../db/database.ts';
import type { RateLimitType } from './limits.ts';

/** One refused call, as GET /api_keys/rate_limits/log lists it. */
export interface RateLimitBreach {
  readonly apiKeyId: string | null;
  readonly modelId: string;
  readonly tier: string;
  readonly type: RateLimitType;
  readonly at: Date;
}

/**
 * The log of refused calls (table rate_limit_breaches), newest first. Each account keeps about its newest
 * `retention` rows: one insert in 16 (by row id) deletes the account's rows older than those, by the
 * (account_id, id) index, so a flood of 429s costs one small insert each and an occasional delete.
 */
export class BreachLog {
  constructor(private readonly deps: { db: Database; retention: number }) {}

  async record(accountId: string, breach: Omit<RateLimitBreach, 'at'>): Promise<void> {
    const { db, retention } = this.deps;
    const inserted = await db
      .insertInto('rate_limit_breaches')
      .values({
        account_id: accountId,
        api_key_id: breach.apiKeyId,
        model_id: breach.modelId,
        tier: breach.tier,
        limit_type: breach.type,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    // Rows older than the oldest one kept go; the subquery walks the index newest first.
    const oldestKept = db
      .selectFrom('rate_limit_breaches')
      .select('id')
      .where('account_id', '=', accountId)
      .orderBy('id', 'desc')
      .offset(retention - 1)
      .limit(1);
    if (inserted.id % 16n === 0n)
      await db
        .deleteFrom('rate_limit_breaches')
        .where('account_id', '=', accountId)
        .where('id', '<', oldestKept)
        .execute();
  }

  async recent(accountId: string, limit: number): Promise<RateLimitBreach[]> {
    const rows = await this.deps.db
      .selectFrom('rate_limit_breaches')
      .select(['api_key_id', 'model_id', 'tier', 'limit_type', 'created_at'])
      .where('account_id', '=', accountId)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      apiKeyId: row.api_key_id,
      modelId: row.model_id,
      tier: row.tier,
      type: row.limit_type as RateLimitType,
      at: row.created_at,
    }));
  }
}
