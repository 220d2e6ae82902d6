import type { IncomingHttpHeaders } from 'node:http';
import type { Reply } from './http.ts';

/* CORS for both surfaces: the configured origins (LAGOON_CORS_ORIGINS) may call, and read these headers. */

const EXPOSED =
  'x-request-id, retry-after, x-ratelimit-limit-requests, x-ratelimit-remaining-requests, x-ratelimit-reset-requests, x-ratelimit-limit-tokens, x-ratelimit-remaining-tokens, x-ratelimit-reset-tokens, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset, x-balance-usd, x-balance-diem, x-service-rpc-credits, x-service-rpc-cost-usd, idempotent-replayed, x-pagination-limit, x-pagination-page, x-pagination-total, x-pagination-total-pages, x-usage-warning';
const NONE: Readonly<Record<string, string>> = Object.freeze({});

/** The CORS headers of an answer to `origin` (none when it may not call, or sent no Origin). */
export function corsHeaders(
  origins: ReadonlySet<string>,
  origin: string | undefined,
): Readonly<Record<string, string>> {
  if (!origin || origins.size === 0) return NONE;
  const any = origins.has('*');
  if (!any && !origins.has(origin)) return NONE;
  return {
    'access-control-allow-origin': any ? '*' : origin,
    'access-control-expose-headers': EXPOSED,
    ...(any ? {} : { vary: 'Origin' }),
  };
}

/** The answer to a preflight: 204 with what may be sent, or 403 for an origin that may not call. */
export function preflight(origins: ReadonlySet<string>, headers: IncomingHttpHeaders): Reply & { body: string } {
  const allowed = corsHeaders(origins, headers.origin) !== NONE;
  const requested = headers['access-control-request-headers'];
  return {
    status: allowed ? 204 : 403,
    headers: allowed
      ? {
          'access-control-allow-methods': 'GET, POST, PATCH, PUT, DELETE, OPTIONS',
          'access-control-allow-headers': requested ?? 'authorization, content-type',
          'access-control-max-age': '600',
        }
      : {},
    body: '',
  };
}
