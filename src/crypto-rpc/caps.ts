import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { RateLimitedError, type ErrorData } from '../errors.ts';
import { closeRedisClient } from '../events/redis.ts';
import type { Logger } from '../logger.ts';
import { MemoryCreditWindow, RedisCreditWindow, type CreditWindow } from './credit-window.ts';

export const RPC_TIERS = ['standard', 'staff'] as const;
export type RpcTier = (typeof RPC_TIERS)[number];

export interface CapLimits {
  readonly requestsPerMinute: number;
  readonly creditsPer24h: number;
}

/** Default caps: 100 requests per minute and 10M credits per rolling 24 h; the staff tier 1000 and 100M. */
export const DEFAULT_CAPS: Readonly<Record<RpcTier, CapLimits>> = {
  standard: { requestsPerMinute: 100, creditsPer24h: 10_000_000 },
  staff: { requestsPerMinute: 1000, creditsPer24h: 100_000_000 },
};

export type CapName = 'requests-per-minute' | 'credits-per-24h';

/** 429 with a `customMessage` naming the cap (clients show it), and what the X-RateLimit-* headers say. */
export class RpcCapExceededError extends RateLimitedError {
  constructor(
    readonly cap: CapName,
    readonly limit: number,
    readonly remaining: number,
    readonly resetAt: Date,
    readonly customMessage: string,
  ) {
    super(
      cap === 'requests-per-minute'
        ? `Rate limit exceeded: ${limit} crypto RPC requests per minute`
        : `Rate limit exceeded: ${limit} crypto RPC credits per rolling 24 hours`,
      Math.max(1, Math.ceil((resetAt.getTime() - Date.now()) / 1000)),
    );
  }

  override extra(): Record<string, unknown> {
    return { customMessage: this.customMessage };
  }

  override data(): ErrorData {
    return { ...super.data(), rateLimit: { limit: this.limit, remaining: this.remaining, resetAt: this.resetAt } };
  }
}

/** Credits held against the 24 h cap by one request; settled to the actual amount once the node answered. */
export interface CreditHold {
  readonly accountId: string;
  readonly credits: number;
  readonly bucket: number;
}

/**
 * Per-account caps of the crypto proxy: requests per minute (rate-limiter-flexible, Redis or memory) and credits
 * per rolling 24 hours (credit-window.ts). Both are checked before anything is forwarded or charged; a refused
 * request takes no credits. With REDIS_URL the counters are shared by every process; if Redis fails, each
 * process falls back to its own counters (logged) rather than refusing service.
 */
export class RpcCaps {
  private readonly perMinute: Record<RpcTier, RateLimiterAbstract>;
  private readonly credits: CreditWindow;
  private readonly localCredits = new MemoryCreditWindow();
  private redisFailureLogged = false;

  constructor(
    private readonly deps: {
      limits: Readonly<Record<RpcTier, CapLimits>>;
      redis?: Redis | undefined;
      logger: Logger;
      now?: () => number;
    },
  ) {
    const limiter = (tier: RpcTier): RateLimiterAbstract => {
      const options = {
        points: deps.limits[tier].requestsPerMinute,
        duration: 60,
        keyPrefix: `lagoon:rpc:rpm:${tier}`,
      };
      if (!deps.redis) return new RateLimiterMemory(options);
      return new RateLimiterRedis({
        ...options,
        storeClient: deps.redis,
        insuranceLimiter: new RateLimiterMemory(options),
      });
    };
    this.perMinute = { standard: limiter('standard'), staff: limiter('staff') };
    this.credits = deps.redis ? new RedisCreditWindow(deps.redis) : this.localCredits;
  }

  /** Counts one request and holds `credits` against the 24 h cap, or throws RpcCapExceededError. */
  async admit(accountId: string, tier: RpcTier, credits: number): Promise<CreditHold> {
    const limits = this.deps.limits[tier];
    const now = this.deps.now?.() ?? Date.now();
    try {
      await this.perMinute[tier].consume(accountId, 1);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      const resetAt = new Date(now + rejection.msBeforeNext);
      throw new RpcCapExceededError(
        'requests-per-minute',
        limits.requestsPerMinute,
        0,
        resetAt,
        `This account may send ${limits.requestsPerMinute} crypto RPC requests per minute (${tier} tier); the count resets at ${resetAt.toISOString()}.`,
      );
    }
    const result = await this.withFallback((window) => window.tryAdd(accountId, credits, limits.creditsPer24h, now));
    if (!result.admitted) {
      const remaining = Math.max(0, limits.creditsPer24h - result.used);
      throw new RpcCapExceededError(
        'credits-per-24h',
        limits.creditsPer24h,
        remaining,
        new Date(result.nextShiftMs),
        `This account may spend ${limits.creditsPer24h} crypto RPC credits per rolling 24 hours (${tier} tier): ${result.used} are spent and this request needs up to ${credits}.`,
      );
    }
    return { accountId, credits, bucket: result.bucket };
  }

  /** Keeps `actualCredits` of a hold (0: the request was not served) and gives the rest back. */
  async settle(hold: CreditHold, actualCredits: number): Promise<void> {
    const refund = hold.credits - Math.max(0, actualCredits);
    if (refund <= 0) return;
    await this.withFallback((window) => window.remove(hold.accountId, hold.bucket, refund));
  }

  /** Also closes the Redis client: the caps own theirs. */
  async close(): Promise<void> {
    await this.localCredits.close();
    if (this.deps.redis) await closeRedisClient(this.deps.redis);
  }

  private async withFallback<T>(operation: (window: CreditWindow) => Promise<T>): Promise<T> {
    if (this.credits === this.localCredits) return operation(this.localCredits);
    try {
      return await operation(this.credits);
    } catch (error) {
      if (!this.redisFailureLogged)
        this.deps.logger.warn(
          { err: error },
          'Redis unavailable for the crypto RPC credit cap; counting in this process',
        );
      this.redisFailureLogged = true;
      return operation(this.localCredits);
    }
  }
}
