import { randomBytes } from 'node:crypto';
import type { AuthContext, OperatorAuthContext } from '../auth/auth-context.ts';
import { hashKeySecret, lastSixOf } from '../auth/key-secret.ts';
import { requireOperator } from '../auth/permissions.ts';
import type { Database } from '../db/database.ts';
import { NotFoundError, ValidationError } from '../errors.ts';

/** Operator token secrets start with this; API key secrets start with `lagoon_`, so neither is taken for the other. */
export const OPERATOR_TOKEN_PREFIX = 'lagoonop_';

export interface OperatorToken {
  readonly id: string;
  readonly name: string;
  readonly last6: string;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
  readonly revokedAt: Date | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const columns = ['id', 'name', 'last6', 'created_at', 'last_used_at', 'revoked_at'] as const;

const toToken = (row: {
  id: string;
  name: string;
  last6: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}): OperatorToken => ({
  id: row.id,
  name: row.name,
  last6: row.last6,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
  revokedAt: row.revoked_at,
});

export const isOperatorTokenSecret = (secret: string): boolean => secret.startsWith(OPERATOR_TOKEN_PREFIX);

/**
 * Operator tokens: made, listed and revoked by the operator (the CLI); stored hashed like API keys. Not cached:
 * the operator operations are rare, and a revoked token is refused on its next call in every process.
 */
export class OperatorTokenService {
  constructor(private readonly deps: { db: Database }) {}

  async create(auth: AuthContext, input: { name: string }): Promise<{ token: OperatorToken; secret: string }> {
    requireOperator(auth);
    const name = input.name.trim();
    if (!name || name.length > 64) throw new ValidationError('An operator token name is 1 to 64 characters');
    const secret = `${OPERATOR_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const row = await this.deps.db
      .insertInto('operator_tokens')
      .values({ name, token_hash: hashKeySecret(secret), last6: lastSixOf(secret) })
      .returning(columns)
      .executeTakeFirstOrThrow();
    return { token: toToken(row), secret };
  }

  async list(auth: AuthContext): Promise<OperatorToken[]> {
    requireOperator(auth);
    const rows = await this.deps.db.selectFrom('operator_tokens').select(columns).orderBy('created_at').execute();
    return rows.map(toToken);
  }

  async revoke(auth: AuthContext, id: string): Promise<OperatorToken> {
    requireOperator(auth);
    const row = UUID.test(id)
      ? await this.deps.db
          .updateTable('operator_tokens')
          .set({ revoked_at: new Date() })
          .where('id', '=', id)
          .where('revoked_at', 'is', null)
          .returning(columns)
          .executeTakeFirst()
      : undefined;
    if (!row) throw new NotFoundError(`No active operator token ${id}`);
    return toToken(row);
  }

  /** The operator a token secret stands for, or null when it is unknown or revoked. */
  async authenticate(secret: string, requestId: string): Promise<OperatorAuthContext | null> {
    const row = await this.deps.db
      .updateTable('operator_tokens')
      .set({ last_used_at: new Date() })
      .where('token_hash', '=', hashKeySecret(secret))
      .where('revoked_at', 'is', null)
      .returning(['id', 'name'])
      .executeTakeFirst();
    return row ? { kind: 'operator', requestId, operatorToken: { id: row.id, name: row.name } } : null;
  }
}
