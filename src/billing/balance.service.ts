import { sql } from 'kysely';
import type { AuthContext } from '../auth/auth-context.ts';
import { requireAdmin } from '../auth/permissions.ts';
import type { Database } from '../db/database.ts';
import type { BillingService } from './billing.service.ts';
import { CHARGING_ORDER } from './billing.types.ts';
import type { Currency, Nano } from './money.ts';
import { periodStart } from './periods.ts';

/** `GET /billing/balance` (docs/api.md, Billing reads), money as bigint nano-units. */
export interface BalanceSummary {
  /** Whether the next paid call can be charged to some balance. */
  readonly canConsume: boolean;
  /** The balance the next paid call would be charged to: the first of DIEM → VCU → BUNDLED_CREDITS → USD with funds available. */
  readonly consumptionCurrency: Currency | null;
  /** The DIEM and USD balances (funds held for calls in flight included). */
  readonly balances: { readonly diem: Nano; readonly usd: Nano };
  /** DIEM credited to the account in the current epoch (since 00:00 UTC today); Lagoon has no staking, so this is what the operator allotted today. */
  readonly diemEpochAllocation: Nano;
}

/** The account balance summary (ADMIN keys only). Talks to the billing service and the ledger. */
export class BalanceService {
  constructor(private readonly deps: { db: Database; billing: BillingService; now?: () => Date }) {}

  async summary(auth: AuthContext): Promise<BalanceSummary> {
    const { accountId } = requireAdmin(auth);
    const epoch = periodStart('EPOCH', (this.deps.now ?? (() => new Date()))());
    const [snapshots, allocation] = await Promise.all([
      this.deps.billing.balancesOf(accountId),
      diemCreditedSince(this.deps.db, accountId, epoch),
    ]);
    const of = (currency: Currency) => snapshots.find((snapshot) => snapshot.currency === currency);
    const consumptionCurrency = CHARGING_ORDER.find((currency) => {
      const snapshot = of(currency);
      return snapshot !== undefined && snapshot.amount - snapshot.reserved > 0n;
    });
    return {
      canConsume: consumptionCurrency !== undefined,
      consumptionCurrency: consumptionCurrency ?? null,
      balances: { diem: of('DIEM')?.amount ?? 0n, usd: of('USD')?.amount ?? 0n },
      diemEpochAllocation: allocation,
    };
  }
}

/** DIEM top-ups since `since` (the ledger index is by account and time). */
async function diemCreditedSince(db: Database, accountId: string, since: Date): Promise<Nano> {
  const row = await db
    .selectFrom('account_ledger')
    .select(sql<string>`coalesce(sum(amount), 0)::text`.as('total'))
    .where('account_id', '=', accountId)
    .where('currency', '=', 'DIEM')
    .where('type', '=', 'TOP_UP')
    .where('created_at', '>=', since)
    .executeTakeFirst();
  return BigInt(row?.total ?? '0');
}
