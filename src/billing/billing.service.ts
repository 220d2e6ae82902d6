import { randomUUID } from 'node:crypto';
import type { AuthContext } from '../auth/auth-context.ts';
import type { Transaction } from 'kysely';
import { transactionCommitted } from '../db/commit-status.ts';
import type { Database } from '../db/database.ts';
import { isConnectionLost } from '../db/errors.ts';
import type { DB } from '../db/types.generated.ts';
import { ForbiddenError, InsufficientBalanceError, SpendLimitExceededError, ValidationError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import {
  accountsOf,
  entriesOf,
  firstSettles,
  keySpendRowsOf,
  leaseUpdatesOf,
  missingReserveRows,
  planBatch,
  settleWinners,
  type BillingOp,
  type LeaseCall,
  type OpOutcome,
  type ReserveOp,
  type SettleOp,
} from './billing-batch.ts';
import * as batchRepo from './billing-batch.repository.ts';
import * as repo from './billing.repository.ts';
import {
  limitGroupOf,
  priceIn,
  type BalanceSnapshot,
  type Price,
  type Reservation,
  type SettledCharge,
  type Usage,
  type UsageLine,
} from './billing.types.ts';
import { GroupCommitQueue, type ItemOutcome } from './group-commit.ts';
import { LeaseManager, type LeaseUpdateRequest } from './lease-manager.ts';
import type { LeaseOptions } from './lease-options.ts';
import { CURRENCIES, type Currency, type Nano } from './money.ts';
import { periodStart, utcDay } from './periods.ts';
import { releaseOrLog } from './release-or-log.ts';
import type { SettledUsageEntry, UsagePublisher } from './usage.types.ts';

export interface BillingOptions {
  readonly reservationTimeoutMs: number;
  /**
   * How many batches of reserve and settle calls may run at once (default 1: on two cores fewer, larger batches
   * serve more calls per second, also spread over many accounts). An account always goes to the same lane, so its
   * calls never run in two transactions at once; batches of different lanes never touch the same rows.
   */
  readonly batchLanes?: number;
  /**
   * Balance leases (lease-manager.ts): calls draw their holds in memory and their settlements are written after the
   * answer. Without it every call holds and settles in the database before it returns (two transactions per call).
   */
  readonly leases?: LeaseOptions & {
    /** Asks other processes to give back unused leases on an account; resolves whether it is worth retrying. */
    readonly reclaimElsewhere?: (accountId: string) => Promise<boolean>;
    /** This process's name on its lease rows. */
    readonly holder?: string;
  };
}

/**
 * The money core: reserve → settle → release against account balances and key period limits, the usage
 * ledger and its daily rollups. Talks to the billing repositories; every change is one transaction. Reserve and
 * settle, the hot path, run in batches (group commit): calls that arrive while the previous batch of their lane is
 * committing share the next transaction (one round of statements and one WAL flush for all), decided in the same
 * order and with the same checks as one call at a time.
 */
export class BillingService {
  /** Reserve and settle calls, grouped into one transaction per batch; an account's lane is fixed by its id. */
  private readonly hotPath = new GroupCommitQueue<BillingOp | LeaseUpdateRequest, OpOutcome>((_lane, items) =>
    this.runItems(items),
  );
  /** This process's balance leases, when enabled. */
  readonly leases: LeaseManager | undefined;

  /** `publisher` hears of new usage entries after their transaction commits (live usage subscriptions). */
  constructor(
    private readonly deps: { db: Database; logger: Logger; options: BillingOptions; publisher?: UsagePublisher },
  ) {
    const leases = deps.options.leases;
    this.leases = leases
      ? new LeaseManager({
          submit: (accountId, op) => this.hotPath.submit(this.laneOf(accountId), op),
          chargeUnheld: async (lease, call) =>
            this.publish((await this.chargeWithoutHold(lease, call)).entries, lease.id),
          committed: (entries) => this.publish(entries, entries[0]?.reservationId ?? ''),
          reclaimElsewhere: leases.reclaimElsewhere ?? (async () => false),
          logger: deps.logger,
          holder: leases.holder ?? randomUUID(),
          options: leases,
        })
      : undefined;
  }

  /**
   * Holds the most a call can cost, in the first currency of the charging order whose balance and key limit
   * both cover it. Throws 402-class errors when none does.
   */
  async reserve(auth: AuthContext, maxCost: Price, options: { ttlMs?: number } = {}): Promise<Reservation> {
    if (auth.kind !== 'apiKey') throw new ForbiddenError('Only an account can be charged');
    if (maxCost.usd < 0n || maxCost.diem < 0n) throw new ValidationError('A cost cannot be negative');
    const ttlMs = options.ttlMs ?? this.deps.options.reservationTimeoutMs;
    if (this.leases) return this.leases.draw(auth, maxCost, ttlMs);
    const now = new Date();
    const op: ReserveOp = {
      kind: 'reserve',
      accountId: auth.accountId,
      apiKeyId: auth.apiKey.id,
      keyPeriodStart: periodStart(auth.apiKey.limitPeriod, now),
      maxCost,
      requestId: auth.requestId,
      expiresAt: new Date(now.getTime() + ttlMs),
    };
    const outcome = await this.hotPath.submit(this.laneOf(auth.accountId), op);
    if (outcome.kind === 'reserved') return outcome.reservation;
    if (outcome.kind === 'refused' && outcome.blockedBy) throw new SpendLimitExceededError(outcome.blockedBy);
    throw new InsufficientBalanceError();
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
    if (reservation.leaseId && this.leases) {
      const call: LeaseCall = {
        charged,
        entries,
        requestId: reservation.requestId,
        modelId: usage.modelId ?? null,
        createdAt,
      };
      // When its lease is gone (the process stopped, or stalled past the lease's expiry), charged if the balance allows.
      const charge = this.leases.settle(reservation, call, () => this.chargeWithoutHold(reservation, call));
      if (!(charge instanceof Promise)) return charge;
      const direct = await charge;
      this.publish(direct.entries, reservation.id);
      return direct.charge;
    }
    const op: SettleOp = { kind: 'settle', reservation, charged, entries, modelId: usage.modelId ?? null, createdAt };
    const outcome = await this.hotPath.submit(this.laneOf(reservation.accountId), op);
    if (outcome.kind === 'settled') {
      this.publish(outcome.entries, reservation.id);
      return outcome.charge;
    }
    const late = await this.settleUnheld(op);
    this.publish(late.entries, reservation.id);
    return late.charge;
  }

  /** A batch's items: lease updates are taken when it starts and applied when it ends, before the next one starts. */
  private async runItems(items: readonly (BillingOp | LeaseUpdateRequest)[]): Promise<ItemOutcome<OpOutcome>[]> {
    const ops = items.map((item) => (item.kind === 'lease-update' ? item.take() : item));
    let outcomes: ItemOutcome<OpOutcome>[];
    try {
      outcomes = await this.runBatch(ops);
    } catch (error) {
      outcomes = ops.map(() => ({ ok: false, error }));
    }
    items.forEach((item, index) => {
      if (item.kind === 'lease-update')
        item.finished(
          outcomes[index] ?? { ok: false, error: new Error('The batch returned no outcome for this update') },
        );
    });
    return outcomes;
  }

  /** Account ids are random UUIDs: their last hex digits spread accounts evenly over the lanes. */
  private laneOf(accountId: string): string {
    return String(Number.parseInt(accountId.slice(-4), 16) % (this.deps.options.batchLanes ?? 1));
  }

  /**
   * One batch of reserve and settle calls, in one transaction of four round trips whatever its size: BEGIN; one
   * statement that claims the settled reservations, records their usage and locks the balance and key spend rows;
   * the decisions, in memory (billing-batch.ts); one statement that writes them; COMMIT.
   */
  private async runBatch(ops: readonly BillingOp[]): Promise<ItemOutcome<OpOutcome>[]> {
    const decided: { xid?: string; outcomes?: OpOutcome[] } = {};
    try {
      const outcomes = await this.deps.db.transaction().execute(async (trx) => {
        const candidates = firstSettles(ops);
        const spendRows = keySpendRowsOf(ops);
        const locks = await batchRepo.claimAndLock(
          trx,
          accountsOf(ops),
          entriesOf(ops, candidates),
          spendRows,
          leaseUpdatesOf(ops),
        );
        let spends = locks.spends;
        const missing = missingReserveRows(ops, spends);
        if (missing.length > 0) {
          // A key's first reservation of a period: create its row, then lock it like the others.
          await batchRepo.ensureKeySpendRows(trx, missing);
          spends = await batchRepo.lockKeySpend(trx, spendRows);
        }
        const winners = settleWinners(ops, candidates, locks.claimed);
        const plan = planBatch(ops, winners, locks.balances, spends, locks.leases);
        await batchRepo.writeBatch(trx, plan);
        decided.xid = locks.xid;
        decided.outcomes = plan.outcomes;
        return plan.outcomes;
      });
      return outcomes.map((value) => ({ ok: true, value }));
    } catch (error) {
      // The connection broke during COMMIT: the batch may be written. Sent again, its lease charges would be
      // charged twice, and given up, lost; so the database is asked what became of it.
      if (decided.xid && decided.outcomes && isConnectionLost(error)) {
        const committed = await transactionCommitted(this.deps.db, decided.xid);
        this.deps.logger.warn(
          { calls: ops.length, committed: committed ?? 'unknown' },
          'the connection was lost during a billing batch commit',
        );
        if (committed) return decided.outcomes.map((value) => ({ ok: true, value }));
        // Unknown (the database stayed away): sent again below and later, a lease update already written is
        // refused (its usage entries exist), so it is never charged twice.
      }
      if (ops.length === 1) return [{ ok: false, error }];
      // Nothing of the batch was written; run each call alone so that one call's failure stays its own.
      this.deps.logger.warn({ err: error, calls: ops.length }, 'billing batch failed; running its calls one by one');
      const alone: ItemOutcome<OpOutcome>[] = [];
      for (const op of ops) alone.push(...(await this.runBatch([op])));
      return alone;
    }
  }

  /**
   * A settlement whose reservation was not held any more: either it was settled already (nothing to do) or the
   * sweeper released it while the call was still running, and then the charge is taken if the balance allows.
   */
  private async settleUnheld(op: SettleOp): Promise<{ charge: SettledCharge; entries: readonly SettledUsageEntry[] }> {
    const { reservation } = op;
    return this.deps.db.transaction().execute(async (trx) => {
      // released → settled, so that a second late settlement finds it settled and charges nothing.
      const claimed = await repo.finishReservation(trx, reservation.id, 'settled', 'released');
      if (!claimed) {
        const status = await repo.reservationStatus(trx, reservation.id);
        if (status !== 'settled')
          throw new Error(`Reservation ${reservation.id} cannot be settled (status ${status ?? 'missing'})`);
        return {
          charge: {
            reservationId: reservation.id,
            currency: reservation.currency,
            charged: 0n,
            balanceAfter: 0n,
            usageEntryIds: [],
            alreadySettled: true,
          },
          entries: [],
        };
      }
      return this.chargeIn(trx, reservation, {
        charged: op.charged,
        entries: op.entries,
        requestId: reservation.requestId,
        modelId: op.modelId,
        createdAt: op.createdAt,
      });
    });
  }

  /** Charges a call whose hold is gone, in its own transaction, if the balance allows. */
  private chargeWithoutHold(
    held: Reservation,
    call: LeaseCall,
  ): Promise<{ charge: SettledCharge; entries: readonly SettledUsageEntry[] }> {
    return this.deps.db.transaction().execute((trx) => this.chargeIn(trx, held, call));
  }

  /**
   * Charges a call whose hold is gone; when the balance no longer covers it, the charge is recorded as debt (the
   * balance goes negative, which refuses new calls until a top-up) rather than dropped.
   */
  private async chargeIn(
    trx: Transaction<DB>,
    held: Reservation,
    call: LeaseCall,
  ): Promise<{ charge: SettledCharge; entries: readonly SettledUsageEntry[] }> {
    const { charged } = call;
    let balanceAfter = await repo.chargeIfAvailable(trx, held.accountId, held.currency, charged);
    if (balanceAfter === undefined) {
      balanceAfter = await repo.chargeAsDebt(trx, held.accountId, held.currency, charged);
      if (balanceAfter === undefined)
        throw new Error(`Account ${held.accountId} has no ${held.currency} balance to charge`);
      this.deps.logger.warn(
        {
          reservationId: held.id,
          accountId: held.accountId,
          charged: charged.toString(),
          balanceAfter: balanceAfter.toString(),
        },
        'a late settlement exceeded the balance; recorded as debt',
      );
      // This process's leases on the account lend no more: the account is refused until it is topped up.
      const leases = this.leases;
      if (leases) setImmediate(() => void leases.reclaim(held.accountId).catch(() => undefined));
    }
    if (held.apiKeyId && held.keyPeriodStart) {
      await repo.settleKeySpend(trx, held.apiKeyId, held.keyPeriodStart, limitGroupOf(held.currency), charged, 0n);
    }
    await repo.insertUsageEntries(trx, call.entries);
    await repo.addToDailyRollups(trx, utcDay(call.createdAt), call.entries);
    if (charged > 0n) {
      await repo.insertLedgerEntry(trx, {
        accountId: held.accountId,
        currency: held.currency,
        amount: -charged,
        balanceAfter,
        type: 'CHARGE',
        requestId: call.requestId,
        modelId: call.modelId,
        createdAt: call.createdAt,
      });
    }
    const charge: SettledCharge = {
      reservationId: held.id,
      currency: held.currency,
      charged,
      balanceAfter,
      usageEntryIds: call.entries.map((entry) => entry.id),
      alreadySettled: false,
    };
    return { charge, entries: call.entries };
  }

  /** Tells live subscribers about committed usage entries; a failure here never fails the settlement. */
  private publish(entries: readonly SettledUsageEntry[], reservationId: string): void {
    if (entries.length === 0 || !this.deps.publisher) return;
    try {
      this.deps.publisher.usageSettled(entries);
    } catch (error) {
      this.deps.logger.error({ err: error, reservationId }, 'publishing usage entries failed');
    }
  }

  /**
   * The paid-call pattern: hold `maxCost`, run the work, then settle the usage it reports; if the work throws,
   * the hold is released in full and nothing is charged. Every paid route goes through here.
   */
  async runMetered<T>(
    auth: AuthContext,
    spec: { maxCost: Price; run: (reservation: Reservation) => Promise<T>; usage: (result: T) => Usage },
  ): Promise<{ result: T; charge: SettledCharge }> {
    const reservation = await this.reserve(auth, spec.maxCost);
    let result: T;
    try {
      result = await spec.run(reservation);
    } catch (error) {
      await releaseOrLog(this, reservation, this.deps.logger);
      throw error;
    }
    const charge = await this.settle(reservation, spec.usage(result));
    return { result, charge };
  }

  /**
   * Keeps a long call's hold (a stream) from being released as timed out while it runs: its expiry is moved forward
   * every quarter of the reservation timeout until `stop` (called when the call settles or releases).
   */
  keepHeld(reservation: Reservation): { stop: () => void } {
    const ttlMs = this.deps.options.reservationTimeoutMs;
    const timer = setInterval(
      () => {
        if (reservation.leaseId && this.leases) {
          if (!this.leases.extend(reservation, ttlMs)) clearInterval(timer);
          return;
        }
        repo.extendReservation(this.deps.db, reservation.id, new Date(Date.now() + ttlMs)).then(
          (held) => held || clearInterval(timer),
          (error: unknown) =>
            this.deps.logger.warn({ err: error, reservationId: reservation.id }, 'extending a hold failed; retrying'),
        );
      },
      Math.max(50, ttlMs / 4),
    );
    timer.unref();
    return { stop: () => clearInterval(timer) };
  }

  /** Gives the whole hold back (the call failed before producing anything). Releasing twice is harmless. */
  async release(reservation: Pick<Reservation, 'id' | 'leaseId'>): Promise<boolean> {
    if (reservation.leaseId && this.leases) return this.leases.release(reservation);
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
    if (input.amount < 0n) await this.leases?.reclaim(input.accountId);
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
    if (auth.kind === 'apiKey' ? auth.accountId !== accountId : auth.kind !== 'operator')
      throw new ForbiddenError('Not your account');
    return this.balancesOf(accountId);
  }

  /** For trusted callers that already checked ownership (other services, the operator CLI). */
  async balancesOf(accountId: string): Promise<BalanceSnapshot[]> {
    await this.flush(accountId);
    const rows = await repo.listBalances(this.deps.db, accountId);
    // What this process's leases hold and no call uses is not held for anyone: it is shown as available.
    const unused = this.leases?.unusedHeld(accountId);
    return CURRENCIES.map((currency) => {
      const row = rows.find((r) => r.currency === currency);
      const reserved = (row?.reserved ?? 0n) - (unused?.get(currency) ?? 0n);
      return { currency, amount: row?.amount ?? 0n, reserved: reserved > 0n ? reserved : 0n };
    });
  }

  /** Waits until the charges settled so far (of one account, or all) are written: reads of usage call this first. */
  async flush(accountId?: string): Promise<void> {
    await this.leases?.flush(accountId);
  }

  /** Writes pending charges and gives back this process's leases (shutdown). */
  async close(): Promise<void> {
    await this.leases?.close();
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
