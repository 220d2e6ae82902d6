import type { AppError, ErrorCode, ErrorData } from '../src/errors.ts';

/*
 * The HTTP face of the domain's errors: each code's status, and the headers its data gives (when to retry, the
 * state of a rate limit). The domain only names what went wrong; this table is the one place it becomes HTTP.
 */

const STATUS: Readonly<Record<ErrorCode, number>> = {
  INVALID_REQUEST: 400,
  INVALID_MODEL: 400,
  AUTHENTICATION_FAILED: 401,
  ADMIN_KEY_REQUIRED: 401,
  INSUFFICIENT_BALANCE: 402,
  API_KEY_USD_SPEND_LIMIT_EXCEEDED: 402,
  API_KEY_DIEM_SPEND_LIMIT_EXCEEDED: 402,
  UNAUTHORIZED: 403,
  MODEL_NOT_FOUND: 404,
  CHARACTER_NOT_FOUND: 404,
  MEDIA_NOT_FOUND: 404,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  INVALID_CONTENT_TYPE: 415,
  CONTENT_POLICY_VIOLATION: 422,
  RATE_LIMIT_EXCEEDED: 429,
  REQUEST_HEADER_FIELDS_TOO_LARGE: 431,
  INFERENCE_FAILED: 500,
  INTERNAL_ERROR: 500,
  UPSTREAM_ERROR: 502,
  MODEL_OFFLINE: 503,
  MODEL_AT_CAPACITY: 503,
  SERVICE_UNAVAILABLE: 503,
  SERVER_SHUTTING_DOWN: 503,
  REQUEST_TIMEOUT: 504,
  PAYMENT_REQUIRED: 402,
  SIWX_PARSE_ERROR: 401,
  SIWX_INVALID_PAYLOAD: 401,
  SIWX_INVALID_MESSAGE: 401,
  SIWX_ADDRESS_MISMATCH: 401,
  SIWX_UNSUPPORTED_CHAIN: 401,
  SIWX_CHAIN_MISMATCH: 401,
  SIWX_DOMAIN_MISMATCH: 401,
  SIWX_MISSING_NONCE: 401,
  SIWX_EXPIRED: 401,
  SIWX_FUTURE_TIMESTAMP: 401,
  SIWX_NOT_BEFORE: 401,
  SIWX_INVALID_SIGNATURE: 401,
  SIWX_NONCE_REUSED: 401,
};

/** The HTTP status of an error's code. */
export const errorStatus = (error: AppError): number => STATUS[error.code];

/** The headers an error's data gives. */
export function errorHeaders(error: AppError): Record<string, string> {
  const { retryAfterSeconds, rateLimit, rateWindows } = error.data();
  const headers: Record<string, string> = {};
  if (retryAfterSeconds !== undefined) headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfterSeconds)));
  if (rateLimit) {
    headers['x-ratelimit-limit'] = String(rateLimit.limit);
    headers['x-ratelimit-remaining'] = String(rateLimit.remaining);
    headers['x-ratelimit-reset'] = String(Math.ceil(rateLimit.resetAt.getTime() / 1000));
  }
  return rateWindows ? { ...headers, ...rateWindowHeaders(rateWindows) } : headers;
}

/**
 * `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` (reset in Unix ms), sent by per-key rate-limited routes
 * on every answer, the 429 included.
 */
export function rateWindowHeaders(windows: NonNullable<ErrorData['rateWindows']>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const kind of ['requests', 'tokens'] as const) {
    const window = windows[kind];
    if (!window) continue;
    headers[`x-ratelimit-limit-${kind}`] = String(window.limit);
    headers[`x-ratelimit-remaining-${kind}`] = String(window.remaining);
    headers[`x-ratelimit-reset-${kind}`] = String(window.resetAt.getTime());
  }
  return headers;
}
