import type { z } from 'zod';

export type ErrorCode =
  | 'INVALID_REQUEST'
  | 'INVALID_MODEL'
  | 'MODEL_NOT_FOUND'
  | 'CHARACTER_NOT_FOUND'
  | 'NOT_FOUND'
  | 'AUTHENTICATION_FAILED'
  | 'ADMIN_KEY_REQUIRED'
  | 'UNAUTHORIZED'
  | 'INSUFFICIENT_BALANCE'
  | 'API_KEY_USD_SPEND_LIMIT_EXCEEDED'
  | 'API_KEY_DIEM_SPEND_LIMIT_EXCEEDED'
  | 'MEDIA_NOT_FOUND'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'INVALID_CONTENT_TYPE'
  | 'METHOD_NOT_ALLOWED'
  | 'CONTENT_POLICY_VIOLATION'
  | 'RATE_LIMIT_EXCEEDED'
  | 'INFERENCE_FAILED'
  | 'UPSTREAM_ERROR'
  | 'MODEL_OFFLINE'
  | 'MODEL_AT_CAPACITY'
  | 'REQUEST_TIMEOUT'
  | 'SERVICE_UNAVAILABLE'
  | 'SERVER_SHUTTING_DOWN'
  | 'REQUEST_HEADER_FIELDS_TOO_LARGE'
  | 'INTERNAL_ERROR'
  | 'PAYMENT_REQUIRED'
  | SiwxCode;

/** A refused wallet sign-in (src/wallets/siwx-message.ts): 401 with one of these. */
export type SiwxCode =
  | 'SIWX_PARSE_ERROR'
  | 'SIWX_INVALID_PAYLOAD'
  | 'SIWX_INVALID_MESSAGE'
  | 'SIWX_ADDRESS_MISMATCH'
  | 'SIWX_UNSUPPORTED_CHAIN'
  | 'SIWX_CHAIN_MISMATCH'
  | 'SIWX_DOMAIN_MISMATCH'
  | 'SIWX_MISSING_NONCE'
  | 'SIWX_EXPIRED'
  | 'SIWX_FUTURE_TIMESTAMP'
  | 'SIWX_NOT_BEFORE'
  | 'SIWX_INVALID_SIGNATURE'
  | 'SIWX_NONCE_REUSED';

export interface ValidationIssue {
  path: (string | number)[];
  message: string;
}

/** How much of a caller's value an error may quote: enough to recognise it, never the whole of a huge one. */
export const ECHO_MAX_CHARS = 100;
/** The longest error message (a message quoting clipped values stays well below it). */
const MESSAGE_MAX_CHARS = 1_000;
/** The longest issue message. */
const ISSUE_MESSAGE_MAX_CHARS = 300;
/** Issues listed in a 400: a body of 100,000 bad array items gives the first ones, not 100,000 lines. */
const MAX_ISSUES = 20;

/** `text` cut to `max` characters plus an ellipsis (never splitting a surrogate pair). */
export function clip(text: string, max = ECHO_MAX_CHARS): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text.charAt(max - 1)) ? max - 1 : max;
  return `${text.slice(0, end)}…`;
}

/** The state of one rate-limit window: its limit, what is left of it and when it starts again. */
export interface RateWindow {
  readonly limit: number;
  readonly remaining: number;
  readonly resetAt: Date;
}

/** What an error carries besides its code and message, for whichever surface answers it. */
export interface ErrorData {
  /** When the caller may try again. */
  readonly retryAfterSeconds?: number;
  /** The state of the rate limit that refused the call. */
  readonly rateLimit?: RateWindow;
  /** The caller's request and token windows on a per-key rate-limited route (x-ratelimit-*-requests|tokens). */
  readonly rateWindows?: { readonly requests?: RateWindow; readonly tokens?: RateWindow };
  /** The size limit a body passed. */
  readonly limitBytes?: number;
}

/**
 * The base of every expected failure: a code, a message and data; no HTTP. Each surface maps the code to its own
 * answer (rest/error-map.ts for status and headers, schema/errors.ts for typed GraphQL results).
 */
export abstract class AppError extends Error {
  abstract readonly code: ErrorCode;
  constructor(message: string, options?: ErrorOptions) {
    // Messages can quote what the caller sent; an error body stays small whatever was sent.
    super(clip(message, MESSAGE_MAX_CHARS), options);
  }

  /** Extra fields of the error body (REST) and the error's extensions (GraphQL). */
  extra(): Record<string, unknown> {
    return {};
  }

  data(): ErrorData {
    return {};
  }
}

export class ValidationError extends AppError {
  readonly code = 'INVALID_REQUEST' as const;
  readonly issues: ValidationIssue[];

  /** `issues` are cut short (the first few, each path segment and message clipped); `details` is built from them. */
  constructor(message: string, issues: ValidationIssue[] = []) {
    super(message);
    this.issues = issues.slice(0, MAX_ISSUES).map((issue) => ({
      path: issue.path.map((segment) => (typeof segment === 'string' ? clip(segment) : segment)),
      message: clip(issue.message, ISSUE_MESSAGE_MAX_CHARS),
    }));
  }

  static fromZod(error: z.ZodError, prefix?: string): ValidationError {
    const issues = error.issues.map((issue) => ({
      path: issue.path.map((segment) => (typeof segment === 'symbol' ? String(segment) : segment)),
      // zod quotes unknown keys whole: quote each one clipped instead.
      message:
        issue.code === 'unrecognized_keys'
          ? `Unrecognized key${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.map((key) => `"${clip(key)}"`).join(', ')}`
          : issue.message,
    }));
    const first = issues[0];
    const where = first && first.path.length > 0 ? `${clip(first.path.join('.'))}: ` : '';
    const message = `${prefix ?? 'Invalid request'}: ${where}${first?.message ?? 'invalid input'}`;
    return new ValidationError(message, issues);
  }

  override extra(): Record<string, unknown> {
    return this.issues.length > 0 ? { details: formatIssueTree(this.issues), issues: this.issues } : {};
  }
}

interface IssueTree {
  _errors: string[];
  [field: string]: IssueTree | string[];
}

/** zod's `format()` tree ({ _errors, field: { _errors } }) built from flat issues. */
export function formatIssueTree(issues: ValidationIssue[]): IssueTree {
  const root: IssueTree = { _errors: [] };
  for (const issue of issues) {
    let node = root;
    for (const segment of issue.path) {
      const key = String(segment);
      const child = node[key];
      if (!child || Array.isArray(child)) node[key] = { _errors: [] };
      node = node[key] as IssueTree;
    }
    node._errors.push(issue.message);
  }
  return root;
}

export class InvalidModelError extends AppError {
  readonly code = 'INVALID_MODEL' as const;
}

export class NotFoundError extends AppError {
  constructor(
    message: string,
    readonly code: 'MODEL_NOT_FOUND' | 'CHARACTER_NOT_FOUND' | 'MEDIA_NOT_FOUND' | 'NOT_FOUND' = 'NOT_FOUND',
  ) {
    super(message);
  }
}

export class AuthenticationError extends AppError {
  readonly code = 'AUTHENTICATION_FAILED' as const;
  constructor(message = 'Authentication failed') {
    super(message);
  }
}

export class AdminKeyRequiredError extends AppError {
  readonly code = 'ADMIN_KEY_REQUIRED' as const;
  constructor() {
    super('Admin API key required');
  }
}

export class ForbiddenError extends AppError {
  readonly code = 'UNAUTHORIZED' as const;
}

export class InsufficientBalanceError extends AppError {
  readonly code = 'INSUFFICIENT_BALANCE' as const;
  constructor() {
    super('Insufficient USD or Diem balance to complete request.');
  }
}

/**
 * A wallet caller whose credit does not cover a call or is below its minimum balance: 402 PAYMENT_REQUIRED; the REST
 * surface answers it with top-up instructions and a fresh sign-in challenge (src/wallets/challenge.ts), GraphQL with
 * the same data in the error's extensions (schema/wallet-errors.ts).
 */
export class WalletTopUpRequiredError extends AppError {
  readonly code = 'PAYMENT_REQUIRED' as const;
  constructor(
    readonly accountId: string,
    readonly walletAddress: string,
  ) {
    super('Insufficient wallet credit: top up with POST /api/v1/x402/top-up');
  }
}

export class SpendLimitExceededError extends AppError {
  readonly code: 'API_KEY_USD_SPEND_LIMIT_EXCEEDED' | 'API_KEY_DIEM_SPEND_LIMIT_EXCEEDED';
  constructor(readonly limitCurrency: 'usd' | 'diem') {
    super(`API key ${limitCurrency.toUpperCase()} spend limit reached for the current period.`);
    this.code = limitCurrency === 'usd' ? 'API_KEY_USD_SPEND_LIMIT_EXCEEDED' : 'API_KEY_DIEM_SPEND_LIMIT_EXCEEDED';
  }
}

export class ConflictError extends AppError {
  readonly code = 'CONFLICT' as const;
}

export class PayloadTooLargeError extends AppError {
  readonly code = 'PAYLOAD_TOO_LARGE' as const;
  constructor(readonly limitBytes: number) {
    super(`Request body exceeds the limit of ${limitBytes} bytes.`);
  }

  override data(): ErrorData {
    return { limitBytes: this.limitBytes };
  }
}

export class InvalidContentTypeError extends AppError {
  readonly code = 'INVALID_CONTENT_TYPE' as const;
}

export class RateLimitedError extends AppError {
  readonly code = 'RATE_LIMIT_EXCEEDED' as const;
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }

  override data(): ErrorData {
    return { retryAfterSeconds: this.retryAfterSeconds };
  }
}

export class UpstreamError extends AppError {
  constructor(
    message: string,
    readonly code:
      | 'INFERENCE_FAILED'
      | 'UPSTREAM_ERROR'
      | 'MODEL_OFFLINE'
      | 'MODEL_AT_CAPACITY'
      | 'REQUEST_TIMEOUT'
      | 'SERVICE_UNAVAILABLE',
  ) {
    super(message);
  }
}

/**
 * The database could not be reached, or dropped the connection a statement ran on (a restart, a failover): the
 * request did not happen, or did not finish, and may be sent again shortly.
 */
export class DatabaseUnavailableError extends AppError {
  readonly code = 'SERVICE_UNAVAILABLE' as const;
  constructor(options?: { cause?: unknown }) {
    super('The database is unavailable; try again shortly.', options);
  }

  override data(): ErrorData {
    return { retryAfterSeconds: 1 };
  }
}

/**
 * The server is shutting down and ended a call still running at the end of its drain time (a stream's last event):
 * what was delivered is charged, and the request may be sent again (to another process, or once this one is back).
 */
export class ServerShuttingDownError extends AppError {
  readonly code = 'SERVER_SHUTTING_DOWN' as const;
  constructor() {
    super(
      'The server is shutting down; the stream ended early and was charged for what it delivered. Send the request again.',
    );
  }

  override data(): ErrorData {
    return { retryAfterSeconds: 1 };
  }
}

/**
 * This process has as many requests in flight as it takes (LAGOON_MAX_IN_FLIGHT): answered at once rather than
 * queued, so that the caller can try again shortly or elsewhere.
 */
export class ServerOverloadedError extends AppError {
  readonly code = 'SERVICE_UNAVAILABLE' as const;
  constructor(limit: number) {
    super(`The server is at capacity (${limit} requests in flight); try again shortly.`);
  }

  override data(): ErrorData {
    return { retryAfterSeconds: 1 };
  }
}
