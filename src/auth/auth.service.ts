import type { Database } from '../db/database.ts';
import { AuthenticationError } from '../errors.ts';
import { getActiveKeyByHash } from './api-key.repository.ts';
import { rowToAuthenticatedKey } from './api-key.ts';
import type { AuthContext, AuthenticatedKey } from './auth-context.ts';
import type { KeyCache } from './key-cache.ts';
import { hashKeySecret } from './key-secret.ts';
import type { LastUsedTracker } from './last-used.ts';
import { SIWX_HEADER, SIWX_LEGACY_HEADER } from '../wallets/siwx-message.ts';
import type { WalletAuthenticator } from '../wallets/wallet-auth.ts';
import { isOperatorTokenSecret, type OperatorTokenService } from '../operator/operator-tokens.ts';
import { annotate, inSpan, tracingOn } from '../observability/tracing.ts';

/**
 * A request's headers as either surface holds them: Fetch-style (`get`, GraphQL) or a plain lower-case record
 * (Node's request headers, REST). The core reads the credential headers from them and judges them.
 */
export type RequestHeaders =
  { get(name: string): string | null } | { readonly [name: string]: string | readonly string[] | null | undefined };

function header(headers: RequestHeaders, name: string): string | undefined {
  const value =
    typeof headers.get === 'function'
      ? (headers as { get(name: string): string | null }).get(name)
      : (headers as Readonly<Record<string, unknown>>)[name];
  return typeof value === 'string' ? value : undefined;
}

/** Turns credentials into an AuthContext. Talks to the key cache first and the database on a miss. */
export class AuthService {
  constructor(
    private readonly deps: {
      db: Database;
      cache: KeyCache;
      lastUsed: LastUsedTracker;
      wallets?: WalletAuthenticator;
      /** Operator tokens (`lagoonop_…`): the operator, for the GraphQL operator operations only. */
      operatorTokens?: OperatorTokenService;
      now?: () => Date;
    },
  ) {}

  /**
   * The one authentication of both surfaces: no credentials are anonymous, bad ones are refused. A wallet sign-in
   * header wins over a key; its domain is checked against the configured sign-in domains. An operator token
   * (`lagoonop_…`) is the operator, where the caller allows it.
   */
  async authenticate(
    headers: RequestHeaders,
    requestId: string,
    /** GraphQL only: the REST layer has no operator routes, so an operator token there is an unknown key. */
    allowOperatorTokens = false,
  ): Promise<AuthContext> {
    if (!tracingOn()) return this.identify(headers, requestId, allowOperatorTokens);
    return inSpan('auth', undefined, async (span) => {
      const auth = await this.identify(headers, requestId, allowOperatorTokens);
      annotate(span, { 'lagoon.auth.kind': auth.kind });
      return auth;
    });
  }

  private async identify(
    headers: RequestHeaders,
    requestId: string,
    allowOperatorTokens: boolean,
  ): Promise<AuthContext> {
    const signIn = header(headers, SIWX_HEADER) ?? header(headers, SIWX_LEGACY_HEADER);
    if (signIn !== undefined && signIn.trim() !== '' && this.deps.wallets) {
      const wallet = await this.deps.wallets.verify(signIn);
      return { kind: 'wallet', requestId, accountId: wallet.accountId, walletAddress: wallet.walletAddress };
    }
    const authorization = header(headers, 'authorization')?.trim();
    if (!authorization) return { kind: 'anonymous', requestId };
    const match = /^Bearer\s+(\S+)$/i.exec(authorization);
    if (!match?.[1]) throw new AuthenticationError('Authorization header must be "Bearer <API key>"');
    if (allowOperatorTokens && isOperatorTokenSecret(match[1]) && this.deps.operatorTokens) {
      const operator = await this.deps.operatorTokens.authenticate(match[1], requestId);
      if (!operator) throw new AuthenticationError('Invalid or revoked operator token');
      return operator;
    }
    const key = await this.lookup(hashKeySecret(match[1]));
    const now = this.deps.now?.() ?? new Date();
    if (!key) throw new AuthenticationError('Invalid API key');
    if (key.expiresAt && key.expiresAt.getTime() <= now.getTime()) throw new AuthenticationError('API key has expired');
    this.deps.lastUsed.record(key.id, now);
    return { kind: 'apiKey', requestId, accountId: key.accountId, apiKey: key };
  }

  private async lookup(hash: string): Promise<AuthenticatedKey | null> {
    const cached = this.deps.cache.get(hash);
    if (cached !== undefined) return cached;
    const row = await getActiveKeyByHash(this.deps.db, hash);
    const key = row ? rowToAuthenticatedKey(row) : null;
    this.deps.cache.set(hash, key);
    return key;
  }
}
