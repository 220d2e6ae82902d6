import { formatNano } from '../../src/billing/money.ts';
import type { RateLimitBreach } from '../../src/rate-limits/breach-log.ts';
import type { RateLimitStatus } from '../../src/rate-limits/rate-limit-status.ts';
import { RateLimitExceededError } from '../../src/rate-limits/rate-limiter.ts';
import { builder } from '../builder.ts';
import { ErrorInterface } from '../errors.ts';

/* The per-key rate limits (REST GET /api_keys/rate_limits and its log), and the error a refused call gets. */

type ModelLimits = RateLimitStatus['models'][number];
type Limit = ModelLimits['limits'][number];

const RateLimitRef = builder.objectRef<Limit>('RateLimit').implement({
  fields: (t) => ({
    type: t.string({ description: 'RPM, RPD or TPM', resolve: (limit) => limit.type }),
    amount: t.exposeInt('amount'),
  }),
});

const ModelRateLimitsRef = builder.objectRef<ModelLimits>('ModelRateLimits').implement({
  fields: (t) => ({
    modelId: t.exposeString('modelId'),
    rateLimits: t.field({ type: [RateLimitRef], resolve: (model) => [...model.limits] }),
  }),
});

const RateLimitStatusRef = builder.objectRef<RateLimitStatus>('RateLimitStatus').implement({
  fields: (t) => ({
    accessPermitted: t.exposeBoolean('accessPermitted'),
    tierId: t.string({ resolve: (status) => status.tier.id }),
    tierIsCharged: t.boolean({ resolve: (status) => status.tier.isCharged }),
    balanceUsd: t.field({ type: 'Decimal', resolve: (status) => formatNano(status.balances.usd) }),
    balanceDiem: t.field({ type: 'Decimal', resolve: (status) => formatNano(status.balances.diem) }),
    keyExpiration: t.field({ type: 'DateTime', nullable: true, resolve: (status) => status.keyExpiration }),
    nextEpochBegins: t.field({ type: 'DateTime', resolve: (status) => status.nextEpochBegins }),
    models: t.field({ type: [ModelRateLimitsRef], resolve: (status) => [...status.models] }),
  }),
});

const RateLimitBreachRef = builder.objectRef<RateLimitBreach>('RateLimitBreach').implement({
  fields: (t) => ({
    apiKeyId: t.string({ nullable: true, resolve: (breach) => breach.apiKeyId }),
    modelId: t.exposeString('modelId'),
    tier: t.exposeString('tier'),
    type: t.string({ description: 'RPM, RPD or TPM', resolve: (breach) => breach.type }),
    timestamp: t.field({ type: 'DateTime', resolve: (breach) => breach.at }),
  }),
});

builder.objectType(RateLimitExceededError, {
  name: 'RateLimitExceededError',
  description: 'A per-key rate limit is reached (REST 429); nothing was reserved or charged.',
  interfaces: [ErrorInterface],
  isTypeOf: (value) => value instanceof RateLimitExceededError,
  fields: (t) => ({
    type: t.string({ description: 'RPM, RPD or TPM', resolve: (error) => error.type }),
    modelId: t.exposeString('modelId'),
    limit: t.int({ resolve: (error) => error.window.limit }),
    remaining: t.int({ resolve: (error) => error.window.remaining }),
    resetAt: t.field({ type: 'DateTime', resolve: (error) => error.window.resetAt }),
  }),
});

builder.queryFields((t) => ({
  rateLimits: t.field({
    type: RateLimitStatusRef,
    description: 'The calling key’s tier, balances and rate limits on every model (any key type).',
    authScopes: { account: true },
    resolve: (_root, _args, context) => context.services.rateLimits.status(context.auth),
  }),
  rateLimitLog: t.field({
    type: [RateLimitBreachRef],
    description: 'The account’s 50 most recent rate-limit breaches, newest first (any key type).',
    authScopes: { account: true },
    resolve: (_root, _args, context) => context.services.rateLimits.log(context.auth),
  }),
}));
