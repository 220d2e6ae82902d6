import { keyOf, type AccountAuthContext } from '../auth/auth-context.ts';
import type { Database } from '../db/database.ts';
import { InsufficientBalanceError, SpendLimitExceededError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { BatchWriter, DirectCharge } from './batch-writer.ts';
import type { LeaseCall, ReserveOp, SettleOp } from './billing-ops.ts';
import * as repo from './billing.repository.ts';
import { limitGroupOf, type Price, type Reservation, type SettledCharge } from './billing.types.ts';
import type { Currency, Nano } from './money.ts';
import { periodStart } from './periods.ts';
import type { SettledUsageEntry, UsagePublisher } from './usage.types.ts';

/**
 * How a call's worst case is held while it runs and its charge settled after. Two ways (src/services.ts picks one):
 * per-call transactions (TransactionHolds, below), or balance leases (LeasedHolds, leased-holds.ts) that draw holds in
 * memory and write the charges after the answer. Both write through the batch writer (batch-writer.ts).
 */
export interface Holds {
  /**
   * Holds `maxCost` for a call until `ttlMs` from now; 402-class errors when no currency covers it. `durable`: a
   * reservation row in the database, never a draw on this process's lease (any process may settle it).
   */
  reserve(auth: AccountAuthContext, maxCost: Price, ttlMs: number, options?: ReserveOptions): Promise<Reservation>;
  /** Charges a call (at most its hold) and gives the rest back. Settling twice charges once. */
  settle(reservation: Reservation, call: LeaseCall): Promise<SettledCharge>;
  /** Gives the whole hold back; false when it was not held any more. */
  release(reservation: Pick<Reservation, 'id' | 'leaseId'>): Promise<boolean>;
  /** Moves a running call's timeout `ttlMs` from now; false once it is not held any more. */
  extend(reservation: Reservation, ttlMs: number): Promise<boolean>;
  /** Waits until the charges settled so far (of one account, or all) are written. */
  flush(accountId?: string): Promise<void>;
  /** What this process holds on an account and no running call uses, per currency. */
  unusedHeld(accountId: string): ReadonlyMap<Currency, Nano>;
  /** Gives back what this process holds on an account and does not use; resolves whether it held any. */
  reclaim(accountId: string): Promise<boolean>;
  /** Forgets what was decided under a key's old limits (the key changed or was deleted). */
  closeKey(apiKeyId: string): void;
  /** Writes pending charges and gives back what is held (shutdown). */
  close(): Promise<void>;
}

export interface ReserveOptions {
  /** A reservation row in the database, never a draw on this process's lease (any process may settle it). */
  readonly durable?: boolean;
  /** A wallet caller's minimum balance: the free funds must reach it as well as cover the hold. */
  readonly minimumFree?: Nano;
}

/** The key-related and currency fields of a reserve op for a caller: its key and period, or a wallet's USD only. */
export function payerFields(
  auth: AccountAuthContext,
  now: Date,
  minimumFree?: Nano,
): Pick<ReserveOp, 'apiKeyId' | 'keyPeriodStart' | 'currencies' | 'minimumFree'> {
  const key = keyOf(auth);
  if (key) return { apiKeyId: key.id, keyPeriodStart: periodStart(key.limitPeriod, now) };
  return { apiKeyId: null, keyPeriodStart: null, currencies: WALLET_CURRENCIES, ...(minimumFree && { minimumFree }) };
}

/** Wallet callers pay USD from their credit. */
const WALLET_CURRENCIES: readonly Currency[] = ['USD'];

/** Tells live subscribers about committed usage entries; a failure here never fails the settlement. */
export function publishEntries(
  deps: { publisher?: UsagePublisher; logger: Logger },
  entries: readonly SettledUsageEntry[],
  reservationId: string,
): void {
  if (entries.length === 0 || !deps.publisher) return;
  try {
    deps.publisher.usageSettled(entries);
  } catch (error) {
    deps.logger.error({ err: error, reservationId }, 'publishing usage entries failed');
  }
}

/**
 * Per-call transactions: every call holds and settles in the database before it returns (two transactions per
 * call, shared with the calls that arrive meanwhile through the writer's batches).
 */
export class TransactionHolds implements Holds {
  constructor(
    private readonly deps: { db: Database; writer: BatchWriter; logger: Logger; publisher?: UsagePublisher },
  ) {}

  async reserve(
    auth: AccountAuthContext,
    maxCost: Price,
    ttlMs: number,
    options: ReserveOptions = {},
  ): Promise<Reservation> {
    const now = new Date();
    const op: ReserveOp = {
      kind: 'reserve',
      accountId: auth.accountId,
      ...payerFields(auth, now, options.minimumFree),
      maxCost,
      requestId: auth.requestId,
      expiresAt: new Date(now.getTime() + ttlMs),
    };
    const outcome = await this.deps.writer.submit(auth.accountId, op);
    if (outcome.kind === 'reserved') return outcome.reservation;
    if (outcome.kind === 'refused' && outcome.blockedBy) throw new SpendLimitExceededError(outcome.blockedBy);
    throw new InsufficientBalanceError();
  }

  async settle(reservation: Reservation, call: LeaseCall): Promise<SettledCharge> {
    const op: SettleOp = { kind: 'settle', reservation, ...call };
    const outcome = await this.deps.writer.submit(reservation.accountId, op);
    const settled: Omit<DirectCharge, 'debt'> =
      outcome.kind === 'settled' ? outcome : await this.deps.writer.settleLate(op);
    publishEntries(this.deps, settled.entries, reservation.id);
    return settled.charge;
  }

  release(reservation: Pick<Reservation, 'id'>): Promise<boolean> {
    return this.deps.db.transaction().execute(async (trx) => {
      const row = await repo.finishReservation(trx, reservation.id, 'released');
      if (!row) return false;
      const currency = row.currency as Currency;
      await repo.unholdBalance(trx, row.account_id, currency, row.amount);
      if (row.api_key_id && row.key_period_start) {
        await repo.settleKeySpend(trx, row.api_key_id, row.key_period_start, limitGroupOf(currency), 0n, row.amount);
      }
      return true;
    });
  }

  extend(reservation: Pick<Reservation, 'id'>, ttlMs: number): Promise<boolean> {
    return repo.extendReservation(this.deps.db, reservation.id, new Date(Date.now() + ttlMs));
  }

  async flush(): Promise<void> {}

  unusedHeld(): ReadonlyMap<Currency, Nano> {
    return new Map();
  }

  async reclaim(): Promise<boolean> {
    return false;
  }

  closeKey(): void {}

  async close(): Promise<void> {}
}
