import { z } from 'zod';
import { nanoToNumber } from '../../src/billing/money.ts';
import { RATE_LIMIT_TYPES } from '../../src/rate-limits/limits.ts';
import { iso, json } from '../http.ts';
import type { Route } from '../router.ts';

/*
 * GET /api_keys/rate_limits and /api_keys/rate_limits/log (docs/api.md, Rate limits). Literal paths: the router
 * matches them before /api_keys/:id. Any key type may call them.
 */

const tags = ['API keys'];

const RateLimitsWire = z.object({
  data: z.object({
    accessPermitted: z.boolean(),
    apiTier: z.object({ id: z.string(), isCharged: z.boolean() }),
    balances: z.object({ USD: z.number().optional(), DIEM: z.number().optional() }),
    keyExpiration: z.iso.datetime().nullable(),
    nextEpochBegins: z.iso.datetime(),
    rateLimits: z.array(
      z.object({
        apiModelId: z.string().optional(),
        rateLimits: z.array(z.object({ amount: z.number(), type: z.enum(RATE_LIMIT_TYPES) })),
      }),
    ),
  }),
});

const BREACH_TYPES = [...RATE_LIMIT_TYPES, 'FAILED_REQUESTS', 'UNSUPPORTED_FEATURE_REQUESTS'] as const;
const RateLimitLogWire = z.strictObject({
  object: z.literal('list'),
  data: z.array(
    z.strictObject({
      apiKeyId: z.string(),
      modelId: z.string(),
      rateLimitTier: z.string(),
      rateLimitType: z.enum(BREACH_TYPES),
      timestamp: z.iso.datetime(),
    }),
  ),
});

export const rateLimitRoutes: Route[] = [
  {
    method: 'GET',
    path: '/api_keys/rate_limits',
    access: 'account',
    doc: {
      summary: 'The calling key’s tier, balances and rate limits (RPM, RPD, TPM) on every model',
      tags,
      response: RateLimitsWire,
    },
    async handler({ services, auth }) {
      const status = await services.rateLimits.status(auth);
      return json({
        data: {
          accessPermitted: status.accessPermitted,
          apiTier: status.tier,
          balances: { USD: nanoToNumber(status.balances.usd), DIEM: nanoToNumber(status.balances.diem) },
          keyExpiration: iso(status.keyExpiration),
          nextEpochBegins: status.nextEpochBegins.toISOString(),
          rateLimits: status.models.map((model) => ({
            apiModelId: model.modelId,
            rateLimits: model.limits.map((limit) => ({ amount: limit.amount, type: limit.type })),
          })),
        },
      });
    },
  },
  {
    method: 'GET',
    path: '/api_keys/rate_limits/log',
    access: 'account',
    doc: {
      summary: 'The account’s 50 most recent rate-limit breaches, newest first',
      tags,
      response: RateLimitLogWire,
    },
    async handler({ services, auth }) {
      const breaches = await services.rateLimits.log(auth);
      return json({
        object: 'list',
        data: breaches.map((breach) => ({
          // Revoked keys keep their row and id; the id is empty only if the key's row was deleted outright.
          apiKeyId: breach.apiKeyId ?? '',
          modelId: breach.modelId,
          rateLimitTier: breach.tier,
          rateLimitType: breach.type,
          timestamp: breach.at.toISOString(),
        })),
      });
    },
  },
];
