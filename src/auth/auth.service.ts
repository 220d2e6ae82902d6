import type { Database } from '../db/database.ts';
import { AuthenticationError } from '../errors.ts';
import { getActiveKeyByHash } from './api-key.repository.ts';
import { rowToAuthenticatedKey } from './api-key.ts';
import type { AuthContext, AuthenticatedKey } from './auth-context.ts';
import type { KeyCache } from './key-cache.ts';
import { hashKeySecret } from './key-secret.ts';
import type { LastUsedTracker } from './last-used.ts';

/** What a request presented. The HTTP and GraphQL layers read it from headers; the core only judges it. */
export interface Credentials {
  /** The raw Authorization header value, if any. */
  readonly authorization?: string | null;
}

/** Turns credentials into an AuthContext. Talks to the key cache first and the database on a miss. */
export class AuthService {
  constructor(private readonly deps: { db: Database; cache: KeyCache; lastUsed: LastUsedTracker; now?: () => Date }) {}

  async authenticate(credentials: Credentials, requestId: string): Promise<AuthContext> {
    const header = credentials.authorization?.trim();
    if (!header) return { kind: 'anonymous', requestId };
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match?.[1]) throw new AuthenticationError('Authorization header must be "Bearer <API key>"');
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
