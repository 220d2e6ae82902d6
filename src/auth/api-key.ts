import type { ApiKeyType, AuthenticatedKey, LimitPeriod, ModelPrivacyMode } from './auth-context.ts';
import type { ApiKeyRow } from './api-key.repository.ts';

/** An API key as its owner sees it (the secret is never part of it). */
export interface ApiKey {
  readonly id: string;
  readonly accountId: string;
  readonly apiKeyType: ApiKeyType;
  readonly description: string;
  readonly last6Chars: string;
  readonly consumptionLimits: {
    readonly usd: bigint | null;
    readonly diem: bigint | null;
    readonly vcu: bigint | null;
  };
  readonly limitPeriod: LimitPeriod;
  readonly modelPrivacy: ModelPrivacyMode;
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly lastUsedAt: Date | null;
}

export interface ApiKeyUsage {
  readonly trailingSevenDays: { readonly usd: bigint; readonly diem: bigint; readonly vcu: bigint };
  readonly currentPeriodUsage: { readonly usd: bigint; readonly diem: bigint };
}

export const rowToApiKey = (row: ApiKeyRow): ApiKey => ({
  id: row.id,
  accountId: row.account_id,
  apiKeyType: row.api_key_type as ApiKeyType,
  description: row.description,
  last6Chars: row.last6,
  consumptionLimits: { usd: row.limit_usd, diem: row.limit_diem, vcu: row.limit_vcu },
  limitPeriod: row.limit_period as LimitPeriod,
  modelPrivacy: row.model_privacy as ModelPrivacyMode,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  lastUsedAt: row.last_used_at,
});

export const rowToAuthenticatedKey = (row: ApiKeyRow): AuthenticatedKey => ({
  id: row.id,
  accountId: row.account_id,
  type: row.api_key_type as ApiKeyType,
  limitPeriod: row.limit_period as LimitPeriod,
  modelPrivacy: row.model_privacy as ModelPrivacyMode,
  limits: { usd: row.limit_usd, diem: row.limit_diem },
  expiresAt: row.expires_at,
  rateLimits: keyRateLimits(row.rate_limits),
});

/** The stored override ({rpm?, rpd?, tpm?} of positive integers); anything else in the column is ignored. */
function keyRateLimits(value: unknown): AuthenticatedKey['rateLimits'] {
  if (value === null || typeof value !== 'object') return null;
  const limits: { rpm?: number; rpd?: number; tpm?: number } = {};
  for (const field of ['rpm', 'rpd', 'tpm'] as const) {
    const amount = (value as Record<string, unknown>)[field];
    if (typeof amount === 'number' && Number.isInteger(amount) && amount > 0) limits[field] = amount;
  }
  return Object.keys(limits).length === 0 ? null : limits;
}
