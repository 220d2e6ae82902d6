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
  | WalletAuthContext
  | OperatorAuthContext;

/**
 * The operator: the CLI and start-up tasks (no token), or a caller of the GraphQL operator operations with an
 * operator token (made with `lagoon operator-tokens create`), whose id the ledger records on what it changes.
 */
export interface OperatorAuthContext {
  readonly kind: 'operator';
  readonly requestId: string;
  readonly operatorToken?: { readonly id: string; readonly name: string };
}

/** A wallet signed in with SIGN-IN-WITH-X (src/wallets/): pays USD from its credit, no key limits; no ADMIN routes. */
export interface WalletAuthContext {
  readonly kind: 'wallet';
  readonly requestId: string;
  readonly accountId: string;
  /** Lower-case 0x address. */
  readonly walletAddress: string;
}

export type KeyAuthContext = Extract<AuthContext, { kind: 'apiKey' }>;
/** A caller that can be charged: an API key or a signed-in wallet. */
export type AccountAuthContext = KeyAuthContext | WalletAuthContext;

/** The key a caller uses, or null for a wallet (wallets have no key limits and no privacy mode). */
export const keyOf = (auth: AccountAuthContext): AuthenticatedKey | null =>
  auth.kind === 'apiKey' ? auth.apiKey : null;
/** The model privacy mode the caller's key demands (wallets: any model). */
export const modelPrivacyOf = (auth: AccountAuthContext): ModelPrivacyMode =>
  auth.kind === 'apiKey' ? auth.apiKey.modelPrivacy : 'ALL';

export const anonymous = (requestId: string): AuthContext => ({ kind: 'anonymous', requestId });
/** The operator CLI and start-up tasks act outside any account's permissions. */
export const operator = (requestId = 'operator'): AuthContext => ({ kind: 'operator', requestId });
