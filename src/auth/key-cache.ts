import type { AuthenticatedKey } from './auth-context.ts';

/** One invalidation, as it travels between processes. */
export type KeyInvalidation = { readonly hash: string } | { readonly keyId: string };

interface Entry {
  readonly key: AuthenticatedKey | null;
  readonly at: number;
  readonly until: number;
}

/**
 * Short-lived cache of key lookups by secret hash, so a request does not hit the database to authenticate.
 * Unknown hashes are remembered briefly too (a flood of bad keys should not become a flood of queries).
 * Revocation and edits drop the entry at once in this process, and in every other process through `broadcast`
 * (the event bus: Redis pub/sub with REDIS_URL), so a revoked key stops working everywhere, not after the TTL.
 * While those broadcasts cannot be heard, `limitAge` shortens every entry's life (see key-cache-sync.ts).
 */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  /** Entries older than this are not used (set while invalidations from other processes may be missed). */
  private maxAgeMs: number | undefined;
  /** Tells the other processes; set by whoever wires the cache to the event bus. */
  broadcast: ((invalidation: KeyInvalidation) => void) | undefined;
  /** Hears of every edited or deleted key, here or in another process (balance leases of the key end). */
  onKeyChanged: ((keyId: string) => void) | undefined;

  constructor(
    private readonly ttlMs: number,
    private readonly negativeTtlMs = Math.min(ttlMs, 5_000),
    private readonly maxEntries = 50_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** undefined: not cached; null: cached as unknown. */
  get(hash: string): AuthenticatedKey | null | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    const now = this.now();
    if (entry.until <= now || (this.maxAgeMs !== undefined && now - entry.at >= this.maxAgeMs)) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.key;
  }

  set(hash: string, key: AuthenticatedKey | null): void {
    if (this.ttlMs <= 0) return;
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    const now = this.now();
    this.entries.set(hash, { key, at: now, until: now + (key ? this.ttlMs : this.negativeTtlMs) });
  }

  /** Uses entries only while younger than `maxAgeMs` (undefined: the normal TTLs alone). */
  limitAge(maxAgeMs: number | undefined): void {
    this.maxAgeMs = maxAgeMs;
  }

  /**
   * Forgets every entry, and tells `onKeyChanged` of every key it held: invalidations may have been missed, so
   * anything decided from a cached key (a balance lease and its limits) is decided afresh.
   */
  clear(): void {
    const keyIds = new Set<string>();
    for (const entry of this.entries.values()) if (entry.key) keyIds.add(entry.key.id);
    this.entries.clear();
    for (const keyId of keyIds) this.onKeyChanged?.(keyId);
  }

  invalidate(hash: string): void {
    this.entries.delete(hash);
    this.broadcast?.({ hash });
  }

  invalidateKeyId(keyId: string): void {
    this.dropKeyId(keyId);
    this.broadcast?.({ keyId });
  }

  /** An invalidation another process broadcast (applied here only, never sent on). */
  apply(invalidation: KeyInvalidation): void {
    if ('hash' in invalidation) this.entries.delete(invalidation.hash);
    else this.dropKeyId(invalidation.keyId);
  }

  private dropKeyId(keyId: string): void {
    this.onKeyChanged?.(keyId);
    for (const [hash, entry] of this.entries) if (entry.key?.id === keyId) this.entries.delete(hash);
  }
}
