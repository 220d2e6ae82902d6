import type { AccountService } from '../accounts/account.service.ts';
import type { AuthContext } from '../auth/auth-context.ts';
import { requireOperator } from '../auth/permissions.ts';
import type { AnalyticsService } from '../billing/analytics.service.ts';
import type { UsageAnalytics } from '../billing/analytics.types.ts';
import type { BillingService } from '../billing/billing.service.ts';
import type { BalanceSnapshot } from '../billing/billing.types.ts';
import { CURRENCIES, MoneyFormatError, parseNano, type Currency, type Nano } from '../billing/money.ts';
import type { Database } from '../db/database.ts';
import { InsufficientBalanceError, ValidationError } from '../errors.ts';
import type { UpstreamActivity, UpstreamHealthSnapshot } from '../providers/upstream-activity.ts';
import * as repo from './operator-accounts.repository.ts';

export interface CurrencyAmount {
  readonly currency: string;
  readonly amount: Nano;
}

export interface OperatorAccount {
  readonly id: string;
  readonly name: string;
  readonly kind: string;
  readonly walletAddress: string | null;
  readonly createdAt: Date;
  readonly activeKeyCount: number;
  readonly balances: readonly BalanceSnapshot[];
  readonly spendToday: readonly CurrencyAmount[];
  readonly spendLast30Days: readonly CurrencyAmount[];
}

export interface OperatorAccountPage {
  readonly accounts: readonly OperatorAccount[];
  readonly cursors: readonly string[];
  readonly hasNextPage: boolean;
}

export interface OperatorAdjustment {
  readonly accountId: string;
  readonly ledgerEntryId: string;
  readonly currency: Currency;
  readonly amount: Nano;
  readonly balanceAfter: Nano;
  readonly reason: string;
  readonly operatorTokenId: string | null;
}

export interface JobQueueSnapshot {
  readonly depth: readonly repo.QueueDepthRow[];
  readonly queued: number;
  readonly processing: number;
  /** How long the oldest QUEUED job has waited, in seconds (null: none waits). */
  readonly oldestWaitingSeconds: number | null;
}

const MAX_PAGE = 100;
const MAX_REASON = 500;

/**
 * The operator's view over every account (GraphQL operator operations): accounts with balances and spend, credits
 * and debits with a reason, usage across accounts, upstream health and the job queue. Operator callers only.
 */
export class OperatorService {
  constructor(
    private readonly deps: {
      db: Database;
      accounts: AccountService;
      billing: BillingService;
      analytics: AnalyticsService;
      upstreams: UpstreamActivity;
      now?: () => Date;
    },
  ) {}

  async accounts(
    auth: AuthContext,
    input: { search?: string | null; first?: number | null; after?: string | null },
  ): Promise<OperatorAccountPage> {
    requireOperator(auth);
    const first = input.first ?? 20;
    if (!Number.isInteger(first) || first < 1 || first > MAX_PAGE)
      throw new ValidationError(`first must be between 1 and ${MAX_PAGE}`);
    const after = input.after ? decodeCursor(input.after) : undefined;
    const rows = await repo.searchAccounts(this.deps.db, {
      search: input.search ?? undefined,
      after,
      limit: first + 1,
    });
    const page = rows.slice(0, first);
    const ids = page.map((row) => row.id);
    const today = this.now().toISOString().slice(0, 10);
    await this.deps.billing.flush();
    const [keyCounts, spend, balances] = await Promise.all([
      repo.activeKeyCounts(this.deps.db, ids),
      repo.spendOf(this.deps.db, ids, today),
      Promise.all(ids.map((id) => this.deps.billing.balancesOf(id))),
    ]);
    const accounts = page.map((row, index) => {
      const own = spend.filter((s) => s.accountId === row.id);
      return {
        id: row.id,
        name: row.name,
        kind: row.kind,
        walletAddress: row.wallet_address,
        createdAt: row.created_at,
        activeKeyCount: keyCounts.get(row.id) ?? 0,
        balances: balances[index] ?? [],
        spendToday: own.filter((s) => s.today !== 0n).map((s) => ({ currency: s.currency, amount: s.today })),
        spendLast30Days: own.map((s) => ({ currency: s.currency, amount: s.last30Days })),
      };
    });
    return { accounts, cursors: page.map(encodeCursor), hasNextPage: rows.length > first };
  }

  /** Adds funds to an account; the ledger entry keeps the reason and the operator token. */
  credit(auth: AuthContext, input: AdjustmentInput): Promise<OperatorAdjustment> {
    return this.adjust(auth, input, 1n);
  }

  /** Removes funds; never past the balance nor into funds held for running requests. */
  debit(auth: AuthContext, input: AdjustmentInput): Promise<OperatorAdjustment> {
    return this.adjust(auth, input, -1n);
  }

  usage(auth: AuthContext, input: unknown): Promise<UsageAnalytics> {
    requireOperator(auth);
    return this.deps.analytics.analyticsOfAllAccounts(auth, input);
  }

  upstreamHealth(auth: AuthContext): UpstreamHealthSnapshot[] {
    requireOperator(auth);
    return this.deps.upstreams.snapshot();
  }

  async jobQueue(auth: AuthContext): Promise<JobQueueSnapshot> {
    requireOperator(auth);
    const depth = await repo.queueDepth(this.deps.db);
    const count = (status: string) => depth.filter((d) => d.status === status).reduce((n, d) => n + d.jobs, 0);
    const waiting = depth.filter((d) => d.status === 'QUEUED').map((d) => d.oldestCreatedAt.getTime());
    const oldest = waiting.length === 0 ? null : Math.min(...waiting);
    return {
      depth,
      queued: count('QUEUED'),
      processing: count('PROCESSING'),
      oldestWaitingSeconds: oldest === null ? null : Math.max(0, (this.now().getTime() - oldest) / 1000),
    };
  }

  private async adjust(auth: AuthContext, input: AdjustmentInput, sign: 1n | -1n): Promise<OperatorAdjustment> {
    requireOperator(auth);
    const reason = input.reason.trim();
    if (!reason || reason.length > MAX_REASON)
      throw new ValidationError(`A reason is 1 to ${MAX_REASON} characters`, [
        { path: ['reason'], message: 'required' },
      ]);
    if (!(CURRENCIES as readonly string[]).includes(input.currency))
      throw new ValidationError(`Currency must be one of ${CURRENCIES.join(', ')}`);
    const amount = positiveAmount(input.amount);
    try {
      const result = await this.deps.accounts.credit(auth, {
        accountId: input.accountId,
        currency: input.currency,
        amount: sign * amount,
        note: reason,
      });
      return {
        accountId: result.accountId,
        ledgerEntryId: result.ledgerEntryId,
        currency: result.currency,
        amount: result.amount,
        balanceAfter: result.balanceAfter,
        reason,
        operatorTokenId: auth.kind === 'operator' ? (auth.operatorToken?.id ?? null) : null,
      };
    } catch (error) {
      // The only refusal of a well-formed debit of an existing account: it would go past the balance.
      if (sign < 0n && error instanceof ValidationError) throw new InsufficientBalanceError();
      throw error;
    }
  }

  private now(): Date {
    return this.deps.now?.() ?? new Date();
  }
}

export interface AdjustmentInput {
  readonly accountId: string;
  readonly currency: string;
  /** A positive decimal amount, e.g. "12.5". */
  readonly amount: string;
  readonly reason: string;
}

function positiveAmount(text: string): Nano {
  let amount: Nano;
  try {
    amount = parseNano(text.trim());
  } catch (error) {
    throw new ValidationError(
      error instanceof MoneyFormatError ? `Invalid amount: ${error.message}` : 'Invalid amount',
      [{ path: ['amount'], message: 'not a decimal amount' }],
    );
  }
  if (amount <= 0n)
    throw new ValidationError('The amount must be greater than zero', [{ path: ['amount'], message: 'not positive' }]);
  return amount;
}

const encodeCursor = (row: repo.AccountRow): string =>
  Buffer.from(JSON.stringify([row.created_at.toISOString(), row.id])).toString('base64url');

function decodeCursor(cursor: string): repo.AccountCursor {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    const createdAt = typeof at === 'string' ? new Date(at) : undefined;
    if (createdAt && !Number.isNaN(createdAt.getTime()) && typeof id === 'string' && /^[0-9a-f-]{36}$/i.test(id))
      return { createdAt, id };
  } catch {
    // Falls through to the error below.
  }
  throw new ValidationError('Invalid cursor', [{ path: ['after'], message: 'not a cursor of this connection' }]);
}
