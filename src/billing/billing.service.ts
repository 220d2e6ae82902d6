import { randomUUID } from 'node:crypto';
import type { AuthContext } from '../auth/auth-context.ts';
import type { Database } from '../db/database.ts';
import {
  AppError,
  ForbiddenError,
  InsufficientBalanceError,
  ValidationError,
  WalletTopUpRequiredError,
} from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { BillingMetrics } from '../observability/app-metrics.ts';
import type { CallLog } from '../observability/call-log.ts';
import type { LeaseCall } from './billing-ops.ts';
import * as repo from './billing.repository.ts';
import {
  priceIn,
  type BalanceSnapshot,
  type Price,
  type Reservation,
  type SettledCharge,
  type Usage,
  type UsageLine,
} from './billing.types.ts';
import type { Holds } from './holds.ts';
import { CURRENCIES, type Currency, type Nano } from './money.ts';
import { PaidCall, type PaidCallSteps } from './paid-call.ts';
import type { SettledUsageEntry } from './usage.types.ts';
import { annotate, inSpan, tracingOn } from '../observability/tracing.ts';

/**
 * What the billing service needs to know; the choice of holds is made where the services are wired (src/services.ts).
 */
export interface BillingOptions {
  readonly reservationTimeoutMs: number;
  /** A wallet caller needs at least this much free credit to start a call (LAGOON_X402_MIN_BALANCE_USD); default 0. */
  readonly walletMinimumBalance?: Nano;
}

/** The refusals the metrics count (a rate limit's is counted by the rate limiter). */
const REFUSALS: ReadonlySet<string> = new Set([
  'INSUFFICIENT_BALANCE',
  'PAYMENT_REQUIRED',
  'API_KEY_USD_SPEND_LIMIT_EXCEEDED',
  'API_KEY_DIEM_SPEND_LIMIT_EXCEEDED',
]);

/** Where the billing service reports: the app's metrics, and the log line of the request a call belongs to. */
export interface BillingObservers {
  readonly metrics?: BillingMetrics | undefined;
  readonly callLog?: CallLog | undefined;
}

/**
 * The money core, front door: validates and prices calls, then hands them to its Holds (holds.ts), which hold,
 * settle and release them. A charge goes one way only: BillingService → Holds (TransactionHolds, or LeasedHolds →
 * Lease and LeaseUpdates) → BatchWriter (batch-writer.ts, group commit) → the billing repositories; committed usage
 * entries are published by the holds. Funds added or removed (credit), balances and the sweeper are here too.
 */
export class BillingService {
  /** How calls are held and settled: per-call transactions, or balance leases. */
  readonly holds: Holds;

  constructor(
    private readonly deps: { db: Database; logger: Logger; options: BillingOptions; holds: Holds } & BillingObservers,
  ) {
    this.holds = deps.holds;
  }

  /**
   * Holds the most a call can cost, in the first currency of the charging order whose balance and key limit
   * both cover it. Throws 402-class errors when none does. Routes do not call this, `settle` or `release`
   * themselves: they spend through `paidCall`, which ends every hold it opens.
   */
  async reserve(
    auth: AuthContext,
    maxCost: Price,
    options: { ttlMs?: number; durable?: boolean } = {},
  ): Promise<Reservation> {
    try {
      const reservation = await this.hold(auth, maxCost, options);
      this.deps.metrics?.observeHolds(1);
      return reservation;
    } catch (error) {
      if (error instanceof AppError && REFUSALS.has(error.code)) this.deps.metrics?.observeRefusal(error.code);
      throw error;
    }
  }

  private async hold(
    auth: AuthContext,
    maxCost: Price,
    options: { ttlMs?: number; durable?: boolean },
  ): Promise<Reservation> {
    if (auth.kind !== 'apiKey' && auth.kind !== 'wallet') throw new ForbiddenError('Only an account can be charged');
    if (maxCost.usd < 0n || maxCost.diem < 0n) throw new ValidationError('A cost cannot be negative');
    const ttlMs = options.ttlMs ?? this.deps.options.reservationTimeoutMs;
    if (auth.kind === 'apiKey') return this.holds.reserve(auth, maxCost, ttlMs, { durable: options.durable });
    const minimumFree = this.deps.options.walletMinimumBalance ?? 0n;
    try {
      return await this.holds.reserve(auth, maxCost, ttlMs, { durable: options.durable, minimumFree });
    } catch (error) {
      // A wallet out of credit gets top-up instructions, not the key callers' 402.
      if (error instanceof InsufficientBalanceError)
        throw new WalletTopUpRequiredError(auth.accountId, auth.walletAddress);
      throw error;
    }
  }

  /**
   * Charges the actual cost (capped at what was held), releases the rest, appends the usage entries and a
   * ledger entry, and updates the daily rollups, in one transaction. Settling twice charges once.
   */
  async settle(reservation: Reservation, usage: Usage): Promise<SettledCharge> {
    if (usage.lines.length === 0) throw new ValidationError('A usage record needs at least one line');
    // Checked here, not by the database: a settlement written after the answer must not fail its whole batch.
    const badLine = usage.lines.find((line) => !DECIMAL.test(line.units) || !DECIMAL.test(line.pricePerUnitUsd));
    if (badLine)
      throw new ValidationError(`Usage line ${badLine.sku} needs units and a unit price as non-negative decimals`);
    const texts = [
      usage.modelId,
      usage.modelType,
      usage.unitType,
      usage.notes,
      usage.inferenceDetails?.requestId,
      reservation.requestId,
      ...usage.lines.flatMap((line) => [line.sku, line.lineType]),
    ];
    if (texts.some((text) => text?.includes('\0')))
      throw new ValidationError('A usage record cannot contain NUL characters');
    const lineCharges = capLineCharges(usage.lines, reservation.currency, reservation.amount);
    const charged = lineCharges.reduce((sum, charge) => sum + charge, 0n);
    const createdAt = new Date();
    const entries = usage.lines.map((line, index): SettledUsageEntry => ({
      id: randomUUID(),
      accountId: reservation.accountId,
      apiKeyId: reservation.apiKeyId,
      reservationId: reservation.leaseId ?? reservation.id,
      createdAt,
      sku: line.sku,
      modelId: usage.modelId ?? null,
      modelType: usage.modelType ?? null,
      unitType: usage.unitType ?? null,
      lineType: line.lineType ?? null,
      pricePerUnitUsd: line.pricePerUnitUsd,
      units: line.units,
      amount: -(lineCharges[index] ?? 0n),
      currency: reservation.currency,
      notes: usage.notes ?? '',
      requestId: usage.inferenceDetails?.requestId ?? reservation.requestId,
      inferenceDetails: usage.inferenceDetails ? { ...usage.inferenceDetails } : null,
    }));
    const call: LeaseCall = {
      charged,
      entries,
      requestId: reservation.requestId,
      modelId: usage.modelId ?? null,
      createdAt,
    };
    const charge = await this.holds.settle(reservation, call);
    if (!charge.alreadySettled) {
      this.deps.metrics?.observeHolds(-1);
      this.deps.metrics?.observeSettlement(usage, charge.currency, charge.charged);
      this.deps.callLog?.settled(reservation, usage, charge);
    }
    return charge;
  }

  /**
   * Every paid route goes through here: holds `maxCost`, runs the work with the open call, and releases the hold in
   * full when the work ends without settling it (it threw, the caller went away, it charged nothing), unless the
   * work handed the call off to an owner that outlives it (a stream). 402-class errors before the work runs when
   * no currency covers the hold.
   */
  async paidCall<T>(
    auth: AuthContext,
    maxCost: Price,
    work: (call: PaidCall) => Promise<T>,
    options: { ttlMs?: number; durable?: boolean } = {},
  ): Promise<T> {
    const reservation = tracingOn()
      ? await inSpan('billing hold', undefined, async (span) => {
          const held = await this.reserve(auth, maxCost, options);
          annotate(span, { 'lagoon.billing.currency': held.currency });
          return held;
        })
      : await this.reserve(auth, maxCost, options);
    const call = this.resume(reservation, options.ttlMs);
    try {
      return await work(call);
    } finally {
      if (!call.handedOff) await call.release();
    }
  }

  /** The simplest paid call: run the work, then settle the usage it reports (released if either throws). */
  async runMetered<T>(
    auth: AuthContext,
    spec: { maxCost: Price; run: () => Promise<T>; usage: (result: T) => Usage },
  ): Promise<{ result: T; charge: SettledCharge }> {
    return this.paidCall(auth, spec.maxCost, async (call) => {
      const result = await spec.run();
      return { result, charge: await call.settle(spec.usage(result)) };
    });
  }

  /**
   * A paid call on a hold opened earlier and stored with its work (a queued job's durable hold), to keep it alive,
   * settle it or release it from whichever process runs the work.
   */
  resume(reservation: Reservation, ttlMs = this.deps.options.reservationTimeoutMs): PaidCall {
    return new PaidCall(reservation, { steps: this.steps, logger: this.deps.logger, ttlMs });
  }

  private readonly steps: PaidCallSteps = {
    settle: (reservation, usage) => this.settle(reservation, usage),
    release: (reservation) => this.release(reservation),
    extend: (reservation, ttlMs) => this.holds.extend(reservation, ttlMs),
  };

  /** Gives the whole hold back (the call failed before producing anything). Releasing twice is harmless. */
  async release(reservation: Pick<Reservation, 'id' | 'leaseId'>): Promise<boolean> {
    const released = await this.holds.release(reservation);
    if (released) this.deps.metrics?.observeHolds(-1);
    return released;
  }

  /** Releases reservations whose call never settled (a crash, a lost worker). Returns how many. */
  async sweepExpired(now = new Date(), batchSize = 100): Promise<number> {
    let released = 0;
    for (;;) {
      const ids = await repo.listExpiredReservationIds(this.deps.db, now, batchSize);
      for (const id of ids) if (await this.release({ id })) released += 1;
      if (ids.length < batchSize) break;
    }
    if (released > 0) this.deps.logger.warn({ released }, 'released expired reservations');
    return released;
  }

  /** Adds (or, negative, removes) funds. Operator only; a removal never takes a balance below what is held. */
  async credit(
    auth: AuthContext,
    input: {
      accountId: string;
      currency: Currency;
      amount: Nano;
      note?: string;
      type?: 'TOP_UP' | 'ADJUSTMENT' | 'REFUND';
    },
  ) {
    if (auth.kind !== 'operator') throw new ForbiddenError('Only the operator can credit accounts');
    if (input.amount === 0n) throw new ValidationError('The amount must not be zero');
    // A debit may need funds this process holds in leases and no call uses.
    if (input.amount < 0n) await this.holds.reclaim(input.accountId);
    try {
      return await this.deps.db.transaction().execute(async (trx) => {
        const balanceAfter = await repo.addToBalance(trx, input.accountId, input.currency, input.amount);
        if (balanceAfter === undefined)
          throw new ValidationError(
            `There is no ${input.currency} balance that covers this debit beside the funds held`,
          );
        const entry = await repo.insertLedgerEntry(trx, {
          accountId: input.accountId,
          currency: input.currency,
          amount: input.amount,
          balanceAfter,
          type: input.type ?? (input.amount > 0n ? 'TOP_UP' : 'ADJUSTMENT'),
          note: input.note ?? null,
          requestId: auth.requestId,
          operatorTokenId: auth.operatorToken?.id ?? null,
        });
        return { ledgerEntryId: entry.id, currency: input.currency, amount: input.amount, balanceAfter };
      });
    } catch (error) {
      if (error instanceof Error && /balance_covers_reservations|violates check constraint/.test(error.message)) {
        throw new ValidationError(
          'That debit would take the balance below zero or below funds held for running requests',
        );
      }
      throw error;
    }
  }

  /** Balances of every currency (zero where none was ever credited). */
  async balances(auth: AuthContext, accountId: string): Promise<BalanceSnapshot[]> {
    if (auth.kind === 'apiKey' || auth.kind === 'wallet' ? auth.accountId !== accountId : auth.kind !== 'operator')
      throw new ForbiddenError('Not your account');
    return this.balancesOf(accountId);
  }

  /** For trusted callers that already checked ownership (other services, the operator CLI). */
  async balancesOf(accountId: string): Promise<BalanceSnapshot[]> {
    await this.flush(accountId);
    const rows = await repo.listBalances(this.deps.db, accountId);
    // What this process's leases hold and no call uses is not held for anyone: it is shown as available.
    const unused = this.holds.unusedHeld(accountId);
    return CURRENCIES.map((currency) => {
      const row = rows.find((r) => r.currency === currency);
      const reserved = (row?.reserved ?? 0n) - (unused.get(currency) ?? 0n);
      return { currency, amount: row?.amount ?? 0n, reserved: reserved > 0n ? reserved : 0n };
    });
  }

  /** Waits until the charges settled so far (of one account, or all) are written: reads of usage call this first. */
  async flush(accountId?: string): Promise<void> {
    await this.holds.flush(accountId);
  }

  /** Writes pending charges and gives back this process's leases (shutdown). */
  async close(): Promise<void> {
    await this.holds.close();
  }
}

/** A non-negative decimal as PostgreSQL's numeric reads it (units and unit prices of usage lines). */
const DECIMAL = /^\d{1,40}(\.\d{1,40})?$/;

/** Per-line charges in the reserved currency, trimmed from the last line so their sum never exceeds the hold. */
function capLineCharges(lines: readonly UsageLine[], currency: Currency, held: Nano): Nano[] {
  let room = held;
  return lines.map((line) => {
    const cost = priceIn(line.cost, currency);
    if (cost < 0n) throw new ValidationError('A usage line cannot have a negative cost');
    const charge = cost < room ? cost : room;
    room -= charge;
    return charge;
  });
}
