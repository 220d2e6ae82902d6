import type { Database } from '../db/database.ts';
import { createRedisClient } from '../events/redis.ts';
import type { Logger } from '../logger.ts';
import type { BillingMetrics } from '../observability/app-metrics.ts';
import { BreachLog } from './breach-log.ts';
import { DEFAULT_RATE_LIMITS, type RateLimitsConfig } from './limits.ts';
import { RateLimiter } from './rate-limiter.ts';

/** The per-key rate limiter: counters in Redis with REDIS_URL (a client of its own), else in this process. */
export function createRateLimiter(deps: {
  db: Database;
  logger: Logger;
  config: RateLimitsConfig | undefined;
  redisUrl: string | undefined;
  redisTimeoutMs?: number | undefined;
  metrics?: Pick<BillingMetrics, 'observeRefusal'> | undefined;
}): RateLimiter {
  const config = deps.config ?? DEFAULT_RATE_LIMITS;
  const redis = deps.redisUrl
    ? createRedisClient(deps.redisUrl, deps.logger, 'rate-limits', { commandTimeoutMs: deps.redisTimeoutMs })
    : undefined;
  return new RateLimiter({
    config,
    log: new BreachLog({ db: deps.db, retention: config.logRetention }),
    logger: deps.logger,
    redis,
    metrics: deps.metrics,
  });
}
