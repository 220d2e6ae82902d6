import type { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  type RateLimiterAbstract,
  type RateLimiterRes,
} from 'rate-limiter-flexible';
import { keyOf, type AccountAuthContext } from '../auth/auth-context.ts';
import { RateLimitedError, type ErrorData, type RateWindow } from '../errors.ts';
import { closeRedisClient } from '../events/redis.ts';
import type { Logger } from '../logger.ts';
import type { BillingMetrics } from '../observability/app-metrics.ts';
import type { BreachLog } from './breach-log.ts';
import {
  effectiveLimits,
  RATE_LIMIT_TIER,
  type LimitedModel,
  type RateLimitsConfig,
  type RateLimitType,
} from './limits.ts';

export type { LimitedModel } from './limits.ts';

/** An admitted call: the state of its windows (for the x-ratelimit-* headers) and the tokens it used afterwards. */
export interface Admission {
  readonly requests: RateWindow;
  readonly tokens: RateWindow | undefined;
  /**
   * Counts tokens against TPM after the call (a completion; or the difference between a prompt's estimate and its
   * count, taken back when negative); never refuses, never throws.
   */
  recordTokens(tokens: number): void;
}

/** 429 RATE_LIMIT_EXCEEDED naming the limit; X-RateLimit-* and x-ratelimit-*-requests|tokens come from its data. */
export class RateLimitExceededError extends RateLimitedError {
  constructor(
    readonly type: RateLimitType,
    readonly modelId: string,
    readonly window: RateWindow,
    readonly windows: { readonly requests?: RateWindow; readonly tokens?: RateWindow },
  ) {
    super(
      `Rate limit exceeded: ${window.limit} ${DESCRIPTION[type]} for model ${modelId}; retry after ${window.resetAt.toISOString()}`,
      Math.max(1, Math.ceil((window.resetAt.getTime() - Date.now()) / 1000)),
    );
  }

  override data(): ErrorData {
    return { ...super.data(), rateLimit: this.window, rateWindows: this.windows };
  }
}

const DESCRIPTION: Readonly<Record<RateLimitType, string>> = {
  RPM: 'requests per minute',
  RPD: 'requests per day',
  TPM: 'tokens per minute',
};
const WINDOW_SECONDS: Readonly<Record<RateLimitType, number>> = { RPM: 60, RPD: 86_400, TPM: 60 };

/**
 * Per-key, per-model rate limits (limits.ts), counted in fixed windows by rate-limiter-flexible: in Redis with
 * REDIS_URL (one atomic INCR per counter, shared by every process), else in this process. Each counter's limiter
 * never refuses by itself (its ceiling is unreachable): the limit is compared here, so a key's new override applies
 * to the running windows at once. A refused call is taken back from every counter that had admitted it, is
 * logged to the breach log and never reaches billing. If Redis fails, each process counts alone (logged once).
 */
export class RateLimiter {
  private readonly counters: Readonly<Record<RateLimitType, RateLimiterAbstract>>;
  /**
   * Each request's latest admission, by its auth context (one object per request): the REST pipeline reads it for
   * the x-ratelimit-* headers of any limited route's answer, with no plumbing through each service's result.
   */
  private readonly admissions = new WeakMap<AccountAuthContext, Admission>();
  private redisFailureLogged = false;

  constructor(
    private readonly deps: {
      config: RateLimitsConfig;
      log: BreachLog;
      logger: Logger;
      redis?: Redis | undefined;
      now?: () => number;
      /** Counts each refusal by its code (the app's metrics). */
      metrics?: Pick<BillingMetrics, 'observeRefusal'> | undefined;
    },
  ) {
    const counter = (type: RateLimitType): RateLimiterAbstract => {
      const options = {
        points: Number.MAX_SAFE_INTEGER,
        duration: WINDOW_SECONDS[type],
        keyPrefix: `lagoon:rl:${type}`,
      };
      if (!deps.redis) return new RateLimiterMemory(options);
      return new RateLimiterRedis({
        ...options,
        storeClient: deps.redis,
        insuranceLimiter: new RateLimiterMemory(options),
      });
    };
    this.counters = { RPM: counter('RPM'), RPD: counter('RPD'), TPM: counter('TPM') };
  }

  /** The limits of the caller's key on `model` (for GET /api_keys/rate_limits). */
  limitsOf(auth: AccountAuthContext, model: LimitedModel) {
    return effectiveLimits(this.deps.config, model, keyOf(auth)?.rateLimits ?? null);
  }

  /**
   * Counts one call of the caller's key to `model`, with `promptTokens` against TPM, or throws
   * RateLimitExceededError (logged). Call it before anything is reserved: a refused call is never charged.
   */
  async admit(auth: AccountAuthContext, model: LimitedModel, promptTokens = 0): Promise<Admission> {
    const limits = this.limitsOf(auth, model);
    // A wallet is counted like a key of its own (it has no key).
    const key = `${keyOf(auth)?.id ?? `wallet:${auth.accountId}`}:${model.id}`;
    const tokens = Math.max(0, Math.ceil(promptTokens));
    const [rpm, rpd, tpm] = await Promise.all([
      this.counters.RPM.consume(key, 1),
      this.counters.RPD.consume(key, 1),
      limits.tpm === null ? undefined : this.counters.TPM.consume(key, Math.max(1, tokens)),
    ]);
    const now = this.deps.now?.() ?? Date.now();
    const windowOf = (res: RateLimiterRes, limit: number): RateWindow => ({
      limit,
      remaining: Math.max(0, limit - res.consumedPoints),
      resetAt: new Date(now + res.msBeforeNext),
    });
    const requests = windowOf(rpm, limits.rpm);
    const tokenWindow = tpm && limits.tpm !== null ? windowOf(tpm, limits.tpm) : undefined;
    const refused: [RateLimitType, RateWindow] | undefined =
      rpm.consumedPoints > limits.rpm
        ? ['RPM', requests]
        : rpd.consumedPoints > limits.rpd
          ? ['RPD', windowOf(rpd, limits.rpd)]
          : tokenWindow && tpm && tpm.consumedPoints > tokenWindow.limit
            ? ['TPM', tokenWindow]
            : undefined;
    if (!refused) {
      const admission = {
        requests,
        tokens: tokenWindow,
        recordTokens: (used: number) => this.addTokens(key, limits.tpm, used),
      };
      this.admissions.set(auth, admission);
      return admission;
    }

    // Taken back from every counter, the refused one too (which leaves it at its limit): a refused call uses nothing.
    await Promise.all([
      this.give(this.counters.RPM, key, 1),
      this.give(this.counters.RPD, key, 1),
      tpm ? this.give(this.counters.TPM, key, Math.max(1, tokens)) : undefined,
    ]);
    const [type, window] = refused;
    this.deps.metrics?.observeRefusal('RATE_LIMIT_EXCEEDED');
    try {
      await this.deps.log.record(auth.accountId, {
        apiKeyId: keyOf(auth)?.id ?? null,
        modelId: model.id,
        tier: RATE_LIMIT_TIER,
        type,
      });
    } catch (error) {
      this.deps.logger.warn({ err: error, reqId: auth.requestId }, 'rate-limit breach not logged');
    }
    throw new RateLimitExceededError(type, model.id, window, { requests, ...(tokenWindow && { tokens: tokenWindow }) });
  }

  /** The windows the request of `auth` was last admitted in (undefined when it made no limited call). */
  admissionOf(auth: AccountAuthContext): Admission | undefined {
    return this.admissions.get(auth);
  }

  /** The account's newest breaches (GET /api_keys/rate_limits/log). */
  recentBreaches(auth: AccountAuthContext, limit = 50) {
    return this.deps.log.recent(auth.accountId, limit);
  }

  /** Also closes the Redis client: the limiter owns its own. */
  async close(): Promise<void> {
    if (this.deps.redis) await closeRedisClient(this.deps.redis);
  }

  private addTokens(key: string, limit: number | null, used: number): void {
    if (limit === null || !Number.isFinite(used) || used === 0) return;
    const counted =
      used > 0 ? this.counters.TPM.penalty(key, Math.ceil(used)) : this.counters.TPM.reward(key, Math.floor(-used));
    counted.catch((error: unknown) => this.redisFailed(error));
  }

  private async give(counter: RateLimiterAbstract, key: string, points: number): Promise<void> {
    await counter.reward(key, points).catch((error: unknown) => this.redisFailed(error));
  }

  private redisFailed(error: unknown): void {
    if (this.redisFailureLogged) return;
    this.redisFailureLogged = true;
    this.deps.logger.warn({ err: error }, 'rate-limit counter update failed; counts may be off until the window ends');
  }
}
