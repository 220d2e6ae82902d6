import type { AuthenticatedKey } from './auth-context.ts';

/** One invalidation, as it travels between processes. */
export type KeyInvalidation = { readonly hash: string } | { readonly keyId: string };

interface Entry {
  readonly key: AuthenticatedKey | null;
  readonly at: number;
  readonly until: number;
}

/**
 * How a cache hears of other processes' invalidations and tells them of its own (key-cache-sync.ts: the event bus).
 * The cache attaches itself when it is built; the channel may then limit its entries' age and clear it while
 * invalidations may be missed.
 */
export interface KeyInvalidationChannel {
  publish(invalidation: KeyInvalidation): void;
  attach(cache: KeyCache): void;
}

export interface KeyCacheOptions {
  readonly ttlMs: number;
  /** How long an unknown hash is remembered (default: the TTL, at most 5 s). */
  readonly negativeTtlMs?: number;
  readonly maxEntries?: number;
  readonly now?: () => number;
  /** Other processes (none: this process is alone, as without REDIS_URL). */
  readonly channel?: KeyInvalidationChannel | undefined;
  /** Hears of every edited or deleted key, here or in another process (balance leases of the key end). */
  readonly onKeyChanged?: ((keyId: string) => void) | undefined;
}

/**
 * Short-lived cache of key lookups by secret hash, so a request does not hit the database to authenticate.
 * Unknown hashes are remembered briefly too (a flood of bad keys should not become a flood of queries).
 * Revocation and edits drop the entry at once in this process, and in every other process through `broadcast`
 * (its channel: Redis pub/sub with REDIS_URL), so a revoked key stops working everywhere, not after the TTL.
 * While those broadcasts cannot be heard, `limitAge` shortens every entry's life (see key-cache-sync.ts).
 */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  /** Entries older than this are not used (set while invalidations from other processes may be missed). */
  private maxAgeMs: number | undefined;
  private readonly ttlMs: number;
  private readonly negativeTtlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  private readonly channel: KeyInvalidationChannel | undefined;
  private readonly onKeyChanged: ((keyId: string) => void) | undefined;

  constructor(options: KeyCacheOptions) {
    this.ttlMs = options.ttlMs;
    this.negativeTtlMs = options.negativeTtlMs ?? Math.min(options.ttlMs, 5_000);
    this.maxEntries = options.maxEntries ?? 50_000;
    this.now = options.now ?? Date.now;
    this.channel = options.channel;
    this.onKeyChanged = options.onKeyChanged;
    this.channel?.attach(this);
  }

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
    this.channel?.publish({ hash });
  }

  invalidateKeyId(keyId: string): void {
    this.dropKeyId(keyId);
    this.channel?.publish({ keyId });
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
