import { randomUUID } from 'node:crypto';
import {
  CHARGING_ORDER,
  limitGroupOf,
  priceIn,
  type LimitGroup,
  type Reservation,
  type SettledCharge,
} from './billing.types.ts';
import type {
  BalanceChange,
  BatchPlan,
  BillingOp,
  KeySpendChange,
  LeaseUpdateOp,
  LockedBalance,
  LockedKeySpend,
  ReserveOp,
  SettleOp,
} from './billing-ops.ts';
import type { Currency, Nano } from './money.ts';
import type { SettledUsageEntry } from './usage.types.ts';

export type * from './billing-ops.ts';

/*
 * The decisions of one batch of reserve and settle calls, made in memory against the balance and key spend rows the
 * batch holds locked (FOR UPDATE): the same decisions, in the same order, as running the calls one after another,
 * so a balance or a key limit can no more go below zero than with one call per transaction.
 */

export const keySpendKey = (apiKeyId: string, periodStart: Date): string => `${apiKeyId}@${periodStart.getTime()}`;
const balanceKey = (accountId: string, currency: string): string => `${accountId}/${currency}`;

const accountOf = (op: BillingOp): string =>
  op.kind === 'reserve' ? op.accountId : op.kind === 'settle' ? op.reservation.accountId : op.lease.accountId;
const heldOf = (op: SettleOp | LeaseUpdateOp): Reservation => (op.kind === 'settle' ? op.reservation : op.lease);

/** The accounts a batch touches, sorted (the order their balance rows are locked in). */
export function accountsOf(ops: readonly BillingOp[]): string[] {
  return [...new Set(ops.map(accountOf))].sort();
}

/**
 * How much a lease is granted from `room` (what the balance and the key limit still allow): nothing if `min` does
 * not fit, else up to `target` but at most a quarter of the room, so that other processes, other keys and the next
 * leases still find funds; never less than `min`.
 */
export function grantOf(min: Nano, target: Nano, room: Nano): Nano {
  if (room < min) return 0n;
  const share = room / 4n;
  const wanted = target < share ? target : share;
  return wanted > min ? wanted : min;
}

/** The (key, period) rows a batch touches: the reserving keys' current periods and the settled reservations' ones. */
export function keySpendRowsOf(ops: readonly BillingOp[]): { apiKeyId: string; periodStart: Date }[] {
  const rows = new Map<string, { apiKeyId: string; periodStart: Date }>();
  for (const op of ops) {
    const apiKeyId = op.kind === 'reserve' ? op.apiKeyId : heldOf(op).apiKeyId;
    const periodStart = op.kind === 'reserve' ? op.keyPeriodStart : heldOf(op).keyPeriodStart;
    if (apiKeyId && periodStart) rows.set(keySpendKey(apiKeyId, periodStart), { apiKeyId, periodStart });
  }
  return [...rows.values()].sort((a, b) =>
    a.apiKeyId === b.apiKeyId ? a.periodStart.getTime() - b.periodStart.getTime() : a.apiKeyId < b.apiKeyId ? -1 : 1,
  );
}

/** The (key, period) rows that reserve ops need and the lock did not find: a key's first reservation of a period. */
export function missingReserveRows(
  ops: readonly BillingOp[],
  locked: readonly LockedKeySpend[],
): { apiKeyId: string; periodStart: Date }[] {
  const found = new Set(locked.map((row) => keySpendKey(row.api_key_id, row.period_start)));
  return keySpendRowsOf(ops.filter((op) => op.kind === 'reserve')).filter(
    (row) => !found.has(keySpendKey(row.apiKeyId, row.periodStart)),
  );
}

/** The first settle op of each reservation in the batch: a second settle of it finds it settled, as a second call would. */
export function firstSettles(ops: readonly BillingOp[]): Set<number> {
  const first = new Map<string, number>();
  ops.forEach((op, index) => {
    if (op.kind === 'settle' && !first.has(op.reservation.id)) first.set(op.reservation.id, index);
  });
  return new Set(first.values());
}

/** The settle ops that may charge: the first ones whose reservation the batch moved from held to settled. */
export function settleWinners(
  ops: readonly BillingOp[],
  candidates: ReadonlySet<number>,
  claimedIds: ReadonlySet<string>,
): Set<number> {
  return new Set(
    [...candidates].filter((index) => {
      const op = ops[index];
      return op?.kind === 'settle' && claimedIds.has(op.reservation.id);
    }),
  );
}

/** The usage entries of the given settle ops. */
export function entriesOf(ops: readonly BillingOp[], indexes: ReadonlySet<number>): SettledUsageEntry[] {
  return ops.flatMap((op, index) => (op.kind === 'settle' && indexes.has(index) ? op.entries : []));
}

/** The lease updates of a batch (at most one per lease: a lease's updates are queued one at a time). */
export const leaseUpdatesOf = (ops: readonly BillingOp[]): LeaseUpdateOp[] =>
  ops.filter((op): op is LeaseUpdateOp => op.kind === 'lease');

/** Runs the batch's ops in order against the locked rows and says what each did and what to write. */
export function planBatch(
  ops: readonly BillingOp[],
  winners: ReadonlySet<number>,
  balances: readonly LockedBalance[],
  spends: readonly LockedKeySpend[],
  leases: ReadonlyMap<string, Nano> = new Map(),
): BatchPlan {
  const planner = new BatchPlanner(balances, spends);
  ops.forEach((op, index) => {
    if (op.kind === 'lease') planner.updateLease(op, leases.get(op.lease.id));
    else if (op.kind === 'settle') planner.settle(op, winners.has(index));
    else planner.reserve(op);
  });
  return planner.finish();
}

/** The locked rows as the batch's ops change them, one op after another, and what the batch will write. */
class BatchPlanner {
  private readonly balance: Map<string, { amount: Nano; reserved: Nano }>;
  private readonly spend: Map<string, { -readonly [K in keyof LockedKeySpend]: LockedKeySpend[K] }>;
  private readonly balanceChanges = new Map<string, BalanceChange>();
  private readonly keySpendChanges = new Map<string, KeySpendChange>();
  private readonly plan: BatchPlan = {
    outcomes: [],
    reservations: [],
    leaseChanges: [],
    ledger: [],
    balanceChanges: [],
    keySpendChanges: [],
  };

  constructor(balances: readonly LockedBalance[], spends: readonly LockedKeySpend[]) {
    this.balance = new Map(
      balances.map((row) => [balanceKey(row.account_id, row.currency), { amount: row.amount, reserved: row.reserved }]),
    );
    this.spend = new Map(spends.map((row) => [keySpendKey(row.api_key_id, row.period_start), { ...row }]));
  }

  updateLease(op: LeaseUpdateOp, held: Nano | undefined): void {
    const { plan } = this;
    if (held === undefined) {
      plan.outcomes.push({ kind: 'unheld' });
      return;
    }
    const { lease } = op;
    const group = limitGroupOf(lease.currency);
    const balancesAfterCalls = op.calls.map((call) => {
      const balanceAfter = this.changeBalance(lease.accountId, lease.currency, -call.charged, -call.charged);
      if (lease.apiKeyId && lease.keyPeriodStart)
        this.changeKeySpend(lease.apiKeyId, lease.keyPeriodStart, group, call.charged, -call.charged);
      if (call.charged > 0n)
        plan.ledger.push({
          accountId: lease.accountId,
          currency: lease.currency,
          amount: -call.charged,
          balanceAfter,
          requestId: call.requestId,
          modelId: call.modelId,
          createdAt: call.createdAt,
        });
      return balanceAfter;
    });
    let delta = 0n;
    const granted =
      op.grow && !op.finish && !this.inDebt(lease.accountId)
        ? grantOf(
            op.grow.min,
            op.grow.target,
            this.roomOf(lease.accountId, lease.currency, lease.apiKeyId, lease.keyPeriodStart).room,
          )
        : 0n;
    if (op.finish) delta = -held;
    else if (granted > 0n) delta = granted;
    else if (op.release > 0n) delta = op.release < held ? -op.release : -held;
    const balanceAfter = this.changeBalance(lease.accountId, lease.currency, 0n, delta);
    if (delta !== 0n) {
      if (lease.apiKeyId && lease.keyPeriodStart)
        this.changeKeySpend(lease.apiKeyId, lease.keyPeriodStart, group, 0n, delta);
      if (!op.finish) plan.leaseChanges.push({ id: lease.id, delta });
    }
    plan.outcomes.push({ kind: 'lease', amount: held + delta, grown: granted, balanceAfter, balancesAfterCalls });
  }

  /** `won`: the batch moved this op's reservation from held to settled (settleWinners). */
  settle(op: SettleOp, won: boolean): void {
    const { plan } = this;
    if (!won) {
      plan.outcomes.push({ kind: 'unheld' });
      return;
    }
    const { reservation, charged } = op;
    const balanceAfter = this.changeBalance(reservation.accountId, reservation.currency, -charged, -reservation.amount);
    if (reservation.apiKeyId && reservation.keyPeriodStart) {
      this.changeKeySpend(
        reservation.apiKeyId,
        reservation.keyPeriodStart,
        limitGroupOf(reservation.currency),
        charged,
        -reservation.amount,
      );
    }
    if (charged > 0n) {
      plan.ledger.push({
        accountId: reservation.accountId,
        currency: reservation.currency,
        amount: -charged,
        balanceAfter,
        requestId: reservation.requestId,
        modelId: op.modelId,
        createdAt: op.createdAt,
      });
    }
    const charge: SettledCharge = {
      reservationId: reservation.id,
      currency: reservation.currency,
      charged,
      balanceAfter,
      usageEntryIds: op.entries.map((entry) => entry.id),
      alreadySettled: false,
    };
    plan.outcomes.push({ kind: 'settled', charge, entries: op.entries });
  }

  /** Holds the price in the first currency, in charging order, that the balance and the key limit both allow. */
  reserve(op: ReserveOp): void {
    let blockedBy: LimitGroup | undefined;
    for (const currency of this.inDebt(op.accountId) ? [] : (op.currencies ?? CHARGING_ORDER)) {
      const amount = priceIn(op.maxCost, currency);
      const row = this.balance.get(balanceKey(op.accountId, currency));
      const needed = op.minimumFree !== undefined && op.minimumFree > amount ? op.minimumFree : amount;
      if (!row || row.amount - row.reserved < needed) continue;
      const group = limitGroupOf(currency);
      // A wallet caller (no key) has no key limit: only its balance decides.
      if (
        op.apiKeyId !== null &&
        op.keyPeriodStart !== null &&
        this.overKeyLimit(op.apiKeyId, op.keyPeriodStart, group, amount)
      ) {
        blockedBy ??= group;
        continue;
      }
      this.hold(op, currency, amount);
      return;
    }
    this.plan.outcomes.push({ kind: 'refused', blockedBy });
  }

  private overKeyLimit(apiKeyId: string, periodStart: Date, group: LimitGroup, amount: Nano): boolean {
    const keyRow = this.spend.get(keySpendKey(apiKeyId, periodStart));
    if (!keyRow) throw new Error('The key spend row of a reserving key was not locked');
    const limit = group === 'usd' ? keyRow.limit_usd : keyRow.limit_diem;
    const used = group === 'usd' ? keyRow.spent_usd + keyRow.reserved_usd : keyRow.spent_diem + keyRow.reserved_diem;
    return limit !== null && used + amount > limit;
  }

  private hold(op: ReserveOp, currency: Currency, amount: Nano): void {
    const group = limitGroupOf(currency);
    const held = op.lease
      ? grantOf(
          amount,
          priceIn(op.lease.target, currency),
          this.roomOf(op.accountId, currency, op.apiKeyId, op.keyPeriodStart).room,
        )
      : amount;
    const balanceAfter = this.changeBalance(op.accountId, currency, 0n, held);
    if (op.apiKeyId !== null && op.keyPeriodStart !== null)
      this.changeKeySpend(op.apiKeyId, op.keyPeriodStart, group, 0n, held);
    const reservation: Reservation = {
      id: randomUUID(),
      accountId: op.accountId,
      apiKeyId: op.apiKeyId,
      currency,
      amount: held,
      keyPeriodStart: op.keyPeriodStart,
      requestId: op.requestId,
    };
    this.plan.reservations.push({
      ...reservation,
      apiKeyId: op.apiKeyId,
      keyPeriodStart: op.keyPeriodStart,
      limitGroup: group,
      expiresAt: op.expiresAt,
      leaseHolder: op.lease?.holder ?? null,
    });
    this.plan.outcomes.push({ kind: 'reserved', reservation, balanceAfter });
  }

  /** The plan, with the rows' net changes (those that moved). */
  finish(): BatchPlan {
    const { plan } = this;
    plan.balanceChanges.push(
      ...[...this.balanceChanges.values()].filter((change) => change.amount !== 0n || change.reserved !== 0n),
    );
    plan.keySpendChanges.push(
      ...[...this.keySpendChanges.values()].filter(
        (c) => c.spentUsd !== 0n || c.reservedUsd !== 0n || c.spentDiem !== 0n || c.reservedDiem !== 0n,
      ),
    );
    return plan;
  }

  private changeBalance(accountId: string, currency: Currency, amount: Nano, reserved: Nano): Nano {
    const key = balanceKey(accountId, currency);
    const row = this.balance.get(key);
    if (!row) throw new Error(`No ${currency} balance row to change`);
    row.amount += amount;
    row.reserved += reserved;
    const change = this.balanceChanges.get(key) ?? { accountId, currency, amount: 0n, reserved: 0n };
    change.amount += amount;
    change.reserved += reserved;
    this.balanceChanges.set(key, change);
    return row.amount;
  }

  // Spent grows by `charge`; reserved moves by `hold` but never below zero (as settleKeySpend's greatest(…, 0)).
  private changeKeySpend(apiKeyId: string, periodStart: Date, group: LimitGroup, charge: Nano, hold: Nano): void {
    const key = keySpendKey(apiKeyId, periodStart);
    const row = this.spend.get(key);
    if (!row) return; // the key was deleted since: nothing to count against
    const change = this.keySpendChanges.get(key) ?? {
      apiKeyId,
      periodStart,
      spentUsd: 0n,
      reservedUsd: 0n,
      spentDiem: 0n,
      reservedDiem: 0n,
    };
    const reservedBefore = group === 'usd' ? row.reserved_usd : row.reserved_diem;
    const reservedAfter = reservedBefore + hold < 0n ? 0n : reservedBefore + hold;
    if (group === 'usd') {
      row.spent_usd += charge;
      row.reserved_usd = reservedAfter;
      change.spentUsd += charge;
      change.reservedUsd += reservedAfter - reservedBefore;
    } else {
      row.spent_diem += charge;
      row.reserved_diem = reservedAfter;
      change.spentDiem += charge;
      change.reservedDiem += reservedAfter - reservedBefore;
    }
    this.keySpendChanges.set(key, change);
  }

  // What a reservation of `currency` may still take: the balance's free funds, capped by the key's limit.
  private roomOf(
    accountId: string,
    currency: Currency,
    apiKeyId: string | null,
    periodStart: Date | null,
  ): { room: Nano; limited: boolean } {
    const row = this.balance.get(balanceKey(accountId, currency));
    const free = row ? row.amount - row.reserved : 0n;
    const keyRow = apiKeyId && periodStart ? this.spend.get(keySpendKey(apiKeyId, periodStart)) : undefined;
    if (!keyRow) return { room: free, limited: false };
    const group = limitGroupOf(currency);
    const limit = group === 'usd' ? keyRow.limit_usd : keyRow.limit_diem;
    if (limit === null) return { room: free, limited: false };
    const keyRoom =
      limit - (group === 'usd' ? keyRow.spent_usd + keyRow.reserved_usd : keyRow.spent_diem + keyRow.reserved_diem);
    return keyRoom < free ? { room: keyRoom, limited: true } : { room: free, limited: false };
  }

  // An account with a negative balance (a charge recorded as debt) gets no new hold, in any currency, until topped up.
  private inDebt(accountId: string): boolean {
    return [...this.balance].some(([key, row]) => row.amount < 0n && key.startsWith(`${accountId}/`));
  }
}
