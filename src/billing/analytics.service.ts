import type { AuthContext } from '../auth/auth-context.ts';
import { requireAdmin, requireOperator } from '../auth/permissions.ts';
import { MemoryResultCache, RedisResultCache, type ResultCache } from '../cache/result-cache.ts';
import type { Database } from '../db/database.ts';
import { createRedisClient } from '../events/redis.ts';
import type { Logger } from '../logger.ts';
import { parseInput } from '../validation.ts';
import { assembleAnalytics, type AnalyticsRange } from './analytics.assemble.ts';
import * as repo from './analytics.repository.ts';
import type { AccountScope } from './analytics.repository.ts';
import type { UsageAnalytics } from './analytics.types.ts';
import { UsageAnalyticsQuery } from './usage.inputs.ts';
import type { SettledCharges } from './usage.types.ts';

/** Analytics answers are cached for 10 minutes (docs/api.md, Billing reads). */
export const ANALYTICS_CACHE_TTL_MS = 10 * 60_000;
const DAY_MS = 86_400_000;

/**
 * Usage analytics of the caller's account (ADMIN keys only), computed from the daily rollups and cached per
 * (account, resolved range) for 10 minutes: in-process, or in Redis shared by every process. An entry is never
 * served after its 10 minutes, and a new day is a new range, so fresh charges show up within 10 minutes.
 * Concurrent identical requests in one process share one computation.
 */
export class AnalyticsService {
  private readonly inFlight = new Map<string, Promise<UsageAnalytics>>();

  constructor(
    private readonly deps: {
      db: Database;
      cache: ResultCache<UsageAnalytics>;
      ttlMs?: number;
      now?: () => Date;
      settled?: SettledCharges;
    },
  ) {}

  get cacheKind(): ResultCache<UsageAnalytics>['kind'] {
    return this.deps.cache.kind;
  }

  async analytics(auth: AuthContext, input: unknown): Promise<UsageAnalytics> {
    const { accountId } = requireAdmin(auth);
    return this.analyticsOf(accountId, input);
  }

  /** The same analytics summed over every account (the operator's view). */
  async analyticsOfAllAccounts(auth: AuthContext, input: unknown): Promise<UsageAnalytics> {
    requireOperator(auth);
    return this.analyticsOf(null, input);
  }

  private async analyticsOf(accountId: AccountScope, input: unknown): Promise<UsageAnalytics> {
    const range = resolveRange(parseInput(UsageAnalyticsQuery, input ?? {}), (this.deps.now ?? (() => new Date()))());
    const key = `${accountId ?? '*'}:${range.lookback}:${range.startDay}:${range.endDay}`;
    const cached = await this.deps.cache.get(key);
    if (cached) return cached;
    const running = this.inFlight.get(key);
    if (running) return running;
    const computing = (async () => {
      await this.deps.settled?.flush(accountId ?? undefined);
      const result = await this.compute(accountId, range);
      await this.deps.cache.set(key, result, this.deps.ttlMs ?? ANALYTICS_CACHE_TTL_MS);
      return result;
    })().finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, computing);
    return computing;
  }

  /** Forgets every cached result (operations and benchmarks; the TTL does this on its own). */
  clearCache(): Promise<void> {
    return this.deps.cache.clear();
  }

  close(): Promise<void> {
    return this.deps.cache.close();
  }

  private async compute(accountId: AccountScope, range: AnalyticsRange): Promise<UsageAnalytics> {
    const { db } = this.deps;
    const { startDay, endDay } = range;
    const [totals, days, daily] = await Promise.all([
      repo.totals(db, accountId, startDay, endDay),
      repo.dayTotals(db, accountId, startDay, endDay),
      repo.dailySpend(db, accountId, startDay, endDay),
    ]);
    const keyIds = totals.keys.map((row) => row.apiKeyId).filter((id) => id !== '');
    const keyLabels = await repo.keyLabels(db, accountId, [...new Set(keyIds)]);
    return assembleAnalytics(range, {
      models: totals.models,
      keys: totals.keys,
      days,
      dailyModels: daily.models,
      dailyKeys: daily.keys,
      keyLabels,
    });
  }
}

/** `Nd` = the N UTC days up to and including today; `startDate:endDate` = those days inclusive; default 7d. */
export function resolveRange(query: UsageAnalyticsQuery, now: Date): AnalyticsRange {
  if (query.startDate && query.endDate)
    return { lookback: `${query.startDate}:${query.endDate}`, startDay: query.startDate, endDay: query.endDate };
  const lookback = query.lookback ?? '7d';
  const days = Number(lookback.slice(0, -1));
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return {
    lookback,
    startDay: new Date(today - (days - 1) * DAY_MS).toISOString().slice(0, 10),
    endDay: new Date(today).toISOString().slice(0, 10),
  };
}

/** The analytics cache: Redis under `lagoon:analytics:` when REDIS_URL is set, else an in-process LRU (256 results). */
export function createAnalyticsCache(options: {
  redisUrl?: string | undefined;
  redisTimeoutMs?: number | undefined;
  logger: Logger;
  now?: () => number;
}): ResultCache<UsageAnalytics> {
  if (!options.redisUrl)
    return new MemoryResultCache<UsageAnalytics>({ maxEntries: 256, ...(options.now && { now: options.now }) });
  const client = createRedisClient(options.redisUrl, options.logger, 'cache', {
    commandTimeoutMs: options.redisTimeoutMs,
  });
  return new RedisResultCache<UsageAnalytics>({
    client,
    prefix: 'lagoon:analytics:',
    logger: options.logger,
    decode: (value) => value as UsageAnalytics,
  });
}
