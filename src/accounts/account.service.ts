import type { AuthContext } from '../auth/auth-context.ts';
import { getActiveKeyByHash } from '../auth/api-key.repository.ts';
import type { ApiKeyService, CreatedApiKey } from '../auth/api-key.service.ts';
import { requireAccount, requireAdmin, requireOperator } from '../auth/permissions.ts';
import { hashKeySecret } from '../auth/key-secret.ts';
import type { BillingService } from '../billing/billing.service.ts';
import type { BalanceSnapshot } from '../billing/billing.types.ts';
import { CURRENCIES, MoneyFormatError, parseNano, type Currency } from '../billing/money.ts';
import type { Database } from '../db/database.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import * as repo from './account.repository.ts';

export interface Account {
  readonly id: string;
  readonly name: string;
  readonly kind: 'standard' | 'wallet';
  readonly walletAddress: string | null;
  readonly createdAt: Date;
}

export interface AccountWithBalances extends Account {
  readonly balances: BalanceSnapshot[];
}

const BOOTSTRAP_MARKER = 'bootstrap_account_id';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Accounts and their funding (operator side). Talks to the account repository, ApiKeyService and BillingService. */
export class AccountService {
  constructor(private readonly deps: { db: Database; apiKeys: ApiKeyService; billing: BillingService }) {}

  async create(auth: AuthContext, input: { name: string }): Promise<{ account: Account; adminKey: CreatedApiKey }> {
    requireOperator(auth);
    const name = input.name.trim();
    if (!name || name.length > 128) throw new ValidationError('An account name is 1 to 128 characters');
    const account = toAccount(await repo.insertAccount(this.deps.db, { name }));
    const adminKey = await this.deps.apiKeys.createAsOperator(auth, account.id, {
      apiKeyType: 'ADMIN',
      description: `${name} admin`,
    });
    return { account, adminKey };
  }

  async list(auth: AuthContext): Promise<AccountWithBalances[]> {
    requireOperator(auth);
    const accounts = (await repo.listAccounts(this.deps.db)).map(toAccount);
    return Promise.all(
      accounts.map(async (account) => ({ ...account, balances: await this.deps.billing.balancesOf(account.id) })),
    );
  }

  /** The caller's own account (any key of it). */
  async current(auth: AuthContext): Promise<Account> {
    const { accountId } = requireAccount(auth);
    const row = await repo.getAccount(this.deps.db, accountId);
    if (!row) throw new NotFoundError('Account not found');
    return toAccount(row);
  }

  /** The caller's balances: ADMIN keys only, the same rule as the billing balance summary. */
  async balances(auth: AuthContext): Promise<BalanceSnapshot[]> {
    const { accountId } = requireAdmin(auth);
    return this.deps.billing.balancesOf(accountId);
  }

  /** Creates a key for any account (operator CLI). */
  async createKey(
    auth: AuthContext,
    accountId: string,
    input: { apiKeyType: 'ADMIN' | 'INFERENCE'; description: string },
  ): Promise<CreatedApiKey> {
    requireOperator(auth);
    await this.requireExisting(accountId);
    return this.deps.apiKeys.createAsOperator(auth, accountId, input);
  }

  /** Finds the account that owns an API key secret (the CLI's `--key`). */
  async accountIdForKey(auth: AuthContext, secret: string): Promise<string> {
    requireOperator(auth);
    const row = await getActiveKeyByHash(this.deps.db, hashKeySecret(secret));
    if (!row) throw new NotFoundError('No active API key matches that secret');
    return row.account_id;
  }

  /** `amount`: decimal text (the CLI), or nano-units already parsed (a negative amount removes funds). */
  async credit(
    auth: AuthContext,
    input: { accountId: string; currency: string; amount: string | bigint; note?: string },
  ) {
    requireOperator(auth);
    if (!(CURRENCIES as readonly string[]).includes(input.currency))
      throw new ValidationError(`Currency must be one of ${CURRENCIES.join(', ')}`);
    let amount: bigint;
    try {
      amount = typeof input.amount === 'bigint' ? input.amount : parseNano(input.amount);
    } catch (error) {
      throw new ValidationError(
        error instanceof MoneyFormatError ? `Invalid amount: ${error.message}` : 'Invalid amount',
      );
    }
    const account = await this.requireExisting(input.accountId);
    const result = await this.deps.billing.credit(auth, {
      accountId: account.id,
      currency: input.currency as Currency,
      amount,
      ...(input.note ? { note: input.note } : {}),
    });
    return { accountId: account.id, ...result };
  }

  /**
   * First start: creates the bootstrap account with an ADMIN key (the configured secret, or a new one returned
   * to be printed once). A configured secret that was never stored is added on later starts too, so setting
   * LAGOON_BOOTSTRAP_ADMIN_KEY after a first run still works; a revoked one is not brought back.
   */
  async bootstrap(
    auth: AuthContext,
    configuredSecret: string | undefined,
  ): Promise<{ accountId: string; createdSecret?: string } | undefined> {
    requireOperator(auth);
    let accountId = await repo.getMeta(this.deps.db, BOOTSTRAP_MARKER);
    let createdSecret: string | undefined;
    if (!accountId && (await repo.countAccounts(this.deps.db)) === 0) {
      const account = await repo.insertAccount(this.deps.db, { name: 'bootstrap' });
      if (await repo.setMetaIfAbsent(this.deps.db, BOOTSTRAP_MARKER, account.id)) {
        accountId = account.id;
        const created = await this.deps.apiKeys.createAsOperator(auth, account.id, {
          apiKeyType: 'ADMIN',
          description: 'bootstrap admin',
          ...(configuredSecret ? { secret: configuredSecret } : {}),
        });
        if (!configuredSecret) createdSecret = created.secret;
        return { accountId, ...(createdSecret ? { createdSecret } : {}) };
      }
      // Another process bootstrapped at the same moment; ours is an empty account nobody uses.
      accountId = await repo.getMeta(this.deps.db, BOOTSTRAP_MARKER);
    }
    if (accountId && configuredSecret && !(await this.keyEverExisted(configuredSecret))) {
      await this.deps.apiKeys.createAsOperator(auth, accountId, {
        apiKeyType: 'ADMIN',
        description: 'bootstrap admin',
        secret: configuredSecret,
      });
    }
    return accountId ? { accountId } : undefined;
  }

  private async requireExisting(accountId: string) {
    const account = UUID.test(accountId) ? await repo.getAccount(this.deps.db, accountId) : undefined;
    if (!account) throw new NotFoundError(`Account ${accountId} not found`);
    return account;
  }

  private async keyEverExisted(secret: string): Promise<boolean> {
    const row = await this.deps.db
      .selectFrom('api_keys')
      .select('id')
      .where('key_hash', '=', hashKeySecret(secret))
      .executeTakeFirst();
    return row !== undefined;
  }
}

const toAccount = (row: {
  id: string;
  name: string;
  kind: string;
  wallet_address: string | null;
  created_at: Date;
}): Account => ({
  id: row.id,
  name: row.name,
  kind: row.kind === 'wallet' ? 'wallet' : 'standard',
  walletAddress: row.wallet_address,
  createdAt: row.created_at,
});
