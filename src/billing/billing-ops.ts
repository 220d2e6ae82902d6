import type { LimitGroup, Price, Reservation, SettledCharge } from './billing.types.ts';
import type { Currency, Nano } from './money.ts';
import type { SettledUsageEntry } from './usage.types.ts';

/*
 * What the batch writer (batch-writer.ts) is asked to do and what it answers: the calls of one batch, the rows it
 * holds locked, and the writes its decisions come to (billing-batch.ts decides, billing-batch.repository.ts writes).
 */

/** A reserve() waiting for the next batch. */
export interface ReserveOp {
  readonly kind: 'reserve';
  readonly accountId: string;
  /** The calling key and its limit period; null for a wallet caller (no key limits). */
  readonly apiKeyId: string | null;
  readonly keyPeriodStart: Date | null;
  readonly maxCost: Price;
  /** The currencies it may be held in, in order (wallet callers: USD only); default the charging order. */
  readonly currencies?: readonly Currency[];
  /** Free funds the balance must have at least, whatever the hold (a wallet's minimum balance). */
  readonly minimumFree?: Nano;
  readonly requestId: string;
  readonly expiresAt: Date;
  /** Take a lease for `holder` (leased-holds.ts): at least `maxCost`, up to `target` if the room allows (see grantOf). */
  readonly lease?: { readonly target: Price; readonly holder: string };
}

/** A settle() waiting for the next batch; its entries are already priced in the reserved currency. */
export interface SettleOp {
  readonly kind: 'settle';
  readonly reservation: Reservation;
  readonly charged: Nano;
  readonly entries: readonly SettledUsageEntry[];
  readonly modelId: string | null;
  readonly createdAt: Date;
}

/** A call settled against a lease: its charge, taken from the lease's hold. */
export interface LeaseCall {
  readonly charged: Nano;
  readonly entries: readonly SettledUsageEntry[];
  readonly requestId: string;
  readonly modelId: string | null;
  readonly createdAt: Date;
}

/**
 * One update of a held lease: charges its settled calls (usage entries, ledger, key spend) from the hold, then
 * grows it (`grow`, with the checks of a reservation) or else gives back `release`, or ends it (`finish`, giving
 * back all that is left), and moves its expiry (the holder is alive).
 */
export interface LeaseUpdateOp {
  readonly kind: 'lease';
  readonly lease: Reservation;
  readonly calls: readonly LeaseCall[];
  readonly grow?: { readonly min: Nano; readonly target: Nano };
  /** What the holder does not use and gives back unless the lease grows (at most what the lease still holds). */
  readonly release: Nano;
  readonly finish: boolean;
  readonly expiresAt: Date;
}

export type BillingOp = ReserveOp | SettleOp | LeaseUpdateOp;

export type OpOutcome =
  | { readonly kind: 'reserved'; readonly reservation: Reservation; readonly balanceAfter: Nano }
  /** No currency fits; `blockedBy` names the first key limit that refused one whose balance did. */
  | { readonly kind: 'refused'; readonly blockedBy: LimitGroup | undefined }
  | { readonly kind: 'settled'; readonly charge: SettledCharge; readonly entries: readonly SettledUsageEntry[] }
  /** The reservation was no longer held (settled already, or released by the sweeper): settle off the hot path. */
  | { readonly kind: 'unheld' }
  /** A lease after its update: the amount it holds now, what it grew by, the balance after each call's charge. */
  | {
      readonly kind: 'lease';
      readonly amount: Nano;
      readonly grown: Nano;
      readonly balanceAfter: Nano;
      readonly balancesAfterCalls: readonly Nano[];
    };

export interface LockedBalance {
  readonly account_id: string;
  readonly currency: string;
  readonly amount: Nano;
  readonly reserved: Nano;
}

export interface LockedKeySpend {
  readonly api_key_id: string;
  readonly period_start: Date;
  readonly spent_usd: Nano;
  readonly reserved_usd: Nano;
  readonly spent_diem: Nano;
  readonly reserved_diem: Nano;
  readonly limit_usd: Nano | null;
  readonly limit_diem: Nano | null;
}

export interface ReservationInsert {
  readonly id: string;
  readonly accountId: string;
  readonly apiKeyId: string | null;
  readonly currency: Currency;
  readonly amount: Nano;
  readonly keyPeriodStart: Date | null;
  readonly limitGroup: LimitGroup;
  readonly requestId: string;
  readonly expiresAt: Date;
  readonly leaseHolder: string | null;
}

export interface LedgerInsert {
  readonly accountId: string;
  readonly currency: Currency;
  readonly amount: Nano;
  readonly balanceAfter: Nano;
  readonly requestId: string;
  readonly modelId: string | null;
  readonly createdAt: Date;
}

/** Changes to one row, as deltas (the rows are locked, so a delta and the value it was computed from agree). */
export interface BalanceChange {
  readonly accountId: string;
  readonly currency: Currency;
  amount: Nano;
  reserved: Nano;
}

export interface KeySpendChange {
  readonly apiKeyId: string;
  readonly periodStart: Date;
  spentUsd: Nano;
  reservedUsd: Nano;
  spentDiem: Nano;
  reservedDiem: Nano;
}

/** A held lease grown (positive) or shrunk (negative) by the batch. */
export interface LeaseAmountChange {
  readonly id: string;
  readonly delta: Nano;
}

export interface BatchPlan {
  readonly outcomes: OpOutcome[];
  readonly reservations: ReservationInsert[];
  readonly leaseChanges: LeaseAmountChange[];
  readonly ledger: LedgerInsert[];
  readonly balanceChanges: BalanceChange[];
  readonly keySpendChanges: KeySpendChange[];
}
