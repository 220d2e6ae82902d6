import type { Redis } from 'ioredis';
import { closeRedisClient } from '../events/redis.ts';
import type { Logger } from '../logger.ts';

/**
 * A cache of computed results with a time to live: an in-process LRU by default, Redis (shared by every
 * process) when REDIS_URL is set. A failing Redis is a cache miss, never a failed request.
 */
export interface ResultCache<T> {
  readonly kind: 'memory' | 'redis';
  get(key: string): Promise<T | undefined>;
  set(key: string, value: T, ttlMs: number): Promise<void>;
  /** Forgets every entry (operations, benchmarks). */
  clear(): Promise<void>;
  close(): Promise<void>;
}

export class MemoryResultCache<T> implements ResultCache<T> {
  readonly kind = 'memory' as const;
  private readonly entries = new Map<string, { value: T; expiresAt: number }>();

  constructor(private readonly options: { maxEntries: number; now?: () => number }) {}

  async get(key: string): Promise<T | undefined> {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    this.entries.delete(key);
    if (hit.expiresAt <= this.now()) return undefined;
    this.entries.set(key, hit); // most recently used last
    return hit.value;
  }

  async set(key: string, value: T, ttlMs: number): Promise<void> {
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
    while (this.entries.size > this.options.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }

  async clear(): Promise<void> {
    this.entries.clear();
  }

  async close(): Promise<void> {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

/** JSON with bigints kept exact (as {"$bigint": "<digits>"}). */
export const bigintJson = {
  stringify: (value: unknown): string =>
    JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? { $bigint: v.toString() } : v)),
  parse: (text: string): unknown =>
    JSON.parse(text, (_key, v: unknown) => {
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
        const digits = (v as { $bigint?: unknown }).$bigint;
        if (typeof digits === 'string' && Object.keys(v).length === 1) return BigInt(digits);
      }
      return v;
    }),
};

export class RedisResultCache<T> implements ResultCache<T> {
  readonly kind = 'redis' as const;

  constructor(
    private readonly deps: { client: Redis; prefix: string; logger: Logger; decode: (value: unknown) => T },
  ) {}

  async get(key: string): Promise<T | undefined> {
    try {
      const text = await this.deps.client.get(this.deps.prefix + key);
      return text === null ? undefined : this.deps.decode(bigintJson.parse(text));
    } catch (error) {
      this.deps.logger.warn({ err: error, key }, 'cache read failed; computing instead');
      return undefined;
    }
  }

  async set(key: string, value: T, ttlMs: number): Promise<void> {
    try {
      await this.deps.client.set(this.deps.prefix + key, bigintJson.stringify(value), 'PX', ttlMs);
    } catch (error) {
      this.deps.logger.warn({ err: error, key }, 'cache write failed');
    }
  }

  async clear(): Promise<void> {
    let cursor = '0';
    do {
      const [next, keys] = await this.deps.client.scan(cursor, 'MATCH', `${this.deps.prefix}*`, 'COUNT', 500);
      if (keys.length > 0) await this.deps.client.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  }

  async close(): Promise<void> {
    await closeRedisClient(this.deps.client);
  }
}
