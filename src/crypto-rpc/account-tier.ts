import type { Database } from '../db/database.ts';
import type { RpcTier } from './caps.ts';

/**
 * The caps tier of each account (accounts.rpc_tier), cached briefly in the process: it is read on every proxied
 * request and changes only when the operator sets it (another process sees a change within `ttlMs`).
 */
export class AccountTiers {
  private readonly cache = new Map<string, { tier: RpcTier; until: number }>();

  constructor(private readonly deps: { db: Database; ttlMs: number; now?: () => number }) {}

  async get(accountId: string): Promise<RpcTier> {
    const now = this.deps.now?.() ?? Date.now();
    const cached = this.cache.get(accountId);
    if (cached && cached.until > now) return cached.tier;
    const row = await this.deps.db
      .selectFrom('accounts')
      .select('rpc_tier')
      .where('id', '=', accountId)
      .executeTakeFirst();
    const tier: RpcTier = row?.rpc_tier === 'staff' ? 'staff' : 'standard';
    if (this.cache.size > 50_000) this.cache.clear();
    this.cache.set(accountId, { tier, until: now + this.deps.ttlMs });
    return tier;
  }

  /** Stores a tier; false when the account does not exist. */
  async set(accountId: string, tier: RpcTier): Promise<boolean> {
    const result = await this.deps.db
      .updateTable('accounts')
      .set({ rpc_tier: tier })
      .where('id', '=', accountId)
      .executeTakeFirst();
    this.cache.delete(accountId);
    return result.numUpdatedRows > 0n;
  }
}
