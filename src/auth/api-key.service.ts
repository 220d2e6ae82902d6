import type { Database } from '../db/database.ts';
import { periodStart, utcDay } from '../billing/periods.ts';
import type { SettledCharges } from '../billing/usage.types.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import * as repo from './api-key.repository.ts';
import { rowToApiKey, type ApiKey, type ApiKeyUsage } from './api-key.ts';
import { ApiKeyIdInput, CreateApiKeyInput, UpdateApiKeyInput } from './api-key.inputs.ts';
import type { ApiKeyType, AuthContext } from './auth-context.ts';
import type { KeyCache } from './key-cache.ts';
import { generateKeySecret, hashKeySecret, lastSixOf } from './key-secret.ts';
import type { LastUsedTracker } from './last-used.ts';
import { requireAdmin, requireOperator } from './permissions.ts';
import { parseInput } from '../validation.ts';
import { RateLimitValuesSchema, type RateLimitValues } from '../rate-limits/limits.ts';

export interface CreatedApiKey {
  readonly key: ApiKey;
  /** The secret, shown once and never stored. */
  readonly secret: string;
}

/** Manages an account's API keys (ADMIN keys only). Talks to the key repository; drops revoked keys from the cache. */
export class ApiKeyService {
  constructor(
    private readonly deps: {
      db: Database;
      cache: KeyCache;
      lastUsed: LastUsedTracker;
      maxKeysPerAccount: number;
      settled?: SettledCharges;
    },
  ) {}

  async list(auth: AuthContext): Promise<ApiKey[]> {
    const { accountId } = requireAdmin(auth);
    const rows = await repo.listActiveKeys(this.deps.db, accountId);
    return rows.map((row) => this.withPendingLastUsed(rowToApiKey(row)));
  }

  async get(auth: AuthContext, id: string): Promise<ApiKey> {
    const { accountId } = requireAdmin(auth);
    const { id: keyId } = parseInput(ApiKeyIdInput, { id });
    const row = await repo.getOwnKey(this.deps.db, accountId, keyId);
    if (!row) throw new NotFoundError(`API key ${keyId} not found`);
    return this.withPendingLastUsed(rowToApiKey(row));
  }

  /** Keys of the caller's account by id, in id order (null for unknown or foreign ids); for dataloaders. */
  async findByIds(auth: AuthContext, ids: readonly string[]): Promise<(ApiKey | null)[]> {
    const { accountId } = requireAdmin(auth);
    const valid = ids.filter((id) => ApiKeyIdInput.safeParse({ id }).success);
    const rows = await repo.getOwnKeysByIds(this.deps.db, accountId, valid);
    const byId = new Map(rows.map((row) => [row.id, this.withPendingLastUsed(rowToApiKey(row))]));
    return ids.map((id) => byId.get(id) ?? null);
  }

  async create(auth: AuthContext, input: unknown): Promise<CreatedApiKey> {
    const { accountId } = requireAdmin(auth);
    return this.createForAccount(accountId, parseInput(CreateApiKeyInput, input));
  }

  /** The operator CLI and bootstrap create keys for any account. */
  async createAsOperator(
    auth: AuthContext,
    accountId: string,
    input: { apiKeyType: ApiKeyType; description: string; secret?: string },
  ): Promise<CreatedApiKey> {
    requireOperator(auth);
    const parsed = parseInput(CreateApiKeyInput, { apiKeyType: input.apiKeyType, description: input.description });
    return this.createForAccount(accountId, parsed, input.secret);
  }

  /**
   * A key with every option of POST /api_keys for any account, by a trusted caller: the operator, or the web3 key
   * service once a wallet proved it holds the account's address.
   */
  async createWithOptionsAsOperator(
    auth: AuthContext,
    accountId: string,
    input: CreateApiKeyInput,
  ): Promise<CreatedApiKey> {
    requireOperator(auth);
    return this.createForAccount(accountId, input);
  }

  async update(auth: AuthContext, input: unknown): Promise<ApiKey> {
    const { accountId } = requireAdmin(auth);
    const parsed = parseInput(UpdateApiKeyInput, input);
    if (parsed.expiresAt) assertFuture(parsed.expiresAt);
    const limits = parsed.consumptionLimit;
    const row = await repo.updateOwnKey(this.deps.db, accountId, parsed.id, {
      ...(parsed.description !== undefined && { description: parsed.description }),
      ...(parsed.expiresAt !== undefined && { expires_at: parsed.expiresAt }),
      ...(limits?.usd !== undefined && { limit_usd: limits.usd }),
      ...(limits?.diem !== undefined && { limit_diem: limits.diem }),
      ...(limits?.vcu !== undefined && { limit_vcu: limits.vcu }),
      ...(parsed.limitPeriod !== undefined && { limit_period: parsed.limitPeriod }),
      ...(parsed.modelPrivacy !== undefined && { model_privacy: parsed.modelPrivacy }),
    });
    if (!row) throw new NotFoundError(`API key ${parsed.id} not found`);
    this.deps.cache.invalidateKeyId(row.id);
    return this.withPendingLastUsed(rowToApiKey(row));
  }

  /** Revokes a key of the caller's account. An unknown or foreign id is a bad request (never a hint). */
  async revoke(auth: AuthContext, id: unknown): Promise<void> {
    const { accountId } = requireAdmin(auth);
    const parsed = parseInput(ApiKeyIdInput, { id });
    const hash = await repo.revokeOwnKey(this.deps.db, accountId, parsed.id);
    if (!hash)
      throw new ValidationError(`API key ${parsed.id} not found`, [{ path: ['id'], message: 'No such API key' }]);
    this.deps.cache.invalidate(hash);
    this.deps.cache.invalidateKeyId(parsed.id);
  }

  /**
   * The operator sets a key's own rate limits (`keys rate-limits`; null clears them). Every process's key cache
   * drops the key, so the next request is limited by the new values.
   */
  async setRateLimits(
    auth: AuthContext,
    key: { id?: string | undefined; secret?: string | undefined },
    limits: unknown,
  ): Promise<{ id: string; rateLimits: RateLimitValues | null }> {
    requireOperator(auth);
    const values = limits === null ? null : parseInput(RateLimitValuesSchema, limits);
    if (values !== null && Object.keys(values).length === 0)
      throw new ValidationError('Give at least one of rpm, rpd, tpm (or clear the limits)');
    const id = key.secret
      ? (await repo.getActiveKeyByHash(this.deps.db, hashKeySecret(key.secret)))?.id
      : parseInput(ApiKeyIdInput, { id: key.id }).id;
    const row = id === undefined ? undefined : await repo.setKeyRateLimits(this.deps.db, id, values);
    if (!row) throw new NotFoundError('No active API key matches');
    this.deps.cache.invalidate(row.key_hash);
    this.deps.cache.invalidateKeyId(row.id);
    return { id: row.id, rateLimits: values };
  }

  /** Trailing-seven-day and current-period spend for a batch of keys, in one pair of queries. */
  async usageOf(auth: AuthContext, keys: readonly ApiKey[], now = new Date()): Promise<Map<string, ApiKeyUsage>> {
    const { accountId } = requireAdmin(auth);
    const own = keys.filter((key) => key.accountId === accountId);
    await this.deps.settled?.flush(accountId);
    const since = utcDay(new Date(now.getTime() - 6 * 86_400_000));
    const { current, trailing } = await repo.usageForKeys(
      this.deps.db,
      own.map((key) => ({ id: key.id, periodStart: periodStart(key.limitPeriod, now) })),
      since,
    );
    const result = new Map<string, ApiKeyUsage>();
    for (const key of own) {
      const spend = current.find((row) => row.api_key_id === key.id);
      const sumOf = (currencies: string[]) =>
        trailing
          .filter((row) => row.api_key_id === key.id && currencies.includes(row.currency))
          .reduce((sum, row) => sum + BigInt(row.amount), 0n);
      result.set(key.id, {
        trailingSevenDays: { usd: sumOf(['USD', 'BUNDLED_CREDITS']), diem: sumOf(['DIEM']), vcu: sumOf(['VCU']) },
        currentPeriodUsage: { usd: spend?.spent_usd ?? 0n, diem: spend?.spent_diem ?? 0n },
      });
    }
    return result;
  }

  private async createForAccount(
    accountId: string,
    input: CreateApiKeyInput,
    secret = generateKeySecret(),
  ): Promise<CreatedApiKey> {
    if (input.expiresAt) assertFuture(input.expiresAt);
    const active = await repo.countActiveKeys(this.deps.db, accountId);
    if (active >= this.deps.maxKeysPerAccount) {
      throw new ValidationError(
        `An account may have at most ${this.deps.maxKeysPerAccount} active API keys; delete one first`,
      );
    }
    const keyHash = hashKeySecret(secret);
    const row = await repo.insertKey(this.deps.db, {
      accountId,
      keyHash,
      last6: lastSixOf(secret),
      type: input.apiKeyType,
      description: input.description,
      expiresAt: input.expiresAt ?? null,
      limitUsd: input.consumptionLimit?.usd ?? null,
      limitDiem: input.consumptionLimit?.diem ?? null,
      limitVcu: input.consumptionLimit?.vcu ?? null,
      limitPeriod: input.limitPeriod ?? 'EPOCH',
      modelPrivacy: input.modelPrivacy ?? 'ALL',
    });
    this.deps.cache.invalidate(keyHash);
    return { key: rowToApiKey(row), secret };
  }

  private withPendingLastUsed(key: ApiKey): ApiKey {
    const pending = this.deps.lastUsed.peek(key.id);
    return pending && (!key.lastUsedAt || pending > key.lastUsedAt) ? { ...key, lastUsedAt: pending } : key;
  }
}

function assertFuture(date: Date): void {
  if (date.getTime() <= Date.now())
    throw new ValidationError('expiresAt must be in the future', [
      { path: ['expiresAt'], message: 'Must be in the future' },
    ]);
}
