import { randomUUID } from 'node:crypto';
import type { AuthContext } from '../auth/auth-context.ts';
import type { Database } from '../db/database.ts';
import { ForbiddenError, InsufficientBalanceError, SpendLimitExceededError, ValidationError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import * as repo from './billing.repository.ts';
import {
  CHARGING_ORDER,
  limitGroupOf,
  priceIn,
  type BalanceSnapshot,
  type LimitGroup,
  type Price,
  type Reservation,
  type SettledCharge,
  type Usage,
  type UsageLine,
} from './billing.types.ts';
import { CURRENCIES, type Currency, type Nano } from './money.ts';
import { periodStart, utcDay } from './periods.ts';
import type { SettledUsageEntry, UsagePublisher } from './usage.types.ts';

export interface BillingOptions {
  readonly reservationTimeoutMs: number;
}

/**
 * The money core: reserve → settle → release against account balances and key period limits, the usage
 * ledger and its daily rollups. Talks to the billing repository; every change is one transaction.
 */
export class BillingService {
  /** `publisher` hears of new usage entries after their transaction commits (live usage subscriptions). */
  constructor(private readonly deps: { db: Database; logger: Logger; options: BillingOptions; publisher?: UsagePublisher }) {}

  /**
   * Holds the most a call can cost, in the first currency of the charging order whose balance and key limit
   * both cover it. Throws 402-class errors when none does.
   */
  async reserve(auth: AuthContext, maxCost: Price, options: { ttlMs?: number } = {}): Promise<Reservation> {
    if (auth.kind !== 'apiKey') throw new ForbiddenError('Only an account can be charged');
    if (maxCost.usd < 0n || maxCost.diem < 0n) throw new ValidationError('A cost cannot be negative');
    const now = new Date();
    const key = auth.apiKey;
    const keyPeriod = periodStart(key.limitPeriod, now);
    const expiresAt = new Date(now.getTime() + (options.ttlMs ?? this.deps.options.reservationTimeoutMs));
    const available = await repo.listBalances(this.deps.db, auth.accountId);
    const candidates = CHARGING_ORDER.filter((currency) => {
      const row = available.find((b) => b.currency === currency);
      return row !== undefined && row.amount - row.reserved >= priceIn(maxCost, currency);
    });
    if (candidates.length === 0) throw new InsufficientBalanceError();

    const outcome = await this.deps.db.transaction().execute(async (trx) => {
      await repo.ensureKeySpendRow(trx, key.id, keyPeriod);
      let blockedBy: LimitGroup | undefined;
      for (const currency of candidates) {
        const amount = priceIn(maxCost, currency);
        const group = limitGroupOf(currency);
        if (!(await repo.holdBalance(trx, auth.accountId, currency, amount))) continue;
        if (!(await repo.holdKeySpend(trx, key.id, keyPeriod, group, amount))) {
          await repo.unholdBalance(trx, auth.accountId, currency, amount);
          blockedBy ??= group;
          continue;
        }
        const id = await repo.insertReservation(trx, {
          accountId: auth.accountId,
          apiKeyId: key.id,
          currency,
          amount,
          keyPeriodStart: keyPeriod,
          limitGroup: group,
          requestId: auth.requestId,
          expiresAt,
        });
        const reservation: Reservation = { id, accountId: auth.accountId, apiKeyId: key.id, currency, amount, keyPeriodStart: keyPeriod, requestId: auth.requestId };
        return { reservation };
      }
      return { blockedBy };
    });
    if ('reservation' in outcome && outcome.reservation) return outcome.reservation;
    if (outcome.blockedBy) throw new SpendLimitExceededError(outcome.blockedBy);
    throw new InsufficientBalanceError();
  }

  /**
   * Charges the actual cost (capped at what was held), releases the rest, appends the usage entries and a
   * ledger entry, and updates the daily rollups, in one transaction. Settling twice charges once.
   */
  async settle(reservation: Reservation, usage: Usage): Promise<SettledCharge> {
    if (usage.lines.length === 0) throw new ValidationError('A usage record needs at least one line');
    const lineCharges = capLineCharges(usage.lines, reservation.currency, reservation.amount);
    const charged = lineCharges.reduce((sum, charge) => sum + charge, 0n);
    const createdAt = new Date();
    let settled: SettledUsageEntry[] = [];
    const outcome = await this.deps.db.transaction().execute(async (trx) => {
      const finished = await repo.finishReservation(trx, reservation.id, 'settled');
      let balanceAfter: Nano;
      if (finished) {
        balanceAfter = await repo.chargeBalance(trx, reservation.accountId, reservation.currency, charged, reservation.amount);
        if (reservation.apiKeyId && reservation.keyPeriodStart) {
          await repo.settleKeySpend(trx, reservation.apiKeyId, reservation.keyPeriodStart, limitGroupOf(reservation.currency), charged, reservation.amount);
        }
      } else {
        const current = await repo.getReservation(trx, reservation.id);
        if (current?.status === 'settled') {
          return { reservationId: reservation.id, currency: reservation.currency, charged: 0n, balanceAfter: 0n, usageEntryIds: [], alreadySettled: true };
        }
        // Released by the sweeper while the call was still running: charge now if the balance allows.
        const after = await repo.chargeIfAvailable(trx, reservation.accountId, reservation.currency, charged);
        if (after === undefined) {
          this.deps.logger.error({ reservationId: reservation.id, charged: charged.toString() }, 'late settlement could not be charged');
          await repo.finishReservation(trx, reservation.id, 'settled');
          return { reservationId: reservation.id, currency: reservation.currency, charged: 0n, balanceAfter: 0n, usageEntryIds: [], alreadySettled: false };
        }
        balanceAfter = after;
        if (reservation.apiKeyId && reservation.keyPeriodStart) {
          await repo.settleKeySpend(trx, reservation.apiKeyId, reservation.keyPeriodStart, limitGroupOf(reservation.currency), charged, 0n);
        }
      }
      const entries = usage.lines.map((line, index): repo.UsageEntryInsert => ({
        accountId: reservation.accountId,
        apiKeyId: reservation.apiKeyId,
        reservationId: reservation.id,
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
      const usageEntryIds = await repo.insertUsageEntries(trx, entries);
      settled = entries.map((entry, index) => ({ ...entry, id: usageEntryIds[index] ?? '' }));
      await repo.addToDailyRollups(trx, utcDay(createdAt), entries);
      if (charged > 0n) {
        await repo.insertLedgerEntry(trx, {
          accountId: reservation.accountId,
          currency: reservation.currency,
          amount: -charged,
          balanceAfter,
          type: 'CHARGE',
          requestId: reservation.requestId,
          modelId: usage.modelId ?? null,
          createdAt,
        });
      }
      return { reservationId: reservation.id, currency: reservation.currency, charged, balanceAfter, usageEntryIds, alreadySettled: false };
    });
    if (settled.length > 0 && this.deps.publisher) {
      try {
        this.deps.publisher.usageSettled(settled);
      } catch (error) {
        this.deps.logger.error({ err: error, reservationId: reservation.id }, 'publishing usage entries failed');
      }
    }
    return outcome;
  }

  /**
   * The paid-call pattern: hold `maxCost`, run the work, then settle the usage it reports; if the work throws,
   * the hold is released in full and nothing is charged. Every paid route goes through here.
   */
  async runMetered<T>(auth: AuthContext, spec: { maxCost: Price; run: (reservation: Reservation) => Promise<T>; usage: (result: T) => Usage }): Promise<{ result: T; charge: SettledCharge }> {
    const reservation = await this.reserve(auth, spec.maxCost);
    let result: T;
    try {
      result = await spec.run(reservation);
    } catch (error) {
      await this.release(reservation).catch((releaseError: unknown) => this.deps.logger.error({ err: releaseError, reservationId: reservation.id }, 'release failed; the sweeper will retry'));
      throw error;
    }
    const charge = await this.settle(reservation, spec.usage(result));
    return { result, charge };
  }

  /** Gives the whole hold back (the call failed before producing anything). Releasing twice is harmless. */
  async release(reservation: Pick<Reservation, 'id'>): Promise<boolean> {
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
  async credit(auth: AuthContext, input: { accountId: string; currency: Currency; amount: Nano; note?: string; type?: 'TOP_UP' | 'ADJUSTMENT' | 'REFUND' }) {
    if (auth.kind !== 'operator') throw new ForbiddenError('Only the operator can credit accounts');
    if (input.amount === 0n) throw new ValidationError('The amount must not be zero');
    try {
      return await this.deps.db.transaction().execute(async (trx) => {
        const balanceAfter = await repo.addToBalance(trx, input.accountId, input.currency, input.amount);
        if (balanceAfter === undefined) throw new ValidationError(`There is no ${input.currency} balance to debit`);
        const entry = await repo.insertLedgerEntry(trx, {
          accountId: input.accountId,
          currency: input.currency,
          amount: input.amount,
          balanceAfter,
          type: input.type ?? (input.amount > 0n ? 'TOP_UP' : 'ADJUSTMENT'),
          note: input.note ?? null,
          requestId: auth.requestId,
        });
        return { ledgerEntryId: entry.id, currency: input.currency, amount: input.amount, balanceAfter };
      });
    } catch (error) {
      if (error instanceof Error && /balance_covers_reservations|violates check constraint/.test(error.message)) {
        throw new ValidationError('That debit would take the balance below zero or below funds held for running requests');
      }
      throw error;
    }
  }

  /** Balances of every currency (zero where none was ever credited). */
  async balances(auth: AuthContext, accountId: string): Promise<BalanceSnapshot[]> {
    if (auth.kind === 'apiKey' ? auth.accountId !== accountId : auth.kind !== 'operator') throw new ForbiddenError('Not your account');
    return this.balancesOf(accountId);
  }

  /** For trusted callers that already checked ownership (other services, the operator CLI). */
  async balancesOf(accountId: string): Promise<BalanceSnapshot[]> {
    const rows = await repo.listBalances(this.deps.db, accountId);
    return CURRENCIES.map((currency) => {
      const row = rows.find((r) => r.currency === currency);
      return { currency, amount: row?.amount ?? 0n, reserved: row?.reserved ?? 0n };
    });
  }

  newRequestId(): string {
    return randomUUID().replaceAll('-', '');
  }
}

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
