export const API_KEY_TYPES = ['ADMIN', 'INFERENCE'] as const;
export type ApiKeyType = (typeof API_KEY_TYPES)[number];
export const LIMIT_PERIODS = ['EPOCH', 'MONTH', 'LIFETIME'] as const;
export type LimitPeriod = (typeof LIMIT_PERIODS)[number];
export const MODEL_PRIVACY_MODES = ['ALL', 'PRIVATE_TEXT', 'PRIVATE_ONLY'] as const;
export type ModelPrivacyMode = (typeof MODEL_PRIVACY_MODES)[number];

/** The authenticated key as the request sees it (from the key cache; never the secret). */
export interface AuthenticatedKey {
  readonly id: string;
  readonly accountId: string;
  readonly type: ApiKeyType;
  readonly limitPeriod: LimitPeriod;
  readonly modelPrivacy: ModelPrivacyMode;
  readonly limits: { readonly usd: bigint | null; readonly diem: bigint | null };
  readonly expiresAt: Date | null;
  /** The key's own rate limits (`keys rate-limits`), over the operator's; absent or null: none. */
  readonly rateLimits?: { readonly rpm?: number; readonly rpd?: number; readonly tpm?: number } | null;
}

/** Who is calling. Every service method takes this first and checks permissions and ownership itself. */
export type AuthContext =
  | { readonly kind: 'anonymous'; readonly requestId: string }
  | {
      readonly kind: 'apiKey';
      readonly requestId: string;
      readonly accountId: string;
      readonly apiKey: AuthenticatedKey;
    }
  | { readonly kind: 'operator'; readonly requestId: string };

export type AccountAuthContext = Extract<AuthContext, { kind: 'apiKey' }>;

export const anonymous = (requestId: string): AuthContext => ({ kind: 'anonymous', requestId });
/** The operator CLI and start-up tasks act outside any account's permissions. */
export const operator = (requestId = 'operator'): AuthContext => ({ kind: 'operator', requestId });
